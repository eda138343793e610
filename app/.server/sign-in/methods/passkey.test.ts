import { describe, expect, it } from "vitest";
import { fakeLimits, fakeSignInContext } from "../../../../test/support/sign-in-context";
import type { InteractionContext } from "../interaction";
import { passkey, signInWithPasskey } from "./passkey";

/**
 * What a passkey sign-in decides before any signature is checked, without a server: the
 * per-address limit comes first, and a credential that is not one (unparseable JSON) is a
 * failure audited in its own transaction, with nothing proved and no limit point given back.
 */
const ic = { uid: "uid-1", organization: { id: "org-1" }, client: { id: "client-1" } } as unknown as InteractionContext;
const meta = { ip: "203.0.113.9", requestId: null };

function context(refuse: Parameters<typeof fakeLimits>[1] = {}) {
  const { ctx, recorded } = fakeSignInContext({ config: { baseUrl: "https://porta.test" }, store: { take: async () => null } });
  return { ctx: { ...ctx, limits: fakeLimits(recorded, refuse) } as never, recorded };
}

describe("the passkey first factor", () => {
  it("is the login method passkey", () => {
    expect(passkey).toMatchObject({ kind: "first", method: "passkey" });
  });

  it("is refused past the per-address limit before anything is read", async () => {
    const { ctx, recorded } = context({ passkeyLoginIp: 120 });
    expect(await signInWithPasskey(ctx, ic, { credential: "{}", meta })).toEqual({ kind: "rate_limited", retryAfterSeconds: 120 });
    expect(recorded.transactions).toEqual([]);
  });

  it("a credential that is not one fails, audited as an invalid signature, proving nothing", async () => {
    const { ctx, recorded } = context();
    expect(await signInWithPasskey(ctx, ic, { credential: "not json", meta })).toEqual({ kind: "failed" });
    expect(recorded.transactions).toHaveLength(1);
    expect(recorded.transactions[0]).toMatchObject({ actor: { type: "anonymous" }, proof: null });
    expect(recorded.transactions[0]?.audits[0]).toMatchObject({ eventType: "auth.login.failure", data: { method: "passkey", reason: "invalid_signature", clientId: "client-1" } });
    expect(recorded.refunded).toEqual([]);
  });
});
