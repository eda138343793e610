import { UuidSchema } from "~/schemas/uuid";
import type { AuditEventType } from "~/schemas/audit-events";
import { z } from "zod";
import {
  ImpersonateSchema,
  ImpersonationSchema,
  InvitationOutcomeSchema,
  MAX_IMPERSONATION_MINUTES,
  InvitationPreviewSchema,
  InvitationSchema,
  InviteSchema,
  ReportCompromisedPasswordSchema,
  SetPasswordSchema,
  ExpireImportedPasswordsSchema,
  ExpiredImportedPasswordsSchema,
  UserBlockIdSchema,
  UserCreateSchema,
  UserDetailSchema,
  UserExportSchema,
  UserSchema,
  UserUpdateSchema,
  USER_STATUS_VALUES,
} from "~/schemas/user";
import type { User as UserRow } from "~/generated/prisma/client";
import { auditHistory } from "../http/history";
import { HistoryEntrySchema, historyOf, pageOf } from "../http/openapi-shapes";
import { HistoryQuerySchema, ListQuerySchema, MAX_PAGE_SIZE } from "../http/pagination";
import type { AuditEntry, Context } from "../../context";
import { IdParams, operation } from "../http/route";
import {
  activateUser,
  clearPassword,
  createUser,
  deactivateUser,
  deleteUser,
  exportUser,
  requirePendingInvitation,
  requireUser,
  expireImportedPasswords,
  hasWeakImport,
  passwordScheme,
  invite,
  invitePreview,
  listInvitations,
  listUsers,
  resendPendingInvitation,
  revokeInvitation,
  setPassword,
  toUser,
  unlockUser,
  updateUser,
  verifyEmail,
} from "../users/service";
import { impersonateUser } from "../users/impersonation";
import { clearBlock, describeBlocks } from "../users/blocks";

/** User operations of the Admin API: organization-scoped (/organizations/{orgId}/users…) and by id (/users/{id}…). */
const uuid = () => UuidSchema;
const OrgParams = z.object({ orgId: uuid() });
const OrgUserParams = z.object({ orgId: uuid(), userId: uuid() });
const NoQuery = z.object({}).strict();

const ListQuery = ListQuerySchema.extend({
  q: z.string().trim().max(200, "must have at most 200 characters").optional(),
  status: z.enum(USER_STATUS_VALUES).optional(),
  /** `true`: only the users whose sign-in lockout is running now (the organization's "locked" figure). */
  locked: z.enum(["true"]).transform(() => true).optional(),
  sort: z.enum(["createdAt", "email", "familyName", "lastLoginAt"]).optional(),
}).strict();

function auditUser(ctx: Context, eventType: AuditEventType, user: UserRow, change: Record<string, unknown> = {}, changes?: AuditEntry["changes"]) {
  ctx.audit({ eventType, organizationId: user.organizationId, targetType: "user", targetId: user.id, data: { change }, ...(changes ? { changes } : {}) });
}

/** The state operations shared by both path shapes. */
const stateChanges = {
  activate: { summary: "Activate the user (also lifts a running lockout)", event: "user.activated" },
  deactivate: { summary: "Deactivate the user; their sessions and tokens end at once", event: "user.deactivated" },
  unlock: { summary: "Lift the user's sign-in lockout (failed-password count, lock and per-account password limit)", event: "user.unlocked" },
  verifyEmail: { summary: "Mark the user's email address as verified", event: "user.email_verified" },
} as const;

type StateChange = keyof typeof stateChanges;

function runStateChange(kind: StateChange, ctx: Context<"cache" | "store" | "limits" | "logoutNotices">, adminId: string, user: UserRow, ifMatch: number | undefined) {
  switch (kind) {
    case "activate":
      return activateUser(ctx, user, ifMatch);
    case "deactivate":
      return deactivateUser(ctx, user, adminId, ifMatch);
    case "verifyEmail":
      return verifyEmail(ctx, user, ifMatch);
    case "unlock":
      return unlockUser(ctx, user, ifMatch);
  }
}

