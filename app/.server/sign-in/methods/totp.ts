import { matchTotpStep, totpAad } from "../../auth/two-factor/totp";
import { once, type CodeFactor } from "../code-factor";

/**
 * An authenticator app's code (RFC 6238) as the second factor. Each time step is accepted once:
 * a code seen before, even within its window, is refused as replayed.
 */
export const totp: CodeFactor<"encrypter"> = {
  kind: "second",
  factor: "totp",
  async claim(ctx, userId, code) {
    const credential = await ctx.db.totpCredential.findUnique({ where: { userId } });
    if (!credential || credential.status !== "enrolled") return { ok: false, reason: "not_enrolled" };
    const step = matchTotpStep(ctx.encrypter.decrypt(credential.secretEncrypted, totpAad(userId)), code);
    if (step === null) return { ok: false, reason: "invalid_code" };
    return { ok: true, take: async (db) => once((await db.totpCredential.updateMany({ where: { userId, lastUsedStep: { lt: step } }, data: { lastUsedStep: step } })).count) };
  },
};
