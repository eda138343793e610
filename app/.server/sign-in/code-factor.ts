import type { Context, Db } from "../context";
import { userActor, type RequestMeta } from "../auth/actors";
import { countFactorAttempt, forgetFactorFailures, isCountedFactor, isRefused, reachesLimit } from "../auth/two-factor/factor-failures";
import { consumeEach, refundEach, type LimitName } from "../rate-limit/limiters";
import type { Prove, SecondFactor, SignInContext } from "./method";

/**
 * The second factors checked with a typed code (methods/totp.ts, email-code.ts,
 * recovery-code.ts), and what they share: the per-user and per-address limits of one attempt,
 * the count of wrong codes in a row (auth/two-factor/factor-failures.ts), and the audit entries
 * (`auth.2fa.verified` / `auth.2fa.failed`). A method only finds the code it was given.
 */
export type VerifyMethod = "totp" | "email" | "recovery";
export type VerifyFailureReason = "invalid_code" | "replayed" | "not_enrolled" | "factor_locked";
export type VerifyOutcome = { ok: true } | { ok: false; reason: VerifyFailureReason } | { ok: false; reason: "rate_limited"; retryAfterSeconds: number };
/** `redirectTo`: given `prove`, where the browser goes once the code completed the sign-in. */
export type VerifyResult = Exclude<VerifyOutcome, { ok: true }> | { ok: true; redirectTo?: string | null };

export interface VerifyInput extends RequestMeta {
  userId: string;
  organizationId: string;
  method: VerifyMethod;
  code: string;
}

/** A code that matched, and how to use it up: once, in the transaction that records it. */
export type Claim = { ok: true; take: (db: Db) => Promise<VerifyOutcome> } | Exclude<VerifyOutcome, { ok: true }>;

/** A code factor: finds the code (the checks that need no write, Argon2id among them) before any transaction. */
export interface CodeFactor<C extends "encrypter" | "otp" | "passwords" = never> extends SecondFactor {
  factor: VerifyMethod;
  claim(ctx: SignInContext<C>, userId: string, code: string): Promise<Claim>;
}

/** Used by a code that matched and is now used up: one use only. */
export const once = (count: number): VerifyOutcome => (count === 1 ? { ok: true } : { ok: false, reason: "replayed" });

/** The second-factor limits of one attempt: per client address and per user. */
export const secondFactorLimits = (ip: string | null, userId: string): Array<[LimitName, string | null]> => [
  ["twoFactorIp", ip],
  ["twoFactor", userId],
];

/**
 * Checks one submitted code (rate-limited per user and address per window, and counted per factor
 * across windows) and audits the result. The checks that need no write run first; then one
 * transaction uses the code up, records `auth.2fa.verified` or `auth.2fa.failed` (and
 * `auth.2fa.factor_locked` for the wrong code that reaches the limit), and, given `prove` (the
 * flow's), proves who signs in, so that the sign-in is recorded in the same transaction.
 */
export async function verifyCode(
  ctx: SignInContext<"limits" | "settings" | "encrypter" | "otp" | "passwords"> & { prove?: Prove },
  factor: CodeFactor<"encrypter" | "otp" | "passwords">,
  input: VerifyInput,
): Promise<VerifyResult> {
  const limits = secondFactorLimits(input.ip, input.userId);
  const limit = await consumeEach(ctx.limits, limits);
  const attempt = limit.allowed && isCountedFactor(input.method) ? await countFactorAttempt(ctx, input.userId, input.method) : null;
  const claim: Claim = !limit.allowed
    ? { ok: false, reason: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds }
    : attempt && isRefused(attempt)
      ? { ok: false, reason: "factor_locked" }
      : await factor.claim(ctx, input.userId, input.code);
  const auditMethod = input.method === "email" ? "otp" : input.method;
  const actor = userActor(input.userId, input);
  const work = async (tx: Context) => {
    const outcome = claim.ok ? await claim.take(tx.db) : claim;
    tx.audit({
      eventType: outcome.ok ? "auth.2fa.verified" : "auth.2fa.failed",
      organizationId: input.organizationId,
      targetType: "user",
      targetId: input.userId,
      data: outcome.ok ? { userId: input.userId, method: auditMethod } : { userId: input.userId, method: auditMethod, reason: outcome.reason },
    });
    if (attempt && outcome.ok) await forgetFactorFailures(tx.db, input.userId, attempt.factor);
    if (attempt && !outcome.ok && reachesLimit(attempt)) {
      // The operator's record of the block: the user's page shows it until it is cleared.
      tx.audit({
        eventType: "auth.2fa.factor_locked",
        organizationId: input.organizationId,
        targetType: "user",
        targetId: input.userId,
        data: { userId: input.userId, method: auditMethod, failures: attempt.failures },
      });
    }
    return outcome;
  };
  const { prove } = ctx;
  const proved = prove
    ? await prove(actor, async (tx) => {
        const value = await work(tx);
        return { value, proof: value.ok ? { userId: input.userId } : null };
      })
    : null;
  const outcome: VerifyResult = proved ? (proved.value.ok ? { ok: true, redirectTo: proved.redirectTo } : proved.value) : await ctx.transaction(actor, work);
  // The limit counts failures: a right code gives its point back (decision 066).
  if (outcome.ok) await refundEach(ctx.limits, limits);
  return outcome;
}
