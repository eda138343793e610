import { z } from "zod";
import {
  CreatedScimTokenSchema,
  ScimTokenCreateSchema,
  ScimTokenSchema,
} from "~/schemas/scim-token";
import { UuidSchema } from "~/schemas/uuid";
import {
  createScimToken,
  listScimTokens,
  requireScimToken,
  revokeScimToken,
  toScimToken,
} from "../../scim/tokens";
import { pageOf } from "../http/openapi-shapes";
import { ListQuerySchema } from "../http/pagination";
import { IdParams, operation } from "../http/route";

/**
 * The bearer tokens of an organization's SCIM 2.0 endpoint (`/{slug}/scim/v2`, decision 084):
 * a value is in the creating response only. A token provisions users and roles, so these
 * operations ask for the user permissions.
 */
const NoQuery = z.object({}).strict();
const OrgParams = z.object({ orgId: UuidSchema });

/** /organizations/{orgId}/scim-tokens */
export const scimTokensOperations = [
  operation({
    method: "GET",
    path: "/organizations/{orgId}/scim-tokens",
    operationId: "scimTokens.list",
    summary:
      "An organization's SCIM tokens, newest first (values are never shown again)",
    tag: "scim",
    permission: "admin:user:read",
    organizationScope: [{ in: "path", param: "orgId" }],
    params: OrgParams,
    query: ListQuerySchema.strict(),
    response: pageOf(ScimTokenSchema),
    handler: async ({ ctx, params, query }) => ({
      body: await listScimTokens(ctx, params.orgId, query),
    }),
  }),
  operation({
    method: "POST",
    path: "/organizations/{orgId}/scim-tokens",
    operationId: "scimTokens.create",
    summary:
      "Issue a SCIM token (default 90 days, at most a year); its value is in this response and never shown again",
    tag: "scim",
    permission: "admin:user:write",
    organizationScope: [{ in: "path", param: "orgId" }],
    params: OrgParams,
    query: NoQuery,
    body: ScimTokenCreateSchema,
    response: CreatedScimTokenSchema,
    successStatus: 201,
    handler: async ({ ctx, params, body, admin }) => {
      const { row, value } = await createScimToken(
        ctx,
        params.orgId,
        body,
        admin.id
      );
      ctx.audit({
        eventType: "scim_token.created",
        organizationId: row.organizationId,
        targetType: "scim_token",
        targetId: row.id,
        data: {
          change: body,
          prefix: row.prefix,
          expiresAt: row.expiresAt.toISOString(),
        },
      });
      return { body: { ...toScimToken(row), token: value } };
    },
  }),
];

/** /scim-tokens/{id} */
export const scimTokenOperations = [
  operation({
    method: "GET",
    path: "/scim-tokens/{id}",
    operationId: "scimTokens.get",
    summary: "One SCIM token (never its value)",
    tag: "scim",
    permission: "admin:user:read",
    organizationScope: [{ in: "entity", param: "id", owner: "scimToken" }],
    params: IdParams,
    query: NoQuery,
    response: ScimTokenSchema,
    handler: async ({ ctx, params }) => ({
      body: toScimToken(await requireScimToken(ctx, params.id)),
    }),
  }),
  operation({
    method: "DELETE",
    path: "/scim-tokens/{id}",
    operationId: "scimTokens.revoke",
    summary:
      "Revoke a SCIM token at once (what it provisioned stays); revoking a revoked token changes nothing",
    tag: "scim",
    permission: "admin:user:write",
    organizationScope: [{ in: "entity", param: "id", owner: "scimToken" }],
    params: IdParams,
    query: NoQuery,
    response: ScimTokenSchema,
    handler: async ({ ctx, params }) => {
      const { row, revoked } = await revokeScimToken(ctx, params.id);
      ctx.audit({
        eventType: "scim_token.revoked",
        organizationId: row.organizationId,
        targetType: "scim_token",
        targetId: row.id,
        data: {
          prefix: row.prefix,
          name: row.name,
          ...(revoked ? {} : { alreadyRevoked: true }),
        },
      });
      return { body: toScimToken(row) };
    },
  }),
];
