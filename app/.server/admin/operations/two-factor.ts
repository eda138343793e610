import { TWO_FACTOR_POLICIES } from "~/schemas/two-factor-policy";
import { UuidSchema } from "~/schemas/uuid";
import { z } from "zod";
import {
  disableTwoFactor,
  requireTwoFactorPolicy,
  requireTwoFactorStatus,
  getTwoFactorSummary,
  NotEnrolledError,
  regenerateRecoveryCodes,
  resetTwoFactor,
  setTwoFactorPolicy,
  StaleVersionError,
} from "../../auth/two-factor/admin";
import type { Context } from "../../context";
import { conflict, notFound, staleEtag } from "../../errors";
import { IdParams, operation } from "../http/route";

/** Two-factor administration over the services of app/.server/auth/two-factor/admin.ts. */
const StatusSchema = z.object({
  userId: z.uuid(),
  totp: z.object({ enrolled: z.boolean(), pending: z.boolean(), enrolledAt: z.iso.datetime().nullable() }),
  emailOtp: z.object({ enabled: z.boolean() }),
  recoveryCodes: z.object({ remaining: z.number().int(), total: z.number().int() }),
  passkeys: z.object({ count: z.number().int() }),
});
const PolicySchema = z.object({ organizationId: UuidSchema, policy: z.enum(TWO_FACTOR_POLICIES) });
const OrgParams = z.object({ orgId: UuidSchema });
// Operations without input still refuse parameters and body fields: a caller's mistake is 422, not ignored.
const NoQuery = z.object({}).strict();
const NoBody = z.object({}).strict().optional();

async function requireUser(ctx: Context, id: string) {
  const user = await ctx.db.user.findUnique({ where: { id }, select: { id: true, organizationId: true } });
  if (!user) throw notFound("user");
  return user;
}

/**
 * The factors a disable (TOTP and email codes) or a reset (TOTP) takes away, for the audit entry:
 * an entry that removed none changed nobody's assurance level (Shared Signals, ssf/events.ts).
 */
const factorsRemoved = (before: Awaited<ReturnType<typeof requireTwoFactorStatus>>, alsoEmail: boolean): string[] => [
  ...(before.totp.enrolled ? ["totp"] : []),
  ...(alsoEmail && before.emailOtp.enabled ? ["email"] : []),
];
const statusBody = (s: Awaited<ReturnType<typeof requireTwoFactorStatus>>) => ({ ...s, totp: { ...s.totp, enrolledAt: s.totp.enrolledAt?.toISOString() ?? null } });

export const userTwoFactorOperations = [
  operation({
    method: "GET",
    path: "/users/{id}/two-factor",
    operationId: "twoFactor.getStatus",
    summary: "A user's two-factor enrollment",
    tag: "two-factor",
    permission: "admin:2fa:read",
    organizationScope: [{ in: "entity", param: "id", owner: "user" }],
    params: IdParams,
    query: NoQuery,
    response: StatusSchema,
    handler: async ({ ctx, params }) => {
      await requireUser(ctx, params.id);
      return { body: statusBody(await requireTwoFactorStatus(ctx, params.id)) };
    },
  }),
  operation({
    method: "DELETE",
    path: "/users/{id}/two-factor",
    operationId: "twoFactor.disable",
    summary: "Disable two-factor for a user (TOTP, recovery codes and email codes removed)",
    tag: "two-factor",
    permission: "admin:2fa:write",
    organizationScope: [{ in: "entity", param: "id", owner: "user" }],
    params: IdParams,
    response: StatusSchema,
    handler: async ({ ctx, params }) => {
      const user = await requireUser(ctx, params.id);
      const removed = factorsRemoved(await requireTwoFactorStatus(ctx, params.id), true);
      const status = await disableTwoFactor(ctx, params.id);
      ctx.audit({ eventType: "user.2fa.disabled", organizationId: user.organizationId, targetType: "user", targetId: user.id, data: { removed } });
      return { body: statusBody(status) };
    },
  }),
];

export const userTwoFactorResetOperations = [
  operation({
    method: "POST",
    path: "/users/{id}/two-factor/reset",
    operationId: "twoFactor.reset",
    summary: "Forget a user's TOTP and recovery codes; a policy requiring TOTP enrolls again at the next login",
    tag: "two-factor",
    permission: "admin:2fa:write",
    organizationScope: [{ in: "entity", param: "id", owner: "user" }],
    params: IdParams,
    body: NoBody,
    response: StatusSchema,
    handler: async ({ ctx, params }) => {
      const user = await requireUser(ctx, params.id);
      const removed = factorsRemoved(await requireTwoFactorStatus(ctx, params.id), false);
      const status = await resetTwoFactor(ctx, params.id);
      ctx.audit({ eventType: "user.2fa.reset", organizationId: user.organizationId, targetType: "user", targetId: user.id, data: { removed } });
      return { body: statusBody(status) };
    },
  }),
];

