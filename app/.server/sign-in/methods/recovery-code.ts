import { looksLikeRecoveryCode, normalizeRecoveryCode } from "../../auth/two-factor/recovery-codes";
import { once, type CodeFactor } from "../code-factor";

/**
 * One of the user's ten recovery codes, in place of the factor (when the plan allows it). Each is
 * stored as an Argon2id hash, so every unused one is tried; a code is used once.
 */
export const recoveryCode: CodeFactor<"passwords"> = {
  kind: "second",
  factor: "recovery",
  async claim(ctx, userId, code) {
    if (!looksLikeRecoveryCode(code)) return { ok: false, reason: "invalid_code" };
    const normalized = normalizeRecoveryCode(code);
    const unused = await ctx.db.recoveryCode.findMany({ where: { userId, usedAt: null } });
    for (const row of unused) {
      if (await ctx.passwords.verify(row.codeHash, normalized)) {
        return { ok: true, take: async (db) => once((await db.recoveryCode.updateMany({ where: { id: row.id, usedAt: null }, data: { usedAt: new Date() } })).count) };
      }
    }
    return { ok: false, reason: "invalid_code" };
  },
};
