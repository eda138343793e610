import type { PrismaClient } from "~/generated/prisma/client";
import { normalizeEmail } from "~/schemas/email";
import type { AuditLog } from "../audit/audit";
import type { RateLimits } from "../rate-limit/limiters";
import { recordLoginSuccess } from "./login-success";
import type { PasswordHasher } from "./password-hash";
import { MAX_PASSWORD_LENGTH } from "./password-policy";

/**
 * Password login, built so that failures look alike from outside: every admitted attempt runs
 * exactly one Argon2id verification (the account's hash, or a cached dummy hash when no
 * eligible account exists), every failure runs the same UPDATE and the same audit INSERT,
 * and the caller gets one generic failure whatever the cause.
 */
export interface LockoutPolicy {
  maxFailures: number;
  cooldownSeconds: number;
}

export const DEFAULT_LOCKOUT: LockoutPolicy = { maxFailures: 5, cooldownSeconds: 15 * 60 };

export type FailureReason = "unknown_user" | "inactive" | "no_password" | "locked" | "wrong_password" | "rate_limited" | "malformed";

export type PasswordLoginResult =
  | { outcome: "success"; userId: string; email: string }
  | { outcome: "failure"; reason: FailureReason }
  | { outcome: "rate_limited"; retryAfterSeconds: number };

export interface PasswordLoginDeps {
  prisma: PrismaClient;
  hasher: PasswordHasher;
  limits: RateLimits;
  audit: AuditLog;
  lockout?: LockoutPolicy;
  now?: () => Date;
}

export interface PasswordLoginInput {
  organizationId: string;
  clientId: string;
  email: string;
  password: string;
  ip: string | null;
  requestId: string | null;
  /**
   * Asked once the password is right: whether a second factor must follow. Then the sign-in is
   * not complete yet, and the attempt is audited as `auth.password.verified` instead of a login.
   */
  secondFactorFollows?: (userId: string) => Promise<boolean>;
}

export async function attemptPasswordLogin(deps: PasswordLoginDeps, input: PasswordLoginInput): Promise<PasswordLoginResult> {
  const { prisma, hasher, limits, audit } = deps;
  const lockout = deps.lockout ?? DEFAULT_LOCKOUT;
  const now = (deps.now ?? (() => new Date()))();
  const email = normalizeEmail(input.email);
  const base = { organizationId: input.organizationId, ip: input.ip, requestId: input.requestId };

  const fail = async (reason: FailureReason): Promise<PasswordLoginResult> => {
    await audit.record({ ...base, eventType: "auth.login.failure", actorType: "anonymous", data: { email, reason, clientId: input.clientId } });
    return { outcome: "failure", reason };
  };

  // Not admitted: a password beyond the policy's maximum is never hashed (it would only cost CPU).
  if ([...input.password].length > MAX_PASSWORD_LENGTH) return fail("malformed");

  const limit = await limits.consume("passwordLogin", `${input.organizationId}:${email}`);
  if (!limit.allowed) {
    await audit.record({ ...base, eventType: "auth.login.failure", actorType: "anonymous", data: { email, reason: "rate_limited", clientId: input.clientId } });
    return { outcome: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  }

  const user = await prisma.user.findUnique({
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
    const rehash = hasher.needsRehash(hash) ? await hasher.hash(input.password) : undefined;
    await prisma.user.update({
      where: { id: user!.id },
      data: { failedLoginCount: 0, lockedUntil: null, ...(rehash ? { passwordHash: rehash } : {}) },
    });
    if (input.secondFactorFollows && (await input.secondFactorFollows(user!.id))) {
      await audit.record({
        ...base,
        eventType: "auth.password.verified",
        actorType: "user",
        actorId: user!.id,
        targetType: "user",
        targetId: user!.id,
        data: { clientId: input.clientId },
      });
    } else {
      await recordLoginSuccess({ prisma, audit }, { ...base, userId: user!.id, clientId: input.clientId, method: "password", at: now });
    }
    return { outcome: "success", userId: user!.id, email: user!.email };
  }

  // One statement for every failure path (it matches no row for an unknown email). A lock that
  // has run out starts a fresh count; a running lock is not extended by further attempts.
  const lockUntil = new Date(now.getTime() + lockout.cooldownSeconds * 1000);
  await prisma.$executeRaw`
    UPDATE "User" SET
      "failedLoginCount" = CASE WHEN "lockedUntil" IS NOT NULL AND "lockedUntil" <= ${now} THEN 1 ELSE "failedLoginCount" + 1 END,
      "lockedUntil" = CASE
        WHEN "lockedUntil" > ${now} THEN "lockedUntil"
        WHEN (CASE WHEN "lockedUntil" IS NOT NULL AND "lockedUntil" <= ${now} THEN 1 ELSE "failedLoginCount" + 1 END) >= ${lockout.maxFailures} THEN ${lockUntil}
        ELSE NULL END
    WHERE "organizationId" = ${input.organizationId}::uuid AND "email" = ${email}::citext`;
  return fail(ineligibility ?? "wrong_password");
}
