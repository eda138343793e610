import { Prisma, type Invitation as InvitationRow, type User as UserRow } from "~/generated/prisma/client";
import type { Invitation, Invite, User, UserCreate, UserExport, UserUpdate } from "~/schemas/user";
import { InvitationConflictError, InvitationPendingError, inviteUser, previewInvitation, resendInvitation, type InvitationOutcome } from "../../auth/invitations";
import { checkNewPassword, type PasswordCheck } from "../../auth/password-policy";
import { legacyFamily, parseImportedHash, readLegacyPassword, WEAK_LEGACY_SCHEMES } from "../../auth/legacy-hashes";
import { passwordLimitKey } from "../../sign-in/methods/password";
import { invalidateUser } from "../../directory/users";
import { endUserSessions } from "../../oidc/storage/sessions";
import type { Context } from "../../context";
import { compareAndSet } from "../../db/compare-and-set";
import { conflict, notFound, staleEtag, validation } from "../../errors";
import { boundedCount, COUNT_BOUND, listMode, listPage, type ListQuery, type Page } from "../http/pagination";

/**
 * Users of the Admin API, organization-scoped and by id. The representation never carries the
 * password hash; every write bumps `version` (the ETag) and drops the cached user.
 */
export function toUser(row: UserRow): User {
  return {
    id: row.id,
    organizationId: row.organizationId,
    email: row.email,
    givenName: row.givenName,
    familyName: row.familyName,
    emailVerified: row.emailVerified,
    status: row.status as User["status"],
    locale: row.locale,
    hasPassword: row.passwordHash !== null,
    passwordScheme: passwordScheme(row),
    lockedUntil: row.lockedUntil?.toISOString() ?? null,
    lastLoginAt: row.lastLoginAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** How the user's password is held (decision 085): null without one. */
export function passwordScheme(row: Pick<UserRow, "passwordHash" | "legacyPassword">): string | null {
  if (row.passwordHash === null) return null;
  if (row.legacyPassword === null) return "argon2id";
  const legacy = readLegacyPassword(row.legacyPassword);
  return `imported:${legacy ? legacyFamily(legacy) : "unknown"}`;
}

/** Whether the user's imported password is of a weak scheme (the audit entry of its import says so). */
export function hasWeakImport(row: Pick<UserRow, "legacyPassword">): boolean {
  const legacy = readLegacyPassword(row.legacyPassword);
  return legacy !== null && WEAK_LEGACY_SCHEMES.has(legacy.scheme);
}

/** An organization users can be managed in: it exists and is not deleted. */
export async function requireManagedOrganization(ctx: Context, organizationId: string) {
  const org = await ctx.db.organization.findUnique({ where: { id: organizationId }, select: { id: true, slug: true, name: true, status: true } });
  if (!org || org.status === "deleted") throw notFound("organization");
  return org;
}

/**
 * The user `id`, optionally required to belong to `organizationId` (organization-scoped routes).
 * Users of a deleted organization are gone from the API.
 */
export async function requireUser(ctx: Context, id: string, organizationId?: string): Promise<UserRow> {
  const row = await ctx.db.user.findUnique({ where: { id }, include: { organization: { select: { status: true } } } });
  if (!row || row.organization.status === "deleted" || (organizationId !== undefined && row.organizationId !== organizationId)) throw notFound("user");
  const { organization: _org, ...user } = row;
  return user;
}

export interface UserListQuery extends ListQuery {
  q?: string | undefined;
  status?: "active" | "inactive" | undefined;
  locked?: boolean | undefined;
  sort?: "createdAt" | "email" | "familyName" | "lastLoginAt" | undefined;
}

function userOrder(sort: NonNullable<UserListQuery["sort"]>, order: "asc" | "desc"): Prisma.UserOrderByWithRelationInput {
  switch (sort) {
    case "email":
      return { email: order };
    case "familyName":
      return { familyName: { sort: order, nulls: "last" } };
    case "lastLoginAt":
      return { lastLoginAt: { sort: order, nulls: "last" } };
    default:
      return { createdAt: order };
  }
}

/**
 * The organization's number of users, kept by triggers on "User" in the transaction of every
 * insert and delete (table OrganizationUserCount, decision 075): one row instead of a count of
 * every user. An organization that never had a user has no row yet.
 */
export async function countOrganizationUsers(ctx: Context, organizationId: string): Promise<number> {
  const row = await ctx.db.organizationUserCount.findUnique({ where: { organizationId }, select: { users: true } });
  return row?.users ?? 0;
}

/**
 * The list's total is exact without a filter (the kept count); a filtered list (search, status,
 * locked) counts its matches up to `countBound` and past it says "at least" (decision 075).
 */
export async function listUsers(ctx: Context, organizationId: string, query: UserListQuery, { countBound = COUNT_BOUND }: { countBound?: number } = {}): Promise<Page<User>> {
  await requireManagedOrganization(ctx, organizationId);
  const prisma = ctx.db;
  const q = query.q;
  const where: Prisma.UserWhereInput = {
    organizationId,
    ...(query.status ? { status: query.status } : {}),
    ...(query.locked ? { lockedUntil: { gt: new Date() } } : {}),
    ...(q
      ? {
          // Each condition as its trigram index answers it (decision 069): emails are stored
          // lower-case, so a case-sensitive LIKE on the lower-cased text finds them all.
          OR: [
            { email: { contains: q.toLowerCase() } },
            { givenName: { contains: q, mode: "insensitive" } },
            { familyName: { contains: q, mode: "insensitive" } },
          ],
        }
      : {}),
  };
  const order = query.order ?? "asc";
  const sort = query.sort ?? "createdAt";
  const page = await listPage(listMode(query), {
    count: () =>
      q || query.status || query.locked ? boundedCount((take) => prisma.user.count({ where, take }), countBound) : countOrganizationUsers(ctx, organizationId),
    offset: (skip, take) =>
      prisma.user.findMany({ where, orderBy: [userOrder(sort, order), { id: order }], skip, take }),
    after: (afterId, take) =>
      prisma.user.findMany({ where: { ...where, ...(afterId ? { id: order === "asc" ? { gt: afterId } : { lt: afterId } } : {}) }, orderBy: { id: order }, take }),
  });
  return { ...page, data: page.data.map(toUser) };
}

const PASSWORD_MESSAGES: Record<NonNullable<PasswordCheck["problem"]>, (limit?: number) => string> = {
  too_short: (limit) => `is too short: use at least ${limit} characters`,
  too_long: (limit) => `is too long: use at most ${limit} characters`,
  breached: () => "appears in a list of breached passwords: choose another",
  contains_email: () => "must not contain the email address or its name part",
  contains_organization: () => "must not contain the organization's name",
};

/**
 * NIST SP 800-63B check of a new password, with the configured minimum length (the same one
 * the reset and invitation pages apply); a refusal is 422 naming the reason.
 */
export async function assertPasswordPolicy(ctx: Context<"settings">, password: string, account: { email: string; organizationId: string }) {
  const organization = await ctx.db.organization.findUnique({ where: { id: account.organizationId }, select: { name: true } });
  const minLength = await ctx.settings.get("auth.passwordMinLength");
  const check = checkNewPassword(password, { minLength, email: account.email, ...(organization ? { organizationName: organization.name } : {}) });
  if (!check.ok) throw validation([{ field: "password", message: PASSWORD_MESSAGES[check.problem!](check.limit) }], "The password does not meet the password policy.");
}

/** What creating and rewriting a user needs: the password policy and hasher, and the user cache. */
type UserWriteContext = Context<"settings" | "passwords" | "cache">;
/** Writes that end the user's sessions also reach the store. */
type UserSessionsContext = UserWriteContext & Context<"store" | "logoutNotices">;

export async function createUser(ctx: UserWriteContext, organizationId: string, input: UserCreate): Promise<UserRow> {
  if (input.organizationId !== undefined && input.organizationId !== organizationId) {
    throw validation([{ field: "organizationId", message: "must match the organization in the path" }]);
  }
  await requireManagedOrganization(ctx, organizationId);
  if (input.password !== undefined && input.importedPasswordHash !== undefined) {
    throw validation([{ field: "importedPasswordHash", message: "must not be sent with password: send one of them" }]);
  }
  if (input.allowWeakLegacyHashes !== undefined && input.importedPasswordHash === undefined) {
    throw validation([{ field: "allowWeakLegacyHashes", message: "applies only with importedPasswordHash" }]);
  }
  if (input.password !== undefined) await assertPasswordPolicy(ctx, input.password, { email: input.email, organizationId });
  // An imported hash is never stored: Porta's Argon2id wraps it, beside its algorithm's parameters (decision 085).
  const imported = input.importedPasswordHash !== undefined ? parseImportedHash(input.importedPasswordHash, { allowWeak: input.allowWeakLegacyHashes === true }) : null;
  const passwordHash = input.password !== undefined ? await ctx.passwords.hash(input.password) : imported ? await ctx.passwords.hash(imported.secret) : null;
  const row = await ctx.db.user.create({
    data: {
      organizationId,
      email: input.email,
      givenName: input.givenName ?? null,
      familyName: input.familyName ?? null,
      emailVerified: input.emailVerified ?? false,
      locale: input.locale ?? null,
      passwordHash,
      legacyPassword: imported ? imported.legacy : Prisma.DbNull,
    },
  });
  ctx.afterCommit(() => invalidateUser(ctx.cache, row.id));
  return row;
}

/**
 * Writes the user with optimistic concurrency: with `expectedVersion` (If-Match) the row must
 * still have it, otherwise 409. Every write bumps the version and drops the cached user.
 */
async function writeUser(ctx: Context<"cache">, user: UserRow, data: Prisma.UserUpdateManyMutationInput, expectedVersion: number | undefined): Promise<UserRow> {
  const prisma = ctx.db;
  await compareAndSet(
    { ifMatch: expectedVersion },
    (guard) => prisma.user.updateMany({ where: { id: user.id, ...guard }, data: { ...data, version: { increment: 1 } } }),
    async () => ((await prisma.user.findUnique({ where: { id: user.id }, select: { id: true } })) ? staleEtag() : notFound("user")),
  );
  ctx.afterCommit(() => invalidateUser(ctx.cache, user.id));
  return prisma.user.findUniqueOrThrow({ where: { id: user.id } });
}

/** The user as read (by id, or within its organization: the caller's scope decides who is found). */
export async function updateUser(ctx: Context<"cache">, user: UserRow, input: UserUpdate, expectedVersion: number | undefined): Promise<UserRow> {
  const emailChanged = input.email !== undefined && input.email !== user.email;
  return writeUser(
    ctx,
    user,
    {
      ...input,
      // A new address is not verified until someone says so.
      ...(emailChanged && input.emailVerified === undefined ? { emailVerified: false } : {}),
    },
    expectedVersion,
  );
}

function refuseSelf(user: UserRow, adminId: string, what: string) {
  if (user.id === adminId) throw conflict("self_modification", `You cannot ${what} your own account.`);
}

export async function setPassword(ctx: UserSessionsContext, user: UserRow, password: string, expectedVersion: number | undefined): Promise<UserRow> {
  await assertPasswordPolicy(ctx, password, user);
  const passwordHash = await ctx.passwords.hash(password);
  const row = await writeUser(ctx, user, { passwordHash, legacyPassword: Prisma.DbNull }, expectedVersion);
  await endUserSessions(ctx, user.organizationId, user.id);
  return row;
}

export async function clearPassword(ctx: Context<"cache" | "store" | "logoutNotices">, user: UserRow, expectedVersion: number | undefined): Promise<UserRow> {
  const row = await writeUser(ctx, user, { passwordHash: null, legacyPassword: Prisma.DbNull }, expectedVersion);
  await endUserSessions(ctx, user.organizationId, user.id);
  return row;
}

/**
 * Removes the passwords still on an imported hash of the organization's users created before
 * `createdBefore` (decision 085): one statement, so a sign-in that replaces a hash at the same
 * moment either comes first (and its user keeps the new password) or finds no password.
 */
export async function expireImportedPasswords(ctx: Context<"cache">, organizationId: string, createdBefore: Date): Promise<number> {
  await requireManagedOrganization(ctx, organizationId);
  const rows = await ctx.db.$queryRaw<Array<{ id: string }>>`
    UPDATE "User" SET "passwordHash" = NULL, "legacyPassword" = NULL, "version" = "version" + 1, "updatedAt" = now()
    WHERE "organizationId" = ${organizationId}::uuid AND "legacyPassword" IS NOT NULL AND "createdAt" < ${createdBefore}
    RETURNING "id"::text AS "id"`;
  ctx.afterCommit(() => Promise.all(rows.map((row) => invalidateUser(ctx.cache, row.id))).then(() => undefined));
  return rows.length;
}

export function verifyEmail(ctx: Context<"cache">, user: UserRow, expectedVersion: number | undefined): Promise<UserRow> {
  return writeUser(ctx, user, { emailVerified: true }, expectedVersion);
}

/** Activation also lifts a running lockout, so it is the administrator's way to unlock an account. */
export function activateUser(ctx: Context<"cache">, user: UserRow, expectedVersion: number | undefined): Promise<UserRow> {
  return writeUser(ctx, user, { status: "active", failedLoginCount: 0, lockedUntil: null }, expectedVersion);
}

/**
 * Lifts a running lockout: the account's failure count and lock, and the per-account password
 * limit of its address (strangers' attempts while it was locked would otherwise refuse the
 * owner's next try). The limiter's counter is reset after the commit: it uses the shared client.
 */
export async function unlockUser(ctx: Context<"cache" | "limits">, user: UserRow, expectedVersion: number | undefined): Promise<UserRow> {
  const row = await writeUser(ctx, user, { failedLoginCount: 0, lockedUntil: null }, expectedVersion);
  ctx.afterCommit(() => ctx.limits.reset("passwordLogin", passwordLimitKey(user.organizationId, user.email)));
  return row;
}

/** Deactivation ends the user's sessions and tokens at once. */
export async function deactivateUser(ctx: Context<"cache" | "store" | "logoutNotices">, user: UserRow, adminId: string, expectedVersion: number | undefined): Promise<UserRow> {
  refuseSelf(user, adminId, "deactivate");
  const row = await writeUser(ctx, user, { status: "inactive" }, expectedVersion);
  await endUserSessions(ctx, user.organizationId, user.id);
  return row;
}

export async function deleteUser(ctx: Context<"cache" | "store" | "logoutNotices">, user: UserRow, adminId: string, expectedVersion: number | undefined): Promise<void> {
  refuseSelf(user, adminId, "delete");
  await compareAndSet(
    { ifMatch: expectedVersion },
    (guard) => ctx.db.user.deleteMany({ where: { id: user.id, ...guard } }),
    () => (expectedVersion !== undefined ? staleEtag() : notFound("user")),
  );
  ctx.afterCommit(() => invalidateUser(ctx.cache, user.id));
  await endUserSessions(ctx, user.organizationId, user.id);
}

async function invitationInput(ctx: Context, organizationId: string, input: Invite, invitedBy: string) {
  if (input.organizationId !== undefined && input.organizationId !== organizationId) {
    throw validation([{ field: "organizationId", message: "must match the organization in the path" }]);
  }
  await requireManagedOrganization(ctx, organizationId);
  const roles = [...new Set(input.roles ?? [])];
  if (roles.length > 0) {
    const known = await ctx.db.role.findMany({ where: { organizationId, name: { in: roles } }, select: { name: true } });
    const missing = roles.filter((r) => !known.some((k) => k.name === r));
    if (missing.length > 0) throw validation(missing.map((name) => ({ field: `roles.${roles.indexOf(name)}`, message: `no role named ${name} in this organization` })));
  }
  const existing = await ctx.db.user.findUnique({ where: { organizationId_email: { organizationId, email: input.email } }, select: { id: true } });
  if (existing) throw userExists();
  return {
    organizationId,
    email: input.email,
    givenName: input.givenName,
    familyName: input.familyName,
    roles,
    language: input.locale,
    invitedBy,
  };
}

const userExists = () => conflict("user_exists", "A user with this email already exists in the organization.", [{ field: "email", message: "already taken" }]);

export async function invite(ctx: Context<"tokens">, organizationId: string, input: Invite, invitedBy: string): Promise<InvitationOutcome> {
  try {
    return await inviteUser(ctx, await invitationInput(ctx, organizationId, input, invitedBy));
  } catch (error) {
    if (error instanceof InvitationConflictError) throw userExists();
    if (error instanceof InvitationPendingError) throw invitationPending();
    throw error;
  }
}

/** 409 rather than 422: the request is well-formed, it collides with a stored invitation (like `user_exists`). */
const invitationPending = () =>
  conflict("invitation_pending", "An invitation to this address is pending: resend or revoke it instead.", [{ field: "email", message: "has a pending invitation" }]);

export function toInvitation(row: InvitationRow, now = new Date()): Invitation {
  return {
    id: row.id,
    organizationId: row.organizationId,
    email: row.email,
    givenName: row.givenName,
    familyName: row.familyName,
    roles: row.roles,
    language: row.language,
    invitedBy: row.invitedBy,
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
    expired: row.expiresAt <= now,
  };
}

/** The organization's invitations not accepted yet (expired ones included, flagged), newest first. */
export async function listInvitations(ctx: Context, organizationId: string, query: ListQuery): Promise<Page<Invitation>> {
  await requireManagedOrganization(ctx, organizationId);
  const where: Prisma.InvitationWhereInput = { organizationId, acceptedAt: null };
  const page = await listPage(listMode(query), {
    count: () => ctx.db.invitation.count({ where }),
    offset: (skip, take) => ctx.db.invitation.findMany({ where, orderBy: [{ createdAt: "desc" }, { id: "desc" }], skip, take }),
    after: (afterId, take) => ctx.db.invitation.findMany({ where: { ...where, ...(afterId ? { id: { lt: afterId } } : {}) }, orderBy: { id: "desc" }, take }),
  });
  const now = new Date();
  return { ...page, data: page.data.map((row) => toInvitation(row, now)) };
}

/** An invitation of the organization that is not accepted yet (an accepted one is the user's now). */
export async function requirePendingInvitation(ctx: Context, organizationId: string, invitationId: string): Promise<InvitationRow> {
  await requireManagedOrganization(ctx, organizationId);
  const row = await ctx.db.invitation.findFirst({ where: { id: invitationId, organizationId, acceptedAt: null } });
  if (!row) throw notFound("invitation");
  return row;
}

export async function resendPendingInvitation(ctx: Context, invitation: InvitationRow): Promise<InvitationOutcome> {
  try {
    return await resendInvitation(ctx, invitation);
  } catch (error) {
    if (error instanceof InvitationConflictError) throw userExists();
    throw error;
  }
}

/** Revoking deletes the invitation: its link stops working at once (the audit entry keeps the record). */
export async function revokeInvitation(ctx: Context, invitation: InvitationRow): Promise<void> {
  const deleted = await ctx.db.invitation.deleteMany({ where: { id: invitation.id, acceptedAt: null } });
  if (deleted.count !== 1) throw notFound("invitation");
}

export async function invitePreview(ctx: Context<"config">, organizationId: string, input: Invite, invitedBy: string) {
  return previewInvitation(ctx, await invitationInput(ctx, organizationId, input, invitedBy));
}

const EXPORT_AUDIT_LIMIT = 10_000;

/** Everything Porta holds about the user, for a data-subject request. Never a hash or a token. */
export async function exportUser(ctx: Context, user: UserRow): Promise<UserExport> {
  const prisma = ctx.db;
  const [organization, roles, claimValues, totp, recoveryTotal, recoveryRemaining, invitations, tokens, auditEntries] = await Promise.all([
    prisma.organization.findUniqueOrThrow({ where: { id: user.organizationId }, select: { id: true, slug: true, name: true } }),
    prisma.userRole.findMany({
      where: { userId: user.id },
      orderBy: { createdAt: "asc" },
      select: {
        createdAt: true,
        role: { select: { id: true, name: true, description: true, permissions: { select: { permission: { select: { name: true } } } } } },
      },
    }),
    prisma.customClaimValue.findMany({
      where: { userId: user.id },
      select: { value: true, updatedAt: true, claim: { select: { id: true, claimName: true, claimType: true, application: { select: { id: true, name: true } } } } },
    }),
    prisma.totpCredential.findUnique({ where: { userId: user.id }, select: { status: true, enrolledAt: true } }),
    prisma.recoveryCode.count({ where: { userId: user.id } }),
    prisma.recoveryCode.count({ where: { userId: user.id, usedAt: null } }),
    prisma.invitation.findMany({
      where: { organizationId: user.organizationId, OR: [{ acceptedUserId: user.id }, { email: user.email }] },
      orderBy: { createdAt: "asc" },
      select: { id: true, createdAt: true, acceptedAt: true, roles: true },
    }),
    prisma.oidcPayload.findMany({
      where: { organizationId: user.organizationId, accountId: user.id },
      orderBy: { createdAt: "asc" },
      select: { model: true, createdAt: true, expiresAt: true },
    }),
    prisma.auditEntry.findMany({
      where: {
        OR: [
          { targetType: "user", targetId: user.id },
          { actorType: "user", actorId: user.id },
          // Failed logins and mail requests name the address, not the account.
          { organizationId: user.organizationId, data: { path: ["email"], equals: user.email } },
        ],
      },
      orderBy: { id: "desc" },
      take: EXPORT_AUDIT_LIMIT + 1,
      select: { id: true, createdAt: true, eventType: true, actorType: true, actorId: true, targetType: true, targetId: true, ip: true, data: true },
    }),
  ]);
  return {
    exportedAt: new Date().toISOString(),
    user: toUser(user),
    organization,
    scimExternalId: user.scimExternalId,
    roles: roles.map((r) => ({ id: r.role.id, name: r.role.name, description: r.role.description, assignedAt: r.createdAt.toISOString() })),
    permissions: [...new Set(roles.flatMap((r) => r.role.permissions.map((p) => p.permission.name)))].sort(),
    claimValues: claimValues.map((v) => ({
      claimId: v.claim.id,
      claimName: v.claim.claimName,
      claimType: v.claim.claimType,
      applicationId: v.claim.application.id,
      applicationName: v.claim.application.name,
      value: v.value,
      updatedAt: v.updatedAt.toISOString(),
    })),
    twoFactor: {
      totp: { status: (totp?.status as "pending" | "enrolled" | undefined) ?? "none", enrolledAt: totp?.enrolledAt?.toISOString() ?? null },
      emailOtpEnabled: user.emailOtpEnabled,
      recoveryCodes: { total: recoveryTotal, remaining: recoveryRemaining },
    },
    invitations: invitations.map((i) => ({ id: i.id, createdAt: i.createdAt.toISOString(), acceptedAt: i.acceptedAt?.toISOString() ?? null, roles: i.roles })),
    tokens: tokens.map((t) => ({ model: t.model, createdAt: t.createdAt.toISOString(), expiresAt: t.expiresAt?.toISOString() ?? null })),
    auditEntries: auditEntries.slice(0, EXPORT_AUDIT_LIMIT).map((e) => ({ ...e, createdAt: e.createdAt.toISOString() })),
    auditEntriesTruncated: auditEntries.length > EXPORT_AUDIT_LIMIT,
  };
}
