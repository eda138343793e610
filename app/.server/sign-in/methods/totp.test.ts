import { describe, expect, it } from "vitest";
import { fakeSignInContext } from "../../../../test/support/sign-in-context";
import { currentTotpCode, generateTotpSecret, TOTP_PERIOD_SECONDS } from "../../auth/two-factor/totp";
import { totp } from "./totp";

/** What an authenticator code proves, without a server: the stored secret is decrypted, the time step used once. */
const secret = generateTotpSecret();
const contextWith = (credential: { status: string } | null) =>
  fakeSignInContext({
    db: { totpCredential: { findUnique: async () => (credential ? { ...credential, secretEncrypted: "sealed" } : null) } },
    encrypter: { decrypt: (sealed: string, aad: string) => (sealed === "sealed" && aad.endsWith("user-1") ? secret : "wrong") },
  }).ctx;

describe("the TOTP second factor", () => {
  it("is a second factor named totp", () => {
    expect(totp).toMatchObject({ kind: "second", factor: "totp" });
  });

  it("claims the current code of an enrolled secret; taking it uses up its time step once", async () => {
    const claim = await totp.claim(contextWith({ status: "enrolled" }) as never, "user-1", currentTotpCode(secret));
    expect(claim.ok).toBe(true);
    if (!claim.ok) return;
    const steps: unknown[] = [];
    const db = (count: number) => ({ totpCredential: { updateMany: async (args: unknown) => (steps.push(args), { count }) } });
    expect(await claim.take(db(1) as never)).toEqual({ ok: true });
    expect(await claim.take(db(0) as never)).toEqual({ ok: false, reason: "replayed" });
    expect(steps[0]).toMatchObject({ where: { userId: "user-1", lastUsedStep: { lt: Math.floor(Date.now() / 1000 / TOTP_PERIOD_SECONDS) } } });
  });

  it("refuses a wrong code, and any code without an enrolled secret", async () => {
    const wrong = String((Number(currentTotpCode(secret)) + 1) % 1_000_000).padStart(6, "0");
    expect(await totp.claim(contextWith({ status: "enrolled" }) as never, "user-1", wrong)).toEqual({ ok: false, reason: "invalid_code" });
    expect(await totp.claim(contextWith({ status: "pending" }) as never, "user-1", currentTotpCode(secret))).toEqual({ ok: false, reason: "not_enrolled" });
    expect(await totp.claim(contextWith(null) as never, "user-1", currentTotpCode(secret))).toEqual({ ok: false, reason: "not_enrolled" });
  });
});