const stateChangeBody: Record<StateChange, Record<string, unknown>> = {
  activate: { status: "active", lockedUntil: null },
  deactivate: { status: "inactive" },
  verifyEmail: { emailVerified: true },
  unlock: { lockedUntil: null, failedLoginCount: 0 },
};

function orgStateOperation(kind: StateChange, segment: string) {
  return operation({
    method: "POST",
    path: `/organizations/{orgId}/users/{userId}/${segment}`,
    operationId: `users.${kind}`,
    summary: stateChanges[kind].summary,
    tag: "users",
    permission: "admin:user:write",
    organizationScope: [{ in: "path", param: "orgId" }, { in: "entity", param: "userId", owner: "user" }],
    query: NoQuery,
    params: OrgUserParams,
    response: UserSchema,
    handler: async ({ ctx, admin, params, ifMatch }) => {
      const row = await runStateChange(kind, ctx, admin.id, await requireUser(ctx, params.userId, params.orgId), ifMatch);
      auditUser(ctx, stateChanges[kind].event, row, stateChangeBody[kind]);
      return { body: toUser(row) };
    },
  });
}

function byIdStateOperation(kind: StateChange, segment: string) {
  return operation({
    method: "POST",
    path: `/users/{id}/${segment}`,
    operationId: `usersById.${kind}`,
    summary: stateChanges[kind].summary,
    tag: "users",
    permission: "admin:user:write",
    organizationScope: [{ in: "entity", param: "id", owner: "user" }],
    query: NoQuery,
    params: IdParams,
    response: UserSchema,
    handler: async ({ ctx, admin, params, ifMatch }) => {
      const row = await runStateChange(kind, ctx, admin.id, await requireUser(ctx, params.id), ifMatch);
      auditUser(ctx, stateChanges[kind].event, row, stateChangeBody[kind]);
      return { body: toUser(row) };
    },
  });
}

// ---------------------------------------------------------------------------------------------
// Organization-scoped

/** /organizations/{orgId}/users */
export const orgUsersOperations = [
  operation({
    method: "GET",
    path: "/organizations/{orgId}/users",
    operationId: "users.list",
    summary: "List the organization's users (offset or cursor paging, search q on email and name, status filter, locked=true for running lockouts, sorting)",
    tag: "users",
    permission: "admin:user:read",
    organizationScope: [{ in: "path", param: "orgId" }],
    params: OrgParams,
    query: ListQuery,
    response: pageOf(UserSchema),
    handler: async ({ ctx, params, query }) => ({ body: await listUsers(ctx, params.orgId, query) }),
  }),
  operation({
    method: "POST",
    path: "/organizations/{orgId}/users",
    operationId: "users.create",
    summary: "Create a user; a password must satisfy the password policy (NIST SP 800-63B); or importedPasswordHash brings a hash from another system (bcrypt, PBKDF2, scrypt, Firebase, Argon2, SHA-crypt; weak ones with allowWeakLegacyHashes), wrapped in Argon2id and replaced at the first sign-in",
    tag: "users",
    permission: "admin:user:write",
    organizationScope: [{ in: "path", param: "orgId" }],
    query: NoQuery,
    params: OrgParams,
    body: UserCreateSchema,
    response: UserSchema,
    successStatus: 201,
    etag: true,
    handler: async ({ ctx, params, body }) => {
      const row = await createUser(ctx, params.orgId, body);
      const { password: _password, importedPasswordHash: _imported, allowWeakLegacyHashes: _weak, ...change } = body;
      const scheme = passwordScheme(row);
      auditUser(ctx, "user.created", row, {
        ...change,
        hasPassword: row.passwordHash !== null,
        // Named so that the audit's secret-field rule keeps them (they name an algorithm, not a secret).
        ...(scheme?.startsWith("imported:") ? { importedScheme: scheme.slice("imported:".length), weakImport: hasWeakImport(row) } : {}),
      });
      return { body: toUser(row), version: row.version };
    },
  }),
];

