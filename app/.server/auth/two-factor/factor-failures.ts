import type { Context, Db } from "../../context";
import type { SignInContext } from "../../sign-in/method";

/**
 * Wrong codes in a row per user and factor, across rate-limit windows (NIST SP 800-63B §5.2.2).
 * The per-window limits (`rateLimits.twoFactor.*`) alone let someone who has the password guess
 * a six-digit code window after window; this count does not end with a window. An attempt is
 * counted before its code is checked (one statement, so attempts made at once are all counted),
 * a right code of the factor deletes the count, and past `auth.twoFactor.maxConsecutiveFailures`
 * the factor is refused without looking at the code, until the person signs in another way (a
 * recovery code or a passkey, sign-in/finish.ts) or an administrator clears the block.
 *
 * Recovery codes are not counted: each is one of ten 8-character codes over 31 symbols
 * (~1.2·10⁻¹¹ a guess), and they are the way out of a locked factor. Passkeys are not guessed.
 */
export type CountedFactor = "totp" | "email";

export const isCountedFactor = (method: string): method is CountedFactor => method === "totp" || method === "email";

export interface FactorAttempt {
  factor: CountedFactor;
  /** Attempts at the factor since its last right code, this one included. */
  failures: number;
  /** The configured limit when the attempt was counted. */
  max: number;
}

/** Past the limit: the attempt is refused without its code being checked. */
export const isRefused = (attempt: FactorAttempt) => attempt.failures > attempt.max;

/** This attempt, if wrong, is the one that reaches the limit (the operator is told then, once). */
export const reachesLimit = (attempt: FactorAttempt) => attempt.failures === attempt.max;

const COUNT_ATTEMPT = `INSERT INTO "SecondFactorFailureCount" ("userId", "factor", "failures", "lastFailedAt") VALUES ($1::uuid, $2::text, 1, $3::timestamptz)
  ON CONFLICT ("userId", "factor") DO UPDATE SET "failures" = "SecondFactorFailureCount"."failures" + 1, "lastFailedAt" = EXCLUDED."lastFailedAt"
  RETURNING "failures"`;

/** Counts one attempt at the factor before its code is checked (outside any transaction: the shared client). */
export async function countFactorAttempt(ctx: Context<"settings"> & Pick<SignInContext, "query">, userId: string, factor: CountedFactor): Promise<FactorAttempt> {
  const max = await ctx.settings.get("auth.twoFactor.maxConsecutiveFailures");
  const [row] = await ctx.query<{ failures: number }>(COUNT_ATTEMPT, [userId, factor, new Date()]);
  return { factor, failures: row?.failures ?? 1, max };
}

/** A right code of the factor: its count starts again (inside the transaction that records the success). */
export async function forgetFactorFailures(db: Db, userId: string, factor: CountedFactor): Promise<void> {
  await db.secondFactorFailureCount.deleteMany({ where: { userId, factor } });
}

/** A sign-in another way (recovery code, passkey) or an administrator: every factor's count starts again. */
export async function forgetAllFactorFailures(db: Db, userId: string): Promise<number> {
  return (await db.secondFactorFailureCount.deleteMany({ where: { userId } })).count;
}

export interface LockedFactor {
  factor: CountedFactor;
  failures: number;
  lastFailedAt: Date;
}

/** The user's factors that are refused now (their count has reached the configured limit). */
export async function lockedFactors(db: Db, max: number, userId: string): Promise<LockedFactor[]> {
  const rows = await db.secondFactorFailureCount.findMany({ where: { userId, failures: { gte: max } }, orderBy: { factor: "asc" } });
  return rows.map((row) => ({ factor: row.factor as CountedFactor, failures: row.failures, lastFailedAt: row.lastFailedAt }));
}

/** Whether the factor is refused for the user now (the sign-in page says so before a code is typed). */
export async function isFactorLocked(ctx: Context<"settings">, userId: string, factor: CountedFactor): Promise<boolean> {
  const max = await ctx.settings.get("auth.twoFactor.maxConsecutiveFailures");
  return (await ctx.db.secondFactorFailureCount.count({ where: { userId, factor, failures: { gte: max } } })) > 0;
}
