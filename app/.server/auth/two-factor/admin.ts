import type { TwoFactorPolicy } from "~/schemas/two-factor-policy";
import type { Context } from "../../context";
import { invalidateOrganization } from "../../directory/organizations";
import { replaceRecoveryCodes } from "./service";

/**
 * Administrative two-factor operations (the Admin API and console call these). Permission
 * checks and the audit record belong to the caller's operation helper; these only do the work.
 */
export interface TwoFactorStatus {
  userId: string;
  totp: { enrolled: boolean; pending: boolean; enrolledAt: Date | null };
  emailOtp: { enabled: boolean };
  recoveryCodes: { remaining: number; total: number };
  /** Registered passkeys (decision 041): a sign-in method and, under the policies that take one, a second factor. */
  passkeys: { count: number };
}

export class StaleVersionError extends Error {
  constructor() {
    super("the organization changed since it was read");
    this.name = "StaleVersionError";
  }
}

/** The user's second factors; throws when there is no such user. */
export async function requireTwoFactorStatus(ctx: Context, userId: string): Promise<TwoFactorStatus> {
  const prisma = ctx.db;
  const [user, totp, total, remaining, passkeys] = await Promise.all([
    prisma.user.findUniqueOrThrow({ where: { id: userId }, select: { emailOtpEnabled: true } }),
    prisma.totpCredential.findUnique({ where: { userId }, select: { status: true, enrolledAt: true } }),
    prisma.recoveryCode.count({ where: { userId } }),
    prisma.recoveryCode.count({ where: { userId, usedAt: null } }),
    prisma.passkey.count({ where: { userId } }),
  ]);
  return {
    userId,
    totp: { enrolled: totp?.status === "enrolled", pending: totp?.status === "pending", enrolledAt: totp?.enrolledAt ?? null },
    emailOtp: { enabled: user.emailOtpEnabled },
    recoveryCodes: { remaining, total },
    passkeys: { count: passkeys },
  };
}

async function removeFactors(ctx: Context, userId: string, alsoEmail: boolean) {
  const prisma = ctx.db;
  await prisma.totpCredential.deleteMany({ where: { userId } });
  await prisma.recoveryCode.deleteMany({ where: { userId } });
  await prisma.emailOtpCode.updateMany({ where: { userId, usedAt: null }, data: { usedAt: new Date() } });
  // A factor set up again starts without the wrong codes of the one it replaces.
  await prisma.secondFactorFailureCount.deleteMany({ where: { userId, factor: { in: alsoEmail ? ["totp", "email"] : ["totp"] } } });
  if (alsoEmail) await prisma.user.update({ where: { id: userId }, data: { emailOtpEnabled: false } });
}

/** Turns two-factor off for the user: TOTP, recovery codes and email codes are removed. */
export async function disableTwoFactor(ctx: Context, userId: string): Promise<TwoFactorStatus> {
  await removeFactors(ctx, userId, true);
  return requireTwoFactorStatus(ctx, userId);
}

/** Forgets the user's TOTP and recovery codes; a policy that requires TOTP enrolls again at the next login. */
export async function resetTwoFactor(ctx: Context, userId: string): Promise<TwoFactorStatus> {
  await removeFactors(ctx, userId, false);
  return requireTwoFactorStatus(ctx, userId);
}

export class NotEnrolledError extends Error {
  constructor() {
    super("the user has no enrolled TOTP");
    this.name = "NotEnrolledError";
  }
}

/** A new set of ten recovery codes (returned once) replacing the old set. */
export async function regenerateRecoveryCodes(ctx: Context<"passwords">, userId: string): Promise<string[]> {
  const totp = await ctx.db.totpCredential.findUnique({ where: { userId }, select: { status: true } });
  if (totp?.status !== "enrolled") throw new NotEnrolledError();
  const codes = await replaceRecoveryCodes(ctx, userId);
  return codes;
}

/** The organization's two-factor policy and version; throws when there is no such organization. */
export async function requireTwoFactorPolicy(ctx: Context, organizationId: string) {
  const org = await ctx.db.organization.findUniqueOrThrow({ where: { id: organizationId }, select: { twoFactorPolicy: true, version: true } });
  return { organizationId, policy: org.twoFactorPolicy as TwoFactorPolicy, version: org.version };
}

/** Sets the policy; with `expectedVersion` the write fails with StaleVersionError if the organization changed. */
export async function setTwoFactorPolicy(
  ctx: Context<"cache">,
  input: { organizationId: string; policy: TwoFactorPolicy; expectedVersion?: number },
) {
  const prisma = ctx.db;
  const updated = await prisma.organization.updateMany({
    where: { id: input.organizationId, ...(input.expectedVersion !== undefined ? { version: input.expectedVersion } : {}) },
    data: { twoFactorPolicy: input.policy, version: { increment: 1 } },
  });
  if (updated.count !== 1) throw new StaleVersionError();
  const org = await prisma.organization.findUniqueOrThrow({ where: { id: input.organizationId } });
  ctx.afterCommit(() => invalidateOrganization(ctx.cache, org));
  return { organizationId: org.id, policy: org.twoFactorPolicy as TwoFactorPolicy, version: org.version };
}

/** Per organization: users, users with TOTP, users with email codes, users with recovery codes left, users with a passkey. */
export async function getTwoFactorSummary(ctx: Context) {
  const rows = await ctx.db.$queryRaw<
    Array<{ organizationId: string; slug: string; policy: string; users: bigint; totp: bigint; email: bigint; recovery: bigint; passkey: bigint }>
  >`
    SELECT o."id" AS "organizationId", o."slug"::text AS "slug", o."twoFactorPolicy" AS "policy",
      (SELECT count(*) FROM "User" u WHERE u."organizationId" = o."id") AS "users",
      (SELECT count(*) FROM "TotpCredential" t JOIN "User" u ON u."id" = t."userId" WHERE u."organizationId" = o."id" AND t."status" = 'enrolled') AS "totp",
      (SELECT count(*) FROM "User" u WHERE u."organizationId" = o."id" AND u."emailOtpEnabled") AS "email",
      (SELECT count(DISTINCT r."userId") FROM "RecoveryCode" r JOIN "User" u ON u."id" = r."userId" WHERE u."organizationId" = o."id" AND r."usedAt" IS NULL) AS "recovery",
      (SELECT count(DISTINCT p."userId") FROM "Passkey" p WHERE p."organizationId" = o."id") AS "passkey"
    FROM "Organization" o WHERE o."status" <> 'deleted' ORDER BY o."slug"`;
  return rows.map((r) => ({
    organizationId: r.organizationId,
    slug: r.slug,
    policy: r.policy,
    users: Number(r.users),
    byMethod: { totp: Number(r.totp), email: Number(r.email), recoveryCodes: Number(r.recovery), passkey: Number(r.passkey) },
  }));
}