/** /organizations/{orgId}/users/expire-imported-passwords (decision 085) */
export const orgImportedPasswordOperations = [
  operation({
    method: "POST",
    path: "/organizations/{orgId}/users/expire-imported-passwords",
    operationId: "users.expireImportedPasswords",
    summary: "Remove the passwords still on an imported hash (never used to sign in here) of the organization's users created before a date; they must reset them",
    tag: "users",
    permission: "admin:user:write",
    organizationScope: [{ in: "path", param: "orgId" }],
    query: NoQuery,
    params: OrgParams,
    body: ExpireImportedPasswordsSchema,
    response: ExpiredImportedPasswordsSchema,
    handler: async ({ ctx, params, body }) => {
      const expired = await expireImportedPasswords(ctx, params.orgId, new Date(body.createdBefore));
      ctx.audit({
        eventType: "user.imported_passwords_expired",
        organizationId: params.orgId,
        targetType: "organization",
        targetId: params.orgId,
        data: { change: { createdBefore: new Date(body.createdBefore).toISOString(), expired } },
      });
      return { body: { expired } };
    },
  }),
];

/** /organizations/{orgId}/users/invite */
export const orgUsersInviteOperations = [
  operation({
    method: "POST",
    path: "/organizations/{orgId}/users/invite",
    operationId: "users.invite",
    summary: "Invite someone by email; the account is created when they accept (409 user_exists when the user exists, 409 invitation_pending when an invitation to the address is pending)",
    tag: "users",
    permission: "admin:user:write",
    organizationScope: [{ in: "path", param: "orgId" }],
    query: NoQuery,
    params: OrgParams,
    body: InviteSchema,
    response: InvitationOutcomeSchema,
    successStatus: 201,
    handler: async ({ ctx, params, body, admin }) => {
      const outcome = await invite(ctx, params.orgId, body, admin.email);
      ctx.audit({
        eventType: "user.invited",
        organizationId: params.orgId,
        targetType: "invitation",
        targetId: outcome.invitationId,
        data: { change: { email: outcome.email, roles: body.roles ?? [], invitationSent: outcome.invitationSent } },
      });
      return {
        body: { invitationId: outcome.invitationId, email: outcome.email, invitationSent: outcome.invitationSent, expiresAt: outcome.expiresAt.toISOString() },
      };
    },
  }),
];

const OrgInvitationParams = z.object({ orgId: uuid(), invitationId: uuid() });

/** /organizations/{orgId}/invitations */
export const orgInvitationsOperations = [
  operation({
    method: "GET",
    path: "/organizations/{orgId}/invitations",
    operationId: "invitations.list",
    summary: "List the organization's invitations not accepted yet, newest first (expired ones flagged; they can be resent)",
    tag: "users",
    permission: "admin:user:read",
    organizationScope: [{ in: "path", param: "orgId" }],
    params: OrgParams,
    query: ListQuerySchema.strict(),
    response: pageOf(InvitationSchema),
    handler: async ({ ctx, params, query }) => ({ body: await listInvitations(ctx, params.orgId, query) }),
  }),
];

/** /organizations/{orgId}/invitations/{invitationId} */
export const orgInvitationOperations = [
  operation({
    method: "DELETE",
    path: "/organizations/{orgId}/invitations/{invitationId}",
    operationId: "invitations.revoke",
    summary: "Revoke an invitation not accepted yet: its link stops working at once",
    tag: "users",
    permission: "admin:user:write",
    organizationScope: [{ in: "path", param: "orgId" }, { in: "entity", param: "invitationId", owner: "invitation" }],
    query: NoQuery,
    params: OrgInvitationParams,
    successStatus: 204,
    handler: async ({ ctx, params }) => {
      const invitation = await requirePendingInvitation(ctx, params.orgId, params.invitationId);
      await revokeInvitation(ctx, invitation);
      ctx.audit({ eventType: "user.invitation_revoked", organizationId: params.orgId, targetType: "invitation", targetId: invitation.id, data: { change: {}, email: invitation.email } });
      return {};
    },
  }),
];