export const userRecoveryCodesOperations = [
  operation({
    method: "POST",
    path: "/users/{id}/two-factor/recovery-codes",
    operationId: "twoFactor.regenerateRecoveryCodes",
    summary: "Replace the user's recovery codes with ten new ones, returned once",
    tag: "two-factor",
    permission: "admin:2fa:write",
    organizationScope: [{ in: "entity", param: "id", owner: "user" }],
    params: IdParams,
    body: NoBody,
    response: z.object({ codes: z.array(z.string()) }),
    handler: async ({ ctx, params }) => {
      const user = await requireUser(ctx, params.id);
      try {
        const codes = await regenerateRecoveryCodes(ctx, params.id);
        ctx.audit({ eventType: "user.2fa.recovery_codes_regenerated", organizationId: user.organizationId, targetType: "user", targetId: user.id, data: {} });
        return { body: { codes } };
      } catch (error) {
        if (error instanceof NotEnrolledError) throw conflict("not_enrolled", "The user has no TOTP; recovery codes come with a TOTP enrollment.");
        throw error;
      }
    },
  }),
];

export const organizationTwoFactorPolicyOperations = [
  operation({
    method: "GET",
    path: "/organizations/{orgId}/two-factor-policy",
    operationId: "twoFactor.getPolicy",
    summary: "The organization's two-factor policy",
    tag: "two-factor",
    permission: "admin:org:read",
    organizationScope: [{ in: "path", param: "orgId" }],
    params: OrgParams,
    query: NoQuery,
    response: PolicySchema,
    etag: true,
    handler: async ({ ctx, params }) => {
      const policy = await requireTwoFactorPolicy(ctx, params.orgId).catch(() => {
        throw notFound("organization");
      });
      return { body: { organizationId: policy.organizationId, policy: policy.policy }, version: policy.version };
    },
  }),
  operation({
    method: "PUT",
    path: "/organizations/{orgId}/two-factor-policy",
    operationId: "twoFactor.setPolicy",
    summary: "Set the organization's two-factor policy (If-Match guards against lost updates)",
    tag: "two-factor",
    permission: "admin:org:update",
    params: OrgParams,
    body: z.object({ policy: z.enum(TWO_FACTOR_POLICIES) }).strict(),
    response: PolicySchema,
    etag: true,
    handler: async ({ ctx, params, body, ifMatch }) => {
      const exists = await ctx.db.organization.findUnique({ where: { id: params.orgId }, select: { id: true, twoFactorPolicy: true } });
      if (!exists) throw notFound("organization");
      try {
        const result = await setTwoFactorPolicy(ctx, {
          organizationId: params.orgId,
          policy: body.policy,
          ...(ifMatch !== undefined ? { expectedVersion: ifMatch } : {}),
        });
        ctx.audit({ eventType: "organization.2fa_policy.updated", organizationId: params.orgId, targetType: "organization", targetId: params.orgId, data: { change: body }, changes: { before: { policy: exists.twoFactorPolicy }, after: { policy: result.policy } } });
        return { body: { organizationId: result.organizationId, policy: result.policy }, version: result.version };
      } catch (error) {
        if (error instanceof StaleVersionError) throw staleEtag();
        throw error;
      }
    },
  }),
];

export const twoFactorSummaryOperations = [
  operation({
    method: "GET",
    path: "/two-factor/summary",
    operationId: "twoFactor.getSummary",
    summary: "Two-factor adoption per method per organization",
    tag: "two-factor",
    permission: "admin:2fa:read",
    query: NoQuery,
    response: z.object({
      data: z.array(
        z.object({
          organizationId: z.uuid(),
          slug: z.string(),
          policy: z.string(),
          users: z.number().int(),
          byMethod: z.object({ totp: z.number().int(), email: z.number().int(), recoveryCodes: z.number().int(), passkey: z.number().int() }),
        }),
      ),
    }),
    handler: async ({ ctx }) => ({ body: { data: await getTwoFactorSummary(ctx) } }),
  }),
];
