import type { Prisma, User as UserRow } from "~/generated/prisma/client";
import type { Invite, User, UserCreate, UserExport, UserUpdate } from "~/schemas/user";
import { InvitationConflictError, inviteUser, previewInvitation, type InvitationOutcome } from "../../auth/invitations";
import { checkNewPassword, type PasswordCheck } from "../../auth/password-policy";
import { invalidateUser } from "../../directory/users";
import { endUserSessions } from "../../oidc/sessions";
import type { Services } from "../../services";
import { conflict, notFound, staleEtag, validation } from "../../errors";
import { listMode, listPage, type ListQuery, type Page } from "../http/pagination";

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
    lockedUntil: row.lockedUntil?.toISOString() ?? null,
    lastLoginAt: row.lastLoginAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** An organization users can be managed in: it exists and is not deleted. */
export async function requireOrganization(services: Services, organizationId: string) {
  const org = await services.db.prisma.organization.findUnique({ where: { id: organizationId }, select: { id: true, slug: true, name: true, status: true } });
  if (!org || org.status === "deleted") throw notFound("organization");
  return org;
}

/**
 * The user `id`, optionally required to belong to `organizationId` (organization-scoped routes).
 * Users of a deleted organization are gone from the API.
 */
export async function getUser(services: Services, id: string, organizationId?: string): Promise<UserRow> {
  const row = await services.db.prisma.user.findUnique({ where: { id }, include: { organization: { select: { status: true } } } });
  if (!row || row.organization.status === "deleted" || (organizationId !== undefined && row.organizationId !== organizationId)) throw notFound("user");
  const { organization: _org, ...user } = row;
  return user;
}