/** /organizations/{orgId}/invitations/{invitationId}/resend */
export const orgInvitationResendOperations = [
  operation({
    method: "POST",
    path: "/organizations/{orgId}/invitations/{invitationId}/resend",
    operationId: "invitations.resend",
    summary: "Send an invitation's mail again, with the same link and a renewed expiry (409 when the address has become a user)",
    tag: "users",
    permission: "admin:user:write",
    organizationScope: [{ in: "path", param: "orgId" }, { in: "entity", param: "invitationId", owner: "invitation" }],
    query: NoQuery,
    params: OrgInvitationParams,
    response: InvitationOutcomeSchema,
    handler: async ({ ctx, params }) => {
      const invitation = await requirePendingInvitation(ctx, params.orgId, params.invitationId);
      const outcome = await resendPendingInvitation(ctx, invitation);
      ctx.audit({
        eventType: "user.invitation_resent",
        organizationId: params.orgId,
        targetType: "invitation",
        targetId: invitation.id,
        data: { change: { expiresAt: outcome.expiresAt.toISOString(), invitationSent: outcome.invitationSent }, email: invitation.email },
      });
      return { body: { invitationId: outcome.invitationId, email: outcome.email, invitationSent: outcome.invitationSent, expiresAt: outcome.expiresAt.toISOString() } };
    },
  }),
];

/** /organizations/{orgId}/users/invite/preview */
export const orgUsersInvitePreviewOperations = [
  operation({
    method: "POST",
    path: "/organizations/{orgId}/users/invite/preview",
    operationId: "users.invitePreview",
    summary: "Render the invitation mail without sending it or storing an invitation",
    tag: "users",
    permission: "admin:user:write",
    organizationScope: [{ in: "path", param: "orgId" }],
    query: NoQuery,
    params: OrgParams,
    body: InviteSchema,
    response: InvitationPreviewSchema,
    handler: async ({ ctx, params, body, admin }) => {
      const preview = await invitePreview(ctx, params.orgId, body, admin.email);
      // Nothing changes; the record says who rendered which mail.
      ctx.audit({ eventType: "user.invitation_previewed", organizationId: params.orgId, targetType: "organization", targetId: params.orgId, data: { change: {}, email: preview.to } });
      return { body: preview };
    },
  }),
];

/** /organizations/{orgId}/users/{userId} */
export const orgUserOperations = [
  operation({
    method: "GET",
    path: "/organizations/{orgId}/users/{userId}",
    operationId: "users.get",
    summary: "Get a user of the organization, with every block that refuses them now (lockout, rate-limit windows of the account and of addresses they used, locked device cookies, refused second factors) and when each ends",
    tag: "users",
    permission: "admin:user:read",
    organizationScope: [{ in: "path", param: "orgId" }, { in: "entity", param: "userId", owner: "user" }],
    query: NoQuery,
    params: OrgUserParams,
    response: UserDetailSchema,
    etag: true,
    handler: async ({ ctx, params }) => {
      const row = await requireUser(ctx, params.userId, params.orgId);
      return { body: { ...toUser(row), blocks: await describeBlocks(ctx, row) }, version: row.version };
    },
  }),
  operation({
    method: "PUT",
    path: "/organizations/{orgId}/users/{userId}",
    operationId: "users.update",
    summary:
      "Update a user of the organization's profile (email unique per organization; a new email is unverified unless emailVerified is sent); If-Match guards against lost updates; another organization's user is 404",
    tag: "users",
    permission: "admin:user:write",
    organizationScope: [{ in: "path", param: "orgId" }, { in: "entity", param: "userId", owner: "user" }],
    query: NoQuery,
    params: OrgUserParams,
    body: UserUpdateSchema,
    response: UserSchema,
    etag: true,
    handler: async ({ ctx, params, body, ifMatch }) => {
      const user = await requireUser(ctx, params.userId, params.orgId);
      const row = await updateUser(ctx, user, body, ifMatch);
      auditUser(ctx, "user.updated", row, body, { before: toUser(user), after: toUser(row) });
      return { body: toUser(row), version: row.version };
    },
  }),
  operation({
    method: "DELETE",
    path: "/organizations/{orgId}/users/{userId}",
    operationId: "users.delete",
    summary: "Delete the user with everything Porta holds for them except the audit trail; their sessions end",
    tag: "users",
    permission: "admin:user:write",
    organizationScope: [{ in: "path", param: "orgId" }, { in: "entity", param: "userId", owner: "user" }],
    query: NoQuery,
    params: OrgUserParams,
    successStatus: 204,
    handler: async ({ ctx, params, admin, ifMatch }) => {
      const user = await requireUser(ctx, params.userId, params.orgId);
      await deleteUser(ctx, user, admin.id, ifMatch);
      auditUser(ctx, "user.deleted", user, { email: user.email });
      return {};
    },
  }),
];

