import { describe, expect, it } from "vitest";
import { fakeSignInContext } from "../../../../test/support/sign-in-context";
import { emailCode } from "./email-code";

/** What a mailed code proves, without a server: one of the user's active codes, typed with or without spaces, used once. */
const rows = [{ id: "code-1", codeHash: "hash:111111" }, { id: "code-2", codeHash: "hash:222222" }];
const context = (found: typeof rows) => {
  const asked: unknown[] = [];
  const { ctx } = fakeSignInContext({
    db: { emailOtpCode: { findMany: async (args: unknown) => (asked.push(args), found) } },
    otp: { matches: (code: string, hash: string) => hash === `hash:${code}` },
  });
  return { ctx: ctx as never, asked };
};

describe("the email-code second factor", () => {
  it("is a second factor named email", () => {
    expect(emailCode).toMatchObject({ kind: "second", factor: "email" });
  });

  it("claims the active code that matches, spaces ignored; taking it marks that row used, once", async () => {
    const { ctx, asked } = context(rows);
    const claim = await emailCode.claim(ctx, "user-1", " 222 222 ");
    expect(asked[0]).toMatchObject({ where: { userId: "user-1", usedAt: null } });
    expect(claim.ok).toBe(true);
    if (!claim.ok) return;
    const taken: unknown[] = [];
    const db = (count: number) => ({ emailOtpCode: { updateMany: async (args: unknown) => (taken.push(args), { count }) } });
    expect(await claim.take(db(1) as never)).toEqual({ ok: true });
    expect(taken[0]).toMatchObject({ where: { id: "code-2", usedAt: null } });
    expect(await claim.take(db(0) as never)).toEqual({ ok: false, reason: "replayed" });
  });

  it("refuses a code that matches nothing, and looks nothing up for one that is not six digits", async () => {
    expect(await emailCode.claim(context(rows).ctx, "user-1", "333333")).toEqual({ ok: false, reason: "invalid_code" });
    const { ctx, asked } = context(rows);
    expect(await emailCode.claim(ctx, "user-1", "12345")).toEqual({ ok: false, reason: "invalid_code" });
    expect(await emailCode.claim(ctx, "user-1", "abcdef")).toEqual({ ok: false, reason: "invalid_code" });
    expect(asked).toEqual([]);
  });
});
