import { describe, expect, it } from "vitest";
import { fakeSignInContext } from "../../../../test/support/sign-in-context";
import { generateRecoveryCodes, normalizeRecoveryCode } from "../../auth/two-factor/recovery-codes";
import { recoveryCode } from "./recovery-code";

/** What a recovery code proves, without a server: one of the user's unused codes (each stored hashed), used once. */
const [first, second] = generateRecoveryCodes(2) as [string, string];
const context = () => {
  const asked: unknown[] = [];
  const { ctx } = fakeSignInContext({
    db: { recoveryCode: { findMany: async (args: unknown) => (asked.push(args), [{ id: "r1", codeHash: `h:${normalizeRecoveryCode(first)}` }, { id: "r2", codeHash: `h:${normalizeRecoveryCode(second)}` }]) } },
    passwords: { verify: async (hash: string, code: string) => hash === `h:${code}` },
  });
  return { ctx: ctx as never, asked };
};

describe("the recovery-code second factor", () => {
  it("is a second factor named recovery", () => {
    expect(recoveryCode).toMatchObject({ kind: "second", factor: "recovery" });
  });

  it("claims an unused code as typed (case and separators as the user types them); taking it marks that row used, once", async () => {
    const { ctx, asked } = context();
    const claim = await recoveryCode.claim(ctx, "user-1", second.toLowerCase());
    expect(asked[0]).toMatchObject({ where: { userId: "user-1", usedAt: null } });
    expect(claim.ok).toBe(true);
    if (!claim.ok) return;
    const taken: unknown[] = [];
    const db = (count: number) => ({ recoveryCode: { updateMany: async (args: unknown) => (taken.push(args), { count }) } });
    expect(await claim.take(db(1) as never)).toEqual({ ok: true });
    expect(taken[0]).toMatchObject({ where: { id: "r2", usedAt: null } });
    expect(await claim.take(db(0) as never)).toEqual({ ok: false, reason: "replayed" });
  });

  it("refuses a code that is none of them, and looks nothing up for one that cannot be a recovery code", async () => {
    const [other] = generateRecoveryCodes(1) as [string];
    expect(await recoveryCode.claim(context().ctx, "user-1", other)).toEqual({ ok: false, reason: "invalid_code" });
    const { ctx, asked } = context();
    expect(await recoveryCode.claim(ctx, "user-1", "123456")).toEqual({ ok: false, reason: "invalid_code" });
    expect(asked).toEqual([]);
  });
});