/** /organizations/{orgId}/users/{userId}/password */
export const orgUserPasswordOperations = [
  operation({
    method: "PUT",
    path: "/organizations/{orgId}/users/{userId}/password",
    operationId: "users.setPassword",
    summary: "Set the user's password (password policy applies); their sessions end",
    tag: "users",
    permission: "admin:user:write",
    organizationScope: [{ in: "path", param: "orgId" }, { in: "entity", param: "userId", owner: "user" }],
    query: NoQuery,
    params: OrgUserParams,
    body: SetPasswordSchema,
    response: UserSchema,
    handler: async ({ ctx, params, body, ifMatch }) => {
      const row = await setPassword(ctx, await requireUser(ctx, params.userId, params.orgId), body.password, ifMatch);
      auditUser(ctx, "user.password_set", row, { hasPassword: true });
      return { body: toUser(row) };
    },
  }),
  operation({
    method: "DELETE",
    path: "/organizations/{orgId}/users/{userId}/password",
    operationId: "users.clearPassword",
    summary: "Remove the user's password (they sign in by magic link or reset); their sessions end",
    tag: "users",
    permission: "admin:user:write",
    organizationScope: [{ in: "path", param: "orgId" }, { in: "entity", param: "userId", owner: "user" }],
    query: NoQuery,
    params: OrgUserParams,
    response: UserSchema,
    handler: async ({ ctx, params, ifMatch }) => {
      const row = await clearPassword(ctx, await requireUser(ctx, params.userId, params.orgId), ifMatch);
      auditUser(ctx, "user.password_cleared", row, { hasPassword: false });
      return { body: toUser(row) };
    },
  }),
];

/** /organizations/{orgId}/users/{userId}/password-compromised */
export const orgUserPasswordCompromisedOperations = [
  operation({
    method: "POST",
    path: "/organizations/{orgId}/users/{userId}/password-compromised",
    operationId: "users.reportCompromisedPassword",
    summary:
      "Report the user's password compromised: it is removed (they sign in by reset, magic link or another method) and their sessions end, audited as user.credential_compromised, which Shared Signals streams hear as RISC credential-compromise",
    tag: "users",
    permission: "admin:user:write",
    organizationScope: [{ in: "path", param: "orgId" }, { in: "entity", param: "userId", owner: "user" }],
    query: NoQuery,
    params: OrgUserParams,
    body: ReportCompromisedPasswordSchema,
    response: UserSchema,
    handler: async ({ ctx, params, body, ifMatch }) => {
      const row = await clearPassword(ctx, await requireUser(ctx, params.userId, params.orgId), ifMatch);
      const reason = body?.reason ? { reason: body.reason } : {};
      ctx.audit({ eventType: "user.credential_compromised", organizationId: row.organizationId, targetType: "user", targetId: row.id, data: { credentialType: "password", ...reason } });
      return { body: toUser(row) };
    },
  }),
];

