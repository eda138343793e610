import { describe, expect, it } from "vitest";
import { fakeLimits, fakeSignInContext } from "../../../../test/support/sign-in-context";
import type { InteractionContext } from "../interaction";
import type { PendingSecondFactor } from "../pending";
import { enrollPasskeyAtSignIn, passkeyEnrollmentDue, passkeySecondFactor, verifyPasskeySecondFactor } from "./passkey-second-factor";

/** When a passkey is offered at the step, and what a credential that is not one does there, without a server. */
const ic = { uid: "uid-1", organization: { id: "org-1", name: "Org" }, client: { id: "client-1" } } as unknown as InteractionContext;
const meta = { ip: "203.0.113.9", requestId: null };
const pending = (methods: PendingSecondFactor["plan"]["methods"]): PendingSecondFactor => ({
  userId: "user-1",
  organizationId: "org-1",
  plan: { methods, enrollTotp: false, recovery: false },
  chosen: null,
  enrolled: false,
  language: "en",
});

function context(passkeys: number) {
  const { ctx, recorded } = fakeSignInContext({
    db: { passkey: { count: async () => passkeys } },
    config: { baseUrl: "https://porta.test" },
    store: { take: async () => null },
  });
  return { ctx: { ...ctx, limits: fakeLimits(recorded) } as never, recorded };
}

describe("the passkey second factor", () => {
  it("is a second factor named passkey", () => {
    expect(passkeySecondFactor).toMatchObject({ kind: "second", factor: "passkey" });
  });

  it("is not offered when the plan does not name it", async () => {
    const { ctx, recorded } = context(1);
    expect(await verifyPasskeySecondFactor(ctx, ic, pending(["totp"]), { credential: "{}", meta })).toEqual({ kind: "not_offered" });
    expect(recorded.consumed).toEqual([]);
  });

  it("registration at the step is due only when the plan wants a passkey and the person has none", async () => {
    expect(await passkeyEnrollmentDue(context(0).ctx, pending(["passkey"]))).toBe(true);
    expect(await passkeyEnrollmentDue(context(1).ctx, pending(["passkey"]))).toBe(false);
    expect(await passkeyEnrollmentDue(context(0).ctx, pending(["totp"]))).toBe(false);
    expect(await enrollPasskeyAtSignIn(context(1).ctx, ic, pending(["passkey"]), { credential: "{}", name: "", meta })).toEqual({ kind: "not_offered" });
  });

  it("a credential that is not one fails, audited as a failed second factor of the user, proving nothing", async () => {
    const { ctx, recorded } = context(1);
    expect(await verifyPasskeySecondFactor(ctx, ic, pending(["passkey"]), { credential: "not json", meta })).toEqual({ kind: "failed" });
    expect(recorded.transactions[0]).toMatchObject({ actor: { type: "user", id: "user-1" }, proof: null });
    expect(recorded.transactions[0]?.audits[0]).toMatchObject({ eventType: "auth.2fa.failed", data: { method: "passkey", reason: "invalid_signature" } });
    expect(recorded.consumed.map(([name]) => name)).toEqual(["twoFactorIp", "twoFactor"]);
    expect(recorded.refunded).toEqual([]);
  });
});
