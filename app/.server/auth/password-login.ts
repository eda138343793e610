import { normalizeEmail } from "~/schemas/email";
import { inTransaction, type Context } from "../context";
import type { Services } from "../services";
import { anonymousActor, userActor, type RequestMeta } from "./actors";
import type { CompleteSignIn } from "./finish-sign-in";
import { SETTINGS } from "../settings/registry";
import { MAX_PASSWORD_LENGTH } from "./password-policy";

/**
 * Password login, built so that failures look alike from outside: every admitted attempt runs
 * exactly one Argon2id verification (the account's hash, or a cached dummy hash when no
 * eligible account exists), every failure runs the same UPDATE and the same audit INSERT,
 * and the caller gets one generic failure whatever the cause. The verification runs before any
 * transaction; the attempt's writes and its audit entry then commit in one.
 */
export interface LockoutPolicy {
  maxFailures: number;
  cooldownSeconds: number;
}

export const DEFAULT_LOCKOUT: LockoutPolicy = {
  maxFailures: SETTINGS["auth.lockout.maxFailures"].default,
  cooldownSeconds: SETTINGS["auth.lockout.cooldownMinutes"].default * 60,
};

export type FailureReason = "unknown_user" | "inactive" | "no_password" | "locked" | "wrong_password" | "rate_limited" | "malformed";

export type PasswordLoginResult =
  | { outcome: "success"; userId: string; email: string }
  | { outcome: "failure"; reason: FailureReason }
  | { outcome: "rate_limited"; retryAfterSeconds: number };

export interface PasswordLoginInput extends RequestMeta {
  organizationId: string;
  clientId: string;
  email: string;
  password: string;
  lockout?: LockoutPolicy;
  now?: () => Date;
  /**
   * Asked once the password is right, before anything is written: whether a second factor must
   * follow. Then the sign-in is not complete yet, and the attempt is audited as
   * `auth.password.verified` instead of completing the sign-in.
   */
  secondFactorFollows?: (userId: string) => Promise<boolean>;
}

/** A sign-in step (see finish-sign-in.ts): `complete` runs in the transaction of a right password without a second factor. */
export async function attemptPasswordLogin(services: Services, input: PasswordLoginInput, complete: CompleteSignIn): Promise<PasswordLoginResult> {
  const { passwords: hasher, limits } = services;
  const lockout = input.lockout ?? DEFAULT_LOCKOUT;
  const now = (input.now ?? (() => new Date()))();
  const email = normalizeEmail(input.email);

  const failure = (ctx: Context, reason: FailureReason) =>
    ctx.audit({ eventType: "auth.login.failure", organizationId: input.organizationId, data: { email, reason, clientId: input.clientId } });
  const fail = async (reason: FailureReason): Promise<PasswordLoginResult> => {
    await inTransaction(services, anonymousActor(input), async (ctx) => failure(ctx, reason));
    return { outcome: "failure", reason };
  };

  // Not admitted: a password beyond the policy's maximum is never hashed (it would only cost CPU).
  if ([...input.password].length > MAX_PASSWORD_LENGTH) return fail("malformed");

  const limit = await limits.consume("passwordLogin", `${input.organizationId}:${email}`);
  if (!limit.allowed) {
    await inTransaction(services, anonymousActor(input), async (ctx) => failure(ctx, "rate_limited"));
    return { outcome: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  }

  const user = await services.db.prisma.user.findUnique({
    where: { organizationId_email: { organizationId: input.organizationId, email } },
    select: { id: true, email: true, status: true, passwordHash: true, lockedUntil: true },
  });
  const ineligibility: FailureReason | null = !user
    ? "unknown_user"
    : user.status !== "active"
      ? "inactive"
      : !user.passwordHash
        ? "no_password"
        : user.lockedUntil && user.lockedUntil > now
          ? "locked"
          : null;

  const hash = ineligibility === null ? user!.passwordHash! : await hasher.dummyHash();
  const valid = await hasher.verify(hash, input.password);

  if (ineligibility === null && valid) {
    const userId = user!.id;
    const rehash = hasher.needsRehash(hash) ? await hasher.hash(input.password) : undefined;
    const secondFactor = input.secondFactorFollows ? await input.secondFactorFollows(userId) : false;
    await inTransaction(services, userActor(userId, input), async (ctx) => {
      await ctx.db.user.update({
        where: { id: userId },
        data: { failedLoginCount: 0, lockedUntil: null, ...(rehash ? { passwordHash: rehash } : {}) },
      });
      if (!secondFactor) return complete(ctx, userId);
      ctx.audit({
        eventType: "auth.password.verified",
        organizationId: input.organizationId,
        targetType: "user",
        targetId: userId,
        data: { clientId: input.clientId },
      });
    });
    return { outcome: "success", userId, email: user!.email };
  }

  // One statement for every failure path (it matches no row for an unknown email). A lock that
  // has run out starts a fresh count; a running lock is not extended by further attempts.
  const reason = ineligibility ?? "wrong_password";
  const lockUntil = new Date(now.getTime() + lockout.cooldownSeconds * 1000);
  await inTransaction(services, anonymousActor(input), async (ctx) => {
    await ctx.db.$executeRaw`
      UPDATE "User" SET
        "failedLoginCount" = CASE WHEN "lockedUntil" IS NOT NULL AND "lockedUntil" <= ${now} THEN 1 ELSE "failedLoginCount" + 1 END,
        "lockedUntil" = CASE
          WHEN "lockedUntil" > ${now} THEN "lockedUntil"
          WHEN (CASE WHEN "lockedUntil" IS NOT NULL AND "lockedUntil" <= ${now} THEN 1 ELSE "failedLoginCount" + 1 END) >= ${lockout.maxFailures} THEN ${lockUntil}
          ELSE NULL END
      WHERE "organizationId" = ${input.organizationId}::uuid AND "email" = ${email}::citext`;
    failure(ctx, reason);
  });
  return { outcome: "failure", reason };
}