/** /organizations/{orgId}/users/{userId}/verify-email */
export const orgUserVerifyEmailOperations = [orgStateOperation("verifyEmail", "verify-email")];
/** /organizations/{orgId}/users/{userId}/activate */
export const orgUserActivateOperations = [orgStateOperation("activate", "activate")];
/** /organizations/{orgId}/users/{userId}/deactivate */
export const orgUserDeactivateOperations = [orgStateOperation("deactivate", "deactivate")];
/** /organizations/{orgId}/users/{userId}/unlock */
export const orgUserUnlockOperations = [orgStateOperation("unlock", "unlock")];

const CLEAR_BLOCK_SUMMARY =
  "Clear one block that refuses the user (an id from the user's blocks): the lockout, a rate-limit window of the account or of an address, a device cookie's lock or a refused second factor; audited as user.block_cleared. 404 when the block has ended or was cleared";

/** The user after a block was cleared, with the blocks that remain. */
async function clearUserBlock(ctx: Parameters<typeof clearBlock>[0], user: UserRow, blockId: string) {
  const block = await clearBlock(ctx, user, blockId);
  auditUser(ctx, "user.block_cleared", user, { block });
  const row = await requireUser(ctx, user.id);
  return { ...toUser(row), blocks: await describeBlocks(ctx, row) };
}

/** /organizations/{orgId}/users/{userId}/blocks/{blockId} */
export const orgUserBlockOperations = [
  operation({
    method: "DELETE",
    path: "/organizations/{orgId}/users/{userId}/blocks/{blockId}",
    operationId: "users.clearBlock",
    summary: CLEAR_BLOCK_SUMMARY,
    tag: "users",
    permission: "admin:user:write",
    organizationScope: [{ in: "path", param: "orgId" }, { in: "entity", param: "userId", owner: "user" }],
    query: NoQuery,
    params: OrgUserParams.extend({ blockId: UserBlockIdSchema }),
    response: UserDetailSchema,
    handler: async ({ ctx, params }) => ({ body: await clearUserBlock(ctx, await requireUser(ctx, params.userId, params.orgId), params.blockId) }),
  }),
];

/** /organizations/{orgId}/users/{userId}/export */
export const orgUserExportOperations = [
  operation({
    method: "GET",
    path: "/organizations/{orgId}/users/{userId}/export",
    operationId: "users.exportData",
    summary: "Everything Porta holds about the user (profile, roles, claim values, 2FA state, audit entries); never a hash or token",
    tag: "users",
    permission: "admin:user:read",
    organizationScope: [{ in: "path", param: "orgId" }, { in: "entity", param: "userId", owner: "user" }],
    query: NoQuery,
    params: OrgUserParams,
    response: UserExportSchema,
    handler: async ({ ctx, params }) => {
      const user = await requireUser(ctx, params.userId, params.orgId);
      const body = await exportUser(ctx, user);
      ctx.audit({ eventType: "user.exported", organizationId: user.organizationId, targetType: "user", targetId: user.id, data: {} });
      return { body };
    },
  }),
];

/** /organizations/{orgId}/users/{userId}/history */
export const orgUserHistoryOperations = [
  operation({
    method: "GET",
    path: "/organizations/{orgId}/users/{userId}/history",
    operationId: "users.getHistory",
    summary: "The user's history (changes and sign-ins), newest first",
    tag: "users",
    permission: "admin:user:read",
    organizationScope: [{ in: "path", param: "orgId" }, { in: "entity", param: "userId", owner: "user" }],
    params: OrgUserParams,
    query: HistoryQuerySchema,
    response: historyOf(HistoryEntrySchema),
    handler: async ({ ctx, params, query }) => {
      await requireUser(ctx, params.userId, params.orgId);
      return { body: await auditHistory(ctx.db, { targetType: "user", targetId: params.userId }, query) };
    },
  }),
];

// ---------------------------------------------------------------------------------------------
// By id

