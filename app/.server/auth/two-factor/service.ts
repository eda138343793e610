import type { PasswordHasher } from "../password-hash";
import type { Context, Db, StagedContext } from "../../context";
import { NO_REQUEST, userActor, type RequestMeta } from "../actors";
import { consumeEach, refundEach } from "../../rate-limit/limiters";
import { secondFactorLimits } from "../../sign-in/code-factor";
import { generateRecoveryCodes, normalizeRecoveryCode } from "./recovery-codes";
import { generateTotpSecret, matchTotpStep, totpAad } from "./totp";

/**
 * Setting up second factors: TOTP enrollment (at the account page, and at the sign-in step that
 * requires it) and recovery codes. Using them at a sign-in is the sign-in's (app/.server/sign-in/:
 * the plan in plan.ts, the step in flow.ts, each factor in methods/).
 */
// ---------------------------------------------------------------------------------------------
// TOTP enrollment

/** Starts (or resumes) TOTP enrollment and returns the secret to show. */
export async function beginTotpEnrollment(ctx: Context<"encrypter">, userId: string): Promise<string> {
  const existing = await ctx.db.totpCredential.findUnique({ where: { userId } });
  if (existing?.status === "pending") return ctx.encrypter.decrypt(existing.secretEncrypted, totpAad(userId));
  if (existing?.status === "enrolled") throw new Error("TOTP is already enrolled");
  const secret = generateTotpSecret();
  // One row and no audit entry: a single statement, as the door's context hands it (a second tab's create fails on the unique user).
  await ctx.db.totpCredential.create({ data: { userId, secretEncrypted: ctx.encrypter.encrypt(secret, totpAad(userId)) } });
  return secret;
}

/**
 * Completes enrollment with a valid code; returns the ten recovery codes, shown once. The
 * enrollment and its codes commit together (hashed before the transaction); during a sign-in
 * (`signIn`) the transaction also records `auth.2fa.enrolled`.
 */
export async function confirmTotpEnrollment(
  staged: StagedContext<"encrypter" | "passwords">,
  userId: string,
  code: string,
  signIn?: { organizationId: string; meta: RequestMeta },
): Promise<string[] | null> {
  const credential = await staged.db.totpCredential.findUnique({ where: { userId } });
  if (!credential || credential.status !== "pending") return null;
  const step = matchTotpStep(staged.encrypter.decrypt(credential.secretEncrypted, totpAad(userId)), code);
  if (step === null) return null;
  const { codes, hashes } = await newRecoveryCodes(staged.passwords);
  return staged.transaction(userActor(userId, signIn?.meta ?? NO_REQUEST), async (ctx) => {
    const confirmed = await ctx.db.totpCredential.updateMany({
      where: { userId, status: "pending" },
      data: { status: "enrolled", enrolledAt: new Date(), lastUsedStep: step },
    });
    if (confirmed.count !== 1) return null;
    await storeRecoveryCodes(ctx.db, userId, hashes);
    if (signIn) ctx.audit({ eventType: "auth.2fa.enrolled", organizationId: signIn.organizationId, targetType: "user", targetId: userId, data: { method: "totp" } });
    return codes;
  });
}

/**
 * Enrolls a secret another system's users already have in their authenticator apps (an import):
 * enrolled at once, since the person proved it there, without recovery codes (they make them on
 * the account page).
 */
export async function importEnrolledTotp(ctx: Context<"encrypter">, userId: string, secretBase32: string): Promise<void> {
  await ctx.db.totpCredential.create({ data: { userId, secretEncrypted: ctx.encrypter.encrypt(secretBase32, totpAad(userId)), status: "enrolled", enrolledAt: new Date() } });
}

export type EnrollmentOutcome = { ok: true; recoveryCodes: string[] } | { ok: false; reason: "invalid_code" } | { ok: false; reason: "rate_limited"; retryAfterSeconds: number };

/**
 * Confirms a pending enrollment with its first code, within the per-user limit of second-factor
 * checks (a wrong code counts, a right one gives its point back), and records `auth.2fa.enrolled`.
 */
export async function enrollTotp(
  staged: StagedContext<"limits" | "encrypter" | "passwords">,
  input: { userId: string; organizationId: string; code: string; meta: RequestMeta },
): Promise<EnrollmentOutcome> {
  const limits = secondFactorLimits(input.meta.ip, input.userId);
  const limit = await consumeEach(staged.limits, limits);
  if (!limit.allowed) return { ok: false, reason: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  const recoveryCodes = await confirmTotpEnrollment(staged, input.userId, input.code, { organizationId: input.organizationId, meta: input.meta });
  if (!recoveryCodes) return { ok: false, reason: "invalid_code" };
  await refundEach(staged.limits, limits);
  return { ok: true, recoveryCodes };
}

// ---------------------------------------------------------------------------------------------
// Recovery codes

/** Ten fresh codes and their Argon2id hashes (slow: before any transaction). */
export async function newRecoveryCodes(hasher: PasswordHasher): Promise<{ codes: string[]; hashes: string[] }> {
  const codes = generateRecoveryCodes();
  return { codes, hashes: await Promise.all(codes.map((c) => hasher.hash(normalizeRecoveryCode(c)))) };
}

/** Replaces every earlier code of the user, inside the caller's transaction. */
export async function storeRecoveryCodes(db: Db, userId: string, hashes: string[]): Promise<void> {
  await db.recoveryCode.deleteMany({ where: { userId } });
  await db.recoveryCode.createMany({ data: hashes.map((codeHash) => ({ userId, codeHash })) });
}

/** A new set of ten codes replacing every earlier one, in the caller's write. */
export async function replaceRecoveryCodes(ctx: Context<"passwords">, userId: string): Promise<string[]> {
  const { codes, hashes } = await newRecoveryCodes(ctx.passwords);
  await storeRecoveryCodes(ctx.db, userId, hashes);
  return codes;
}
