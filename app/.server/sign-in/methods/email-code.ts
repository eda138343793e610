import { userActor, NO_REQUEST } from "../../auth/actors";
import { MAX_ACTIVE_EMAIL_OTPS } from "../../auth/two-factor/email-otp";
import { once, type CodeFactor } from "../code-factor";
import type { UnitRunner } from "../../context";

/**
 * A six-digit code mailed to the account's address (auth/two-factor/email-otp.ts derives and
 * hashes it). At most three are active at once; each is used once.
 */
export const emailCode: CodeFactor<"otp"> = {
  kind: "second",
  factor: "email",
  async claim(ctx, userId, typed) {
    const code = typed.replace(/\s+/g, "");
    if (!/^\d{6}$/.test(code)) return { ok: false, reason: "invalid_code" };
    const active = await ctx.db.emailOtpCode.findMany({ where: { userId, usedAt: null, expiresAt: { gt: new Date() } } });
    const match = active.find((row) => ctx.otp.matches(code, row.codeHash));
    if (!match) return { ok: false, reason: "invalid_code" };
    return { ok: true, take: async (db) => once((await db.emailOtpCode.updateMany({ where: { id: match.id, usedAt: null }, data: { usedAt: new Date() } })).count) };
  },
};

/** Creates an email code and queues its mail in one transaction; a fourth active code retires the oldest. */
export async function issueEmailOtp(ctx: UnitRunner<"settings" | "otp">, userId: string, language: string): Promise<void> {
  await ctx.transaction(userActor(userId, NO_REQUEST), async (tx) => {
    const id = crypto.randomUUID();
    const ttlMinutes = await tx.settings.get("auth.emailOtpTtlMinutes");
    await tx.db.emailOtpCode.create({
      data: {
        id,
        userId,
        codeHash: tx.otp.hash(tx.otp.codeFor(id)),
        expiresAt: new Date(Date.now() + ttlMinutes * 60_000),
      },
    });
    const active = await tx.db.emailOtpCode.findMany({
      where: { userId, usedAt: null, expiresAt: { gt: new Date() } },
      orderBy: { createdAt: "desc" },
      select: { id: true },
    });
    const retired = active.slice(MAX_ACTIVE_EMAIL_OTPS).map((c) => c.id);
    if (retired.length > 0) await tx.db.emailOtpCode.updateMany({ where: { id: { in: retired } }, data: { usedAt: new Date() } });
    // The code row and its mail job commit together: no code without its mail, no mail without its code.
    await tx.enqueue("email-otp", { userId, codeId: id, language });
  });
}
