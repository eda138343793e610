import { describe, expect, it } from "vitest";
import { fakeSignInContext } from "../../../../test/support/sign-in-context";
import type { InteractionContext } from "../interaction";
import { finishConfirmedElsewhere, magicLink, signInWithMagicLink } from "./magic-link";

/**
 * What a magic link decides, without a server: a token of the wrong size is refused before
 * anything is looked up, and the asking browser finishes a sign-in another browser confirmed
 * only once, only at a login prompt, only for an active user of the same organization.
 */
const meta = { ip: "203.0.113.9", requestId: null };
const ic = (prompt = "login") => ({ uid: "uid-1", organization: { id: "org-1" }, client: { id: "client-1" }, interaction: { prompt: { name: prompt } } }) as unknown as InteractionContext;

function context(confirmed: string | null, user: { status: string; organizationId: string } | null) {
  const taken: string[] = [];
  const { ctx, recorded } = fakeSignInContext({
    db: { user: { findUnique: async () => user } },
    store: { take: async (key: string) => (taken.push(key), confirmed) },
  });
  return { ctx: ctx as never, recorded, taken };
}

describe("the magic-link first factor", () => {
  it("is the login method magic_link", () => {
    expect(magicLink).toMatchObject({ kind: "first", method: "magic_link" });
  });

  it("refuses a token of the wrong size before looking anything up", async () => {
    const { ctx, recorded } = fakeSignInContext({});
    for (const token of ["short", "x".repeat(101)]) {
      expect(await signInWithMagicLink({ ...ctx, prove: null } as never, { token, organizationSlug: "org", interactionUid: "uid-1", at: null, meta })).toEqual({ status: "invalid" });
    }
    expect(recorded.transactions).toEqual([]);
  });

  it("the asking browser finishes a confirmed sign-in once, proving the confirmed user", async () => {
    const { ctx, recorded, taken } = context("user-1", { status: "active", organizationId: "org-1" });
    expect(await finishConfirmedElsewhere(ctx, { at: ic(), meta })).toBe("https://app.test/resume");
    expect(taken).toHaveLength(1);
    expect(recorded.transactions[0]).toMatchObject({ actor: { type: "user", id: "user-1" }, proof: { userId: "user-1" } });
  });

  it("finishes nothing without a confirmation, at another prompt, or for an inactive or foreign user", async () => {
    expect(await finishConfirmedElsewhere(context(null, null).ctx, { at: ic(), meta })).toBeNull();
    const consent = context("user-1", { status: "active", organizationId: "org-1" });
    expect(await finishConfirmedElsewhere(consent.ctx, { at: ic("consent"), meta })).toBeNull();
    expect(consent.taken).toEqual([]);
    expect(await finishConfirmedElsewhere(context("user-1", { status: "inactive", organizationId: "org-1" }).ctx, { at: ic(), meta })).toBeNull();
    const foreign = context("user-1", { status: "active", organizationId: "org-2" });
    expect(await finishConfirmedElsewhere(foreign.ctx, { at: ic(), meta })).toBeNull();
    expect(foreign.recorded.transactions).toEqual([]);
  });
});
