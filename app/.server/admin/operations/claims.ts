import { UuidSchema } from "~/schemas/uuid";
import type { AuditEventType } from "~/schemas/audit-events";
import { z } from "zod";
import { ClaimValueBodySchema, ClaimValueSchema, CustomClaimCreateSchema, CustomClaimSchema, CustomClaimUpdateSchema } from "~/schemas/claim";
import {
  createClaim,
  deleteClaim,
  deleteClaimValue,
  requireClaim,
  requireClaimValue,
  listClaims,
  listUserClaimValues,
  setClaimValue,
  toClaim,
  updateClaim,
  type ClaimOf,
  type ValueChange,
} from "../claims/service";
import { pageOf } from "../http/openapi-shapes";
import { ListQuerySchema } from "../http/pagination";
import { IdParams, operation, type OperationContext } from "../http/route";

/** Custom claim operations of the Admin API: definitions per application, values per user. */
const uuid = () => UuidSchema;
const NoQuery = z.object({}).strict();
const AppParams = z.object({ appId: uuid() });
const ClaimParams = z.object({ appId: uuid(), claimId: uuid() });
const ValueParams = z.object({ appId: uuid(), claimId: uuid(), userId: uuid() });

type Audit = OperationContext<unknown, unknown, unknown>["audit"];

function auditClaim(audit: Audit, eventType: AuditEventType, { app, claim }: ClaimOf, change: Record<string, unknown> = {}, changes?: Parameters<Audit>[0]["changes"]) {
  audit({ eventType, organizationId: app.organizationId, targetType: "custom_claim", targetId: claim.id, data: { applicationId: app.id, claimName: claim.claimName, change }, ...(changes ? { changes } : {}) });
}

/** Value changes are recorded on the user (the value itself stays out of the audit log). */
function auditValue(audit: Audit, eventType: AuditEventType, { value, organizationId }: ValueChange) {
  audit({
    eventType,
    organizationId,
    targetType: "user",
    targetId: value.userId,
    data: { claimId: value.claimId, claimName: value.claimName, applicationId: value.applicationId },
  });
}

/** /applications/{appId}/claims */
export const applicationsIdClaimsOperations = [
  operation({
    method: "GET",
    path: "/applications/{appId}/claims",
    operationId: "customClaims.list",
    summary: "List an application's custom claim definitions",
    tag: "custom claims",
    permission: "admin:claim:read",
    params: AppParams,
    query: ListQuerySchema,
    response: pageOf(CustomClaimSchema),
    handler: async ({ ctx, params, query }) => ({ body: await listClaims(ctx, params.appId, query) }),
  }),
  operation({
    method: "POST",
    path: "/applications/{appId}/claims",
    operationId: "customClaims.create",
    summary: "Define a custom claim, released when its scope is granted",
    tag: "custom claims",
    permission: "admin:claim:write",
    params: AppParams,
    query: NoQuery,
    body: CustomClaimCreateSchema,
    response: CustomClaimSchema,
    successStatus: 201,
    handler: async ({ ctx, params, body }) => {
      const found = await createClaim(ctx, params.appId, body);
      auditClaim(ctx.audit, "custom_claim.created", found, body);
      return { body: toClaim(found.claim) };
    },
  }),
];

/** /applications/{appId}/claims/{claimId} */
export const applicationsIdClaimsIdOperations = [
  operation({
    method: "GET",
    path: "/applications/{appId}/claims/{claimId}",
    operationId: "customClaims.get",
    summary: "Get a custom claim definition",
    tag: "custom claims",
    permission: "admin:claim:read",
    params: ClaimParams,
    query: NoQuery,
    response: CustomClaimSchema,
    handler: async ({ ctx, params }) => ({ body: toClaim((await requireClaim(ctx, params.appId, params.claimId)).claim) }),
  }),
  operation({
    method: "PUT",
    path: "/applications/{appId}/claims/{claimId}",
    operationId: "customClaims.update",
    summary: "Update a custom claim definition (its type only while no user has a value)",
    tag: "custom claims",
    permission: "admin:claim:write",
    params: ClaimParams,
    query: NoQuery,
    body: CustomClaimUpdateSchema,
    response: CustomClaimSchema,
    handler: async ({ ctx, params, body }) => {
      const before = toClaim((await requireClaim(ctx, params.appId, params.claimId)).claim);
      const found = await updateClaim(ctx, params.appId, params.claimId, body);
      auditClaim(ctx.audit, "custom_claim.updated", found, body, { before, after: toClaim(found.claim) });
      return { body: toClaim(found.claim) };
    },
  }),
  operation({
    method: "DELETE",
    path: "/applications/{appId}/claims/{claimId}",
    operationId: "customClaims.delete",
    summary: "Delete a custom claim definition and every user's value of it",
    tag: "custom claims",
    permission: "admin:claim:write",
    params: ClaimParams,
    query: NoQuery,
    successStatus: 204,
    handler: async ({ ctx, params }) => {
      const found = await deleteClaim(ctx, params.appId, params.claimId);
      auditClaim(ctx.audit, "custom_claim.deleted", found);
      return {};
    },
  }),
];

/** /applications/{appId}/claims/{claimId}/users/{userId} */
export const applicationsIdClaimsIdUsersIdOperations = [
  operation({
    method: "GET",
    path: "/applications/{appId}/claims/{claimId}/users/{userId}",
    operationId: "customClaims.getValue",
    summary: "A user's value of a claim (resolved by claim id and user id)",
    tag: "custom claims",
    permission: "admin:claim:read",
    params: ValueParams,
    query: NoQuery,
    response: ClaimValueSchema,
    handler: async ({ ctx, params }) => ({ body: await requireClaimValue(ctx, params.claimId, params.userId) }),
  }),
  operation({
    method: "PUT",
    path: "/applications/{appId}/claims/{claimId}/users/{userId}",
    operationId: "customClaims.setValue",
    summary: "Set a user's value of a claim; the value must fit the claim's type",
    tag: "custom claims",
    permission: "admin:claim:write",
    params: ValueParams,
    query: NoQuery,
    body: ClaimValueBodySchema,
    response: ClaimValueSchema,
    handler: async ({ ctx, params, body }) => {
      const change = await setClaimValue(ctx, params.claimId, params.userId, body.value);
      auditValue(ctx.audit, "custom_claim.value_set", change);
      return { body: change.value };
    },
  }),
  operation({
    method: "DELETE",
    path: "/applications/{appId}/claims/{claimId}/users/{userId}",
    operationId: "customClaims.deleteValue",
    summary: "Delete a user's value of a claim",
    tag: "custom claims",
    permission: "admin:claim:write",
    params: ValueParams,
    query: NoQuery,
    successStatus: 204,
    handler: async ({ ctx, params }) => {
      const change = await deleteClaimValue(ctx, params.claimId, params.userId);
      auditValue(ctx.audit, "custom_claim.value_deleted", change);
      return {};
    },
  }),
];

/** /users/{id}/claims */
export const usersIdClaimsOperations = [
  operation({
    method: "GET",
    path: "/users/{id}/claims",
    operationId: "customClaims.getValuesForUser",
    summary: "All of a user's custom claim values, across applications",
    tag: "custom claims",
    permission: "admin:claim:read",
    params: IdParams,
    query: ListQuerySchema,
    response: pageOf(ClaimValueSchema),
    handler: async ({ ctx, params, query }) => ({ body: await listUserClaimValues(ctx, params.id, query) }),
  }),
];
