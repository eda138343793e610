import { normalizeEmail } from "~/schemas/email";
import type { Context, Db } from "../../context";
import { anonymousActor, userActor, type RequestMeta } from "../../auth/actors";
import type { FirstFactor, MethodContext, UserChanges } from "../method";
import type { SecondFactorEnrollment } from "../plan";
import { SETTINGS } from "../../settings/registry";
import { MAX_PASSWORD_LENGTH } from "../../auth/password-policy";
import { consumeEach, refundEach, type LimitName } from "../../rate-limit/limiters";
import { trustedDevice } from "../device-cookie";
import { Prisma } from "~/generated/prisma/client";
import { passwordSecret } from "../../auth/legacy-hashes";

/**
 * Password login, built so that failures look alike from outside: every admitted attempt runs
 * exactly one Argon2id verification (the account's hash, or a cached dummy hash when no
 * eligible account exists), every failure runs the same UPDATE and the same audit INSERT,
 * and the caller gets one generic failure whatever the cause. The verification runs before any
 * transaction; the attempt's writes and its audit entry then commit in one.
 *
 * Device cookies (OWASP; decision 026): an attempt that brings a valid device cookie of the
 * account counts against that device's own failures only, so the lockout and the per-account
 * and per-address limits that strangers run into do not lock the owner out on a known device.
 * Every other attempt is untrusted: limited per client address and per account, and locked out
 * with the account. Those limits count failures only: a right password gives its points back, so
 * a kiosk or an office behind one address is never refused for signing in. (A known device's failure writes its own counter instead of the account's
 * UPDATE: only the holder of the cookie sees that path.)
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
  /** `redirectTo`: where the browser goes when the password completed the sign-in (null when a second factor follows). */
  | { outcome: "success"; userId: string; email: string; redirectTo: string | null }
  | { outcome: "failure"; reason: FailureReason }
  | { outcome: "rate_limited"; retryAfterSeconds: number };

export interface PasswordLoginInput extends RequestMeta {
  organizationId: string;
  clientId: string;
  email: string;
  password: string;
  lockout?: LockoutPolicy;
  /** The browser's device cookie for the organization, as sent (verified here, against the account). */
  deviceCookie?: string;
  now?: () => Date;
  /**
   * Asked once the password is right, before anything is written, with the user's second-factor
   * enrollment (read with the account): whether a second factor must follow. Then the sign-in is
   * not complete yet, and the attempt is audited as `auth.password.verified` instead of completing it.
   */
  secondFactorFollows?: (userId: string, enrollment: SecondFactorEnrollment) => boolean;
}

/** The per-account password limit's key: the address as typed (normalized), within the organization. */
export const passwordLimitKey = (organizationId: string, email: string) => `${organizationId}:${normalizeEmail(email)}`;

/** The failures of one device cookie of the account (the `deviceFailures` limit's key). */
export const deviceLimitKey = (userId: string, nonce: string) => `${userId}:${nonce}`;

interface LoginAccount extends SecondFactorEnrollment {
  id: string;
  email: string;
  status: string;
  passwordHash: string | null;
  /** An imported password's algorithm and parameters (decision 085): passwordHash wraps what it derives. */
  legacyPassword: unknown;
  lockedUntil: Date | null;
  failedLoginCount: number;
}

/**
 * The account an attempt names, with what the second-factor policy needs, in one statement
 * (three more reads cost a login ~4 ms of CPU embedded). Every attempt sends it, eligible or not.
 */
async function findLoginAccount(db: Db, organizationId: string, email: string): Promise<LoginAccount | null> {
  const rows = await db.$queryRaw<LoginAccount[]>`
    SELECT u."id"::text AS "id", u."email"::text AS "email", u."status", u."passwordHash", u."legacyPassword", u."lockedUntil", u."failedLoginCount",
      u."emailOtpEnabled", COALESCE(t."status" = 'enrolled', false) AS "totpEnrolled",
      EXISTS (SELECT 1 FROM "RecoveryCode" r WHERE r."userId" = u."id" AND r."usedAt" IS NULL) AS "recoveryLeft",
      EXISTS (SELECT 1 FROM "Passkey" p WHERE p."userId" = u."id") AS "passkey"
    FROM "User" u LEFT JOIN "TotpCredential" t ON t."userId" = u."id"
    WHERE u."organizationId" = ${organizationId}::uuid AND u."email" = ${email}::citext`;
  return rows[0] ?? null;
}

export const password: FirstFactor = { kind: "first", method: "password" };