export interface UserListQuery extends ListQuery {
  q?: string | undefined;
  status?: "active" | "inactive" | undefined;
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

export async function listUsers(services: Services, organizationId: string, query: UserListQuery): Promise<Page<User>> {
  await requireOrganization(services, organizationId);
  const { prisma } = services.db;
  const q = query.q;
  const where: Prisma.UserWhereInput = {
    organizationId,
    ...(query.status ? { status: query.status } : {}),
    ...(q
      ? {
          OR: [
            { email: { contains: q, mode: "insensitive" } },
            { givenName: { contains: q, mode: "insensitive" } },
            { familyName: { contains: q, mode: "insensitive" } },
          ],
        }
      : {}),
  };
  const order = query.order ?? "asc";
  const sort = query.sort ?? "createdAt";
  const page = await listPage(listMode(query), {
    count: () => prisma.user.count({ where }),
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
  contains_email: () => "must not be the email address",
};

/**
 * NIST SP 800-63B check of a new password, with the configured minimum length (the same one
 * the reset and invitation pages apply); a refusal is 422 naming the reason.
 */
export async function assertPasswordPolicy(services: Services, password: string, email: string) {
  const check = checkNewPassword(password, { minLength: await services.settings.get("auth.passwordMinLength"), email });
  if (!check.ok) throw validation([{ field: "password", message: PASSWORD_MESSAGES[check.problem!](check.limit) }], "The password does not meet the password policy.");
}

export async function createUser(services: Services, organizationId: string, input: UserCreate): Promise<UserRow> {
  if (input.organizationId !== undefined && input.organizationId !== organizationId) {
    throw validation([{ field: "organizationId", message: "must match the organization in the path" }]);
  }
  await requireOrganization(services, organizationId);
  if (input.password !== undefined) await assertPasswordPolicy(services, input.password, input.email);
  const passwordHash = input.password !== undefined ? await services.passwords.hash(input.password) : null;
  const row = await services.db.prisma.user.create({
    data: {
      organizationId,
      email: input.email,
      givenName: input.givenName ?? null,
      familyName: input.familyName ?? null,
      emailVerified: input.emailVerified ?? false,
      locale: input.locale ?? null,
      passwordHash,
    },
  });
  await invalidateUser(services.cache, row.id);
  return row;
}

/**
 * Writes the user with optimistic concurrency: with `expectedVersion` (If-Match) the row must
 * still have it, otherwise 409. Every write bumps the version and drops the cached user.
 */
async function writeUser(services: Services, user: UserRow, data: Prisma.UserUpdateManyMutationInput, expectedVersion: number | undefined): Promise<UserRow> {
  const { prisma } = services.db;
  const updated = await prisma.user.updateMany({
    where: { id: user.id, ...(expectedVersion !== undefined ? { version: expectedVersion } : {}) },
    data: { ...data, version: { increment: 1 } },
  });
  await invalidateUser(services.cache, user.id);
  if (updated.count !== 1) {
    const exists = await prisma.user.findUnique({ where: { id: user.id }, select: { id: true } });
    throw exists ? staleEtag() : notFound("user");
  }
  return prisma.user.findUniqueOrThrow({ where: { id: user.id } });
}

export async function updateUser(services: Services, id: string, input: UserUpdate, expectedVersion: number | undefined): Promise<UserRow> {
  const user = await getUser(services, id);
  const emailChanged = input.email !== undefined && input.email !== user.email;
  return writeUser(
    services,
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

export async function setPassword(services: Services, user: UserRow, password: string, expectedVersion: number | undefined): Promise<UserRow> {
  await assertPasswordPolicy(services, password, user.email);
  const passwordHash = await services.passwords.hash(password);
  const row = await writeUser(services, user, { passwordHash }, expectedVersion);
  await endUserSessions(services.db.prisma, services.store, user.organizationId, user.id);
  return row;
}

export async function clearPassword(services: Services, user: UserRow, expectedVersion: number | undefined): Promise<UserRow> {
  const row = await writeUser(services, user, { passwordHash: null }, expectedVersion);
  await endUserSessions(services.db.prisma, services.store, user.organizationId, user.id);
  return row;
}

export function verifyEmail(services: Services, user: UserRow, expectedVersion: number | undefined): Promise<UserRow> {
  return writeUser(services, user, { emailVerified: true }, expectedVersion);
}

/** Activation also lifts a running lockout, so it is the administrator's way to unlock an account. */
export function activateUser(services: Services, user: UserRow, expectedVersion: number | undefined): Promise<UserRow> {
  return writeUser(services, user, { status: "active", failedLoginCount: 0, lockedUntil: null }, expectedVersion);
}

/** Deactivation ends the user's sessions and tokens at once. */
export async function deactivateUser(services: Services, user: UserRow, adminId: string, expectedVersion: number | undefined): Promise<UserRow> {
  refuseSelf(user, adminId, "deactivate");
  const row = await writeUser(services, user, { status: "inactive" }, expectedVersion);
  await endUserSessions(services.db.prisma, services.store, user.organizationId, user.id);
  return row;
}

export async function deleteUser(services: Services, user: UserRow, adminId: string, expectedVersion: number | undefined): Promise<void> {
  refuseSelf(user, adminId, "delete");
  const deleted = await services.db.prisma.user.deleteMany({ where: { id: user.id, ...(expectedVersion !== undefined ? { version: expectedVersion } : {}) } });
  await invalidateUser(services.cache, user.id);
  if (deleted.count !== 1) throw expectedVersion !== undefined ? staleEtag() : notFound("user");
  await endUserSessions(services.db.prisma, services.store, user.organizationId, user.id);
}

async function invitationInput(services: Services, organizationId: string, input: Invite, invitedBy: string) {
  if (input.organizationId !== undefined && input.organizationId !== organizationId) {
    throw validation([{ field: "organizationId", message: "must match the organization in the path" }]);
  }
  await requireOrganization(services, organizationId);
  const roles = [...new Set(input.roles ?? [])];
  if (roles.length > 0) {
    const known = await services.db.prisma.role.findMany({ where: { organizationId, name: { in: roles } }, select: { name: true } });
    const missing = roles.filter((r) => !known.some((k) => k.name === r));
    if (missing.length > 0) throw validation(missing.map((name) => ({ field: `roles.${roles.indexOf(name)}`, message: `no role named ${name} in this organization` })));
  }
  const existing = await services.db.prisma.user.findUnique({ where: { organizationId_email: { organizationId, email: input.email } }, select: { id: true } });
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

export async function invite(services: Services, organizationId: string, input: Invite, invitedBy: string): Promise<InvitationOutcome> {
  try {
    return await inviteUser(services, await invitationInput(services, organizationId, input, invitedBy));
  } catch (error) {
    if (error instanceof InvitationConflictError) throw userExists();
    throw error;
  }
}

export async function invitePreview(services: Services, organizationId: string, input: Invite, invitedBy: string) {
  return previewInvitation(services, await invitationInput(services, organizationId, input, invitedBy));
}

const EXPORT_AUDIT_LIMIT = 10_000;

/** Everything Porta holds about the user, for a data-subject request. Never a hash or a token. */
export async function exportUser(services: Services, user: UserRow): Promise<UserExport> {
  const { prisma } = services.db;
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
