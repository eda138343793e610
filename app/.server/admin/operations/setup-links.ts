import { z } from "zod";
import { CreatedSetupLinkSchema, SetupLinkCreateSchema, SetupLinkSchema } from "~/schemas/setup-link";
import { UuidSchema } from "~/schemas/uuid";
import { createSetupLink, listSetupLinks, requireSetupLink, revokeSetupLink, toSetupLink } from "../../setup-links/service";
import { pageOf } from "../http/openapi-shapes";
import { ListQuerySchema } from "../http/pagination";
import { IdParams, operation } from "../http/route";

/**
 * Setup links (decision 089): a service admin hands a customer's IT person a time-limited link to
 * configure the organization's SSO connections, SCIM tokens and domains. What the link may do is
 * what these permissions guard, so creating one asks for the identity-provider write permission.
 * The URL is in the creating response only.
 */
const NoQuery = z.object({}).strict();
const OrgParams = z.object({ orgId: UuidSchema });

/** /organizations/{orgId}/setup-links */
export const setupLinksOperations = [
  operation({
    method: "GET",
    path: "/organizations/{orgId}/setup-links",
    operationId: "setupLinks.list",
    summary: "An organization's setup links, newest first, with their status (never their URL)",
    tag: "setup links",
    permission: "admin:idp:read",
    organizationScope: [{ in: "path", param: "orgId" }],
    params: OrgParams,
    query: ListQuerySchema.strict(),
    response: pageOf(SetupLinkSchema),
    handler: async ({ ctx, params, query }) => ({ body: await listSetupLinks(ctx, params.orgId, query) }),
  }),
  operation({
    method: "POST",
    path: "/organizations/{orgId}/setup-links",
    operationId: "setupLinks.create",
    summary:
      "Create a setup link for a customer's IT person (default 7 days, at most 30): it configures the organization's SSO connections, SCIM tokens and domains, from the first browser that opens it; its URL is in this response and never shown again",
    tag: "setup links",
    permission: "admin:idp:write",
    organizationScope: [{ in: "path", param: "orgId" }],
    params: OrgParams,
    query: NoQuery,
    body: SetupLinkCreateSchema,
    response: CreatedSetupLinkSchema,
    successStatus: 201,
    handler: async ({ ctx, params, body, admin }) => {
      const { row, url } = await createSetupLink(ctx, params.orgId, body, admin.id);
      ctx.audit({
        eventType: "setup_link.created",
        organizationId: row.organizationId,
        targetType: "setup_link",
        targetId: row.id,
        data: { change: body, expiresAt: row.expiresAt.toISOString() },
      });
      return { body: { ...toSetupLink(row), url } };
    },
  }),
];

/** /setup-links/{id} */
export const setupLinkOperations = [
  operation({
    method: "GET",
    path: "/setup-links/{id}",
    operationId: "setupLinks.get",
    summary: "One setup link (never its URL)",
    tag: "setup links",
    permission: "admin:idp:read",
    organizationScope: [{ in: "entity", param: "id", owner: "setupLink" }],
    params: IdParams,
    query: NoQuery,
    response: SetupLinkSchema,
    handler: async ({ ctx, params }) => ({ body: toSetupLink(await requireSetupLink(ctx, params.id)) }),
  }),
  operation({
    method: "DELETE",
    path: "/setup-links/{id}",
    operationId: "setupLinks.revoke",
    summary: "Revoke a setup link at once (what was configured through it stays); revoking a revoked link changes nothing",
    tag: "setup links",
    permission: "admin:idp:write",
    organizationScope: [{ in: "entity", param: "id", owner: "setupLink" }],
    params: IdParams,
    query: NoQuery,
    response: SetupLinkSchema,
    handler: async ({ ctx, params }) => {
      const { row, revoked } = await revokeSetupLink(ctx, params.id);
      ctx.audit({
        eventType: "setup_link.revoked",
        organizationId: row.organizationId,
        targetType: "setup_link",
        targetId: row.id,
        data: { note: row.note, ...(revoked ? {} : { alreadyRevoked: true }) },
      });
      return { body: toSetupLink(row) };
    },
  }),
];