/** /users/{id} */
export const userByIdOperations = [
  operation({
    method: "GET",
    path: "/users/{id}",
    operationId: "usersById.get",
    summary: "Get a user by id, whatever their organization, with every block that refuses them now and when each ends",
    tag: "users",
    permission: "admin:user:read",
    organizationScope: [{ in: "entity", param: "id", owner: "user" }],
    query: NoQuery,
    params: IdParams,
    response: UserDetailSchema,
    etag: true,
    handler: async ({ ctx, params }) => {
      const row = await requireUser(ctx, params.id);
      return { body: { ...toUser(row), blocks: await describeBlocks(ctx, row) }, version: row.version };
    },
  }),
  operation({
    method: "PUT",
    path: "/users/{id}",
    operationId: "usersById.update",
    summary: "Update a user's profile (email unique per organization; a new email is unverified unless emailVerified is sent); If-Match guards against lost updates",
    tag: "users",
    permission: "admin:user:write",
    organizationScope: [{ in: "entity", param: "id", owner: "user" }],
    query: NoQuery,
    params: IdParams,
    body: UserUpdateSchema,
    response: UserSchema,
    etag: true,
    handler: async ({ ctx, params, body, ifMatch }) => {
      const user = await requireUser(ctx, params.id);
      const row = await updateUser(ctx, user, body, ifMatch);
      auditUser(ctx, "user.updated", row, body, { before: toUser(user), after: toUser(row) });
      return { body: toUser(row), version: row.version };
    },
  }),
];

/** /users/{id}/activate */
export const userByIdActivateOperations = [byIdStateOperation("activate", "activate")];
/** /users/{id}/deactivate */
export const userByIdDeactivateOperations = [byIdStateOperation("deactivate", "deactivate")];
/** /users/{id}/unlock */
export const userByIdUnlockOperations = [byIdStateOperation("unlock", "unlock")];
/** /users/{id}/verify-email */
export const userByIdVerifyEmailOperations = [byIdStateOperation("verifyEmail", "verify-email")];

/** /users/{id}/blocks/{blockId} */
export const userByIdBlockOperations = [
  operation({
    method: "DELETE",
    path: "/users/{id}/blocks/{blockId}",
    operationId: "usersById.clearBlock",
    summary: CLEAR_BLOCK_SUMMARY,
    tag: "users",
    permission: "admin:user:write",
    organizationScope: [{ in: "entity", param: "id", owner: "user" }],
    query: NoQuery,
    params: IdParams.extend({ blockId: UserBlockIdSchema }),
    response: UserDetailSchema,
    handler: async ({ ctx, params }) => ({ body: await clearUserBlock(ctx, await requireUser(ctx, params.id), params.blockId) }),
  }),
];

/** /users/{id}/impersonate */
export const userByIdImpersonateOperations = [
  operation({
    method: "POST",
    path: "/users/{id}/impersonate",
    operationId: "users.impersonate",
    summary: `Act as the user: a time-limited access token (at most ${MAX_IMPERSONATION_MINUTES} minutes) for one of their organization's clients, naming the administrator (act); audited with the reason, which the user sees on their account page`,
    tag: "users",
    permission: "admin:user:impersonate",
    params: IdParams,
    query: NoQuery,
    body: ImpersonateSchema,
    response: ImpersonationSchema,
    // Outside the request's transaction: the organization's provider stores the token with the
    // process's own database client. The audit entry is written before the token is answered.
    readOnly: true,
    handler: async ({ ctx, params, body, admin }) => {
      const user = await requireUser(ctx, params.id);
      return { body: await impersonateUser(ctx, user, admin, body) };
    },
  }),
];

/** /users/{id}/history */
export const userByIdHistoryOperations = [
  operation({
    method: "GET",
    path: "/users/{id}/history",
    operationId: "usersById.getHistory",
    summary: `The user's history, newest first (no parameters: the latest ${MAX_PAGE_SIZE} entries)`,
    tag: "users",
    permission: "admin:user:read",
    organizationScope: [{ in: "entity", param: "id", owner: "user" }],
    params: IdParams,
    query: NoQuery,
    response: historyOf(HistoryEntrySchema),
    handler: async ({ ctx, params }) => {
      await requireUser(ctx, params.id);
      return { body: await auditHistory(ctx.db, { targetType: "user", targetId: params.id }, { limit: MAX_PAGE_SIZE }) };
    },
  }),
];
