import { z } from "zod";
import { OrganizationDomainCreateSchema, OrganizationDomainSchema } from "~/schemas/domain";
import { UuidSchema } from "~/schemas/uuid";
import {
  addOrganizationDomain,
  deleteOrganizationDomain,
  listOrganizationDomains,
  requireOrganizationDomain,
  verifyOrganizationDomainNow,
} from "../../domains/service";
import { IdParams, operation } from "../http/route";

/**
 * An organization's email domains, proved by a DNS TXT record (decision 086). They take the
 * identity-provider permissions: what a verified domain changes is how upstream sign-ins link
 * accounts and find their connection.
 */
const NoQuery = z.object({}).strict();
const OrgParams = z.object({ orgId: UuidSchema });

/** /organizations/{orgId}/domains */
export const organizationDomainsOperations = [
  operation({
    method: "GET",
    path: "/organizations/{orgId}/domains",
    operationId: "domains.list",
    summary: "List an organization's email domains with their verification status and the TXT record each needs",
    tag: "domains",
    permission: "admin:idp:read",
    organizationScope: [{ in: "path", param: "orgId" }],
    params: OrgParams,
    query: NoQuery,
    response: z.object({ data: z.array(OrganizationDomainSchema) }),
    handler: async ({ ctx, params }) => ({ body: await listOrganizationDomains(ctx, params.orgId) }),
  }),
  operation({
    method: "POST",
    path: "/organizations/{orgId}/domains",
    operationId: "domains.add",
    summary: "Add an email domain (pending): the answer names the DNS TXT record to create, then verify it",
    tag: "domains",
    permission: "admin:idp:write",
    organizationScope: [{ in: "path", param: "orgId" }],
    params: OrgParams,
    query: NoQuery,
    body: OrganizationDomainCreateSchema,
    response: OrganizationDomainSchema,
    successStatus: 201,
    handler: async ({ ctx, params, body }) => {
      const { row, body: added } = await addOrganizationDomain(ctx, params.orgId, body.domain);
      ctx.audit({ eventType: "domain.added", organizationId: row.organizationId, targetType: "organization_domain", targetId: row.id, data: { domain: row.domain } });
      return { body: added };
    },
  }),
];

/** /domains/{id} */
export const domainOperations = [
  operation({
    method: "GET",
    path: "/domains/{id}",
    operationId: "domains.get",
    summary: "Get an organization's email domain",
    tag: "domains",
    permission: "admin:idp:read",
    organizationScope: [{ in: "entity", param: "id", owner: "organizationDomain" }],
    params: IdParams,
    query: NoQuery,
    response: OrganizationDomainSchema,
    handler: async ({ ctx, params }) => ({ body: (await requireOrganizationDomain(ctx, params.id)).body }),
  }),
  operation({
    method: "POST",
    path: "/domains/{id}/verify",
    operationId: "domains.verify",
    summary: "Look the domain's DNS TXT record up now: found, the domain is verified; not found, it keeps its status and the error is recorded",
    tag: "domains",
    permission: "admin:idp:write",
    organizationScope: [{ in: "entity", param: "id", owner: "organizationDomain" }],
    params: IdParams,
    query: NoQuery,
    response: OrganizationDomainSchema,
    // The DNS lookup runs outside the request's transaction; the outcome commits with its audit entry.
    readOnly: true,
    handler: async ({ ctx, params, transaction }) => ({ body: (await verifyOrganizationDomainNow(ctx, { transaction }, params.id)).body }),
  }),
  operation({
    method: "DELETE",
    path: "/domains/{id}",
    operationId: "domains.delete",
    summary: "Remove an email domain: emails of it no longer count as the organization's",
    tag: "domains",
    permission: "admin:idp:write",
    organizationScope: [{ in: "entity", param: "id", owner: "organizationDomain" }],
    params: IdParams,
    query: NoQuery,
    response: OrganizationDomainSchema,
    handler: async ({ ctx, params }) => {
      const { row, body } = await deleteOrganizationDomain(ctx, params.id);
      ctx.audit({ eventType: "domain.removed", organizationId: row.organizationId, targetType: "organization_domain", targetId: row.id, data: { domain: row.domain, status: row.status } });
      return { body };
    },
  }),
];