/** A right password without a second factor proves who signs in, in the transaction of its own writes (../finish.ts). */
export async function attemptPasswordLogin(ctx: MethodContext<"passwords" | "limits" | "tokens">, input: PasswordLoginInput): Promise<PasswordLoginResult> {
  const { passwords: hasher, limits } = ctx;
  const lockout = input.lockout ?? DEFAULT_LOCKOUT;
  const now = (input.now ?? (() => new Date()))();
  const email = normalizeEmail(input.email);

  // The account the attempt named, once looked up: the entry is attributed to it, so the
  // console shows failures on the user's page; the public answer stays the same either way.
  let targeted: string | null = null;
  const failure = (ctx: Context, reason: FailureReason) =>
    ctx.audit({
      eventType: "auth.login.failure",
      organizationId: input.organizationId,
      ...(targeted ? { targetType: "user", targetId: targeted } : {}),
      data: { method: "password", email, reason, clientId: input.clientId },
    });
  const fail = async (reason: FailureReason): Promise<PasswordLoginResult> => {
    await ctx.transaction(anonymousActor(input), async (tx) => failure(tx, reason));
    return { outcome: "failure", reason };
  };

  // Not admitted: a password beyond the policy's maximum is never hashed (it would only cost CPU).
  if ([...input.password].length > MAX_PASSWORD_LENGTH) return fail("malformed");

  const user = await findLoginAccount(ctx.db, input.organizationId, email);
  targeted = user?.id ?? null;
  const device = user ? trustedDevice(ctx, input.organizationId, user.id, input.deviceCookie) : null;
  const deviceKey = device && deviceLimitKey(user!.id, device);

  // The limits count failures: the point is taken before the check (so parallel guesses cannot
  // overrun them) and given back once the password proved right.
  const counted: Array<[LimitName, string | null]> = deviceKey
    ? []
    : [
        ["passwordLoginIp", input.ip],
        ["passwordLogin", passwordLimitKey(input.organizationId, email)],
      ];
  const limit = await consumeEach(limits, counted);
  if (!limit.allowed) {
    await ctx.transaction(anonymousActor(input), async (tx) => failure(tx, "rate_limited"));
    return { outcome: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  }

  // A known device is locked by its own failures; everyone else by the account's.
  const locked = deviceKey ? !(await limits.check("deviceFailures", deviceKey)).allowed : !!user?.lockedUntil && user.lockedUntil > now;
  const ineligibility: FailureReason | null = !user
    ? "unknown_user"
    : user.status !== "active"
      ? "inactive"
      : !user.passwordHash
        ? "no_password"
        : locked
          ? "locked"
          : null;

  const hash = ineligibility === null ? user!.passwordHash! : await hasher.dummyHash();
  // An imported account's hash wraps its old algorithm's output (decision 085): that derivation
  // runs first, and the attempt still makes its one Argon2id verification, of what it derived.
  const imported = ineligibility === null && user!.legacyPassword !== null && user!.legacyPassword !== undefined;
  const secret = imported ? await passwordSecret(user!.legacyPassword, input.password) : input.password;
  const valid = await hasher.verify(hash, secret);

  if (ineligibility === null && valid) {
    const account = user!;
    const userId = account.id;
    // An imported hash is replaced by Porta's own at its first right password, and its old
    // algorithm forgotten, in the sign-in's own UPDATE.
    const rehash = imported || hasher.needsRehash(hash) ? await hasher.hash(input.password) : undefined;
    const secondFactor = input.secondFactorFollows ? input.secondFactorFollows(userId, account) : false;
    // A known device's success leaves the account's lockout alone: it holds strangers off. A
    // count that is already clear is not written again.
    const resetLockout = !deviceKey && (account.failedLoginCount !== 0 || account.lockedUntil !== null);
    const changes: UserChanges = { ...(resetLockout ? { failedLoginCount: 0, lockedUntil: null } : {}), ...(rehash ? { passwordHash: rehash } : {}), ...(imported ? { legacyPassword: Prisma.DbNull } : {}) };
    const { redirectTo } = await ctx.prove(userActor(userId, input), async (tx) => {
      // Completing the sign-in writes the changes with lastLoginAt, in one UPDATE.
      if (!secondFactor) return { value: null, proof: { userId, changes } };
      if (Object.keys(changes).length > 0) await tx.db.user.update({ where: { id: userId }, data: changes });
      tx.audit({
        eventType: "auth.password.verified",
        organizationId: input.organizationId,
        targetType: "user",
        targetId: userId,
        data: { clientId: input.clientId },
      });
      return { value: null, proof: null };
    });
    // A right password is no guess: neither the account's budget nor the address's pays for it
    // (outside the transaction: the limiter uses the shared client).
    await refundEach(limits, counted);
    return { outcome: "success", userId, email: user!.email, redirectTo };
  }

  const reason = ineligibility ?? "wrong_password";
  if (deviceKey) {
    // The device's own budget (outside the transaction: the limiter uses the shared client).
    await limits.consume("deviceFailures", deviceKey);
    return fail(reason);
  }
  // One statement for every untrusted failure (it matches no row for an unknown email). A lock
  // that has run out starts a fresh count; a running lock is not extended by further attempts.
  const lockUntil = new Date(now.getTime() + lockout.cooldownSeconds * 1000);
  await ctx.transaction(anonymousActor(input), async (tx) => {
    await tx.db.$executeRaw`
      UPDATE "User" SET
        "failedLoginCount" = CASE WHEN "lockedUntil" IS NOT NULL AND "lockedUntil" <= ${now} THEN 1 ELSE "failedLoginCount" + 1 END,
        "lockedUntil" = CASE
          WHEN "lockedUntil" > ${now} THEN "lockedUntil"
          WHEN (CASE WHEN "lockedUntil" IS NOT NULL AND "lockedUntil" <= ${now} THEN 1 ELSE "failedLoginCount" + 1 END) >= ${lockout.maxFailures} THEN ${lockUntil}
          ELSE NULL END
      WHERE "organizationId" = ${input.organizationId}::uuid AND "email" = ${email}::citext`;
    failure(tx, reason);
  });
  return { outcome: "failure", reason };
}
