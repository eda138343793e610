import { z } from "zod";
import { ApiResourceCreateSchema, ApiResourceSchema, ApiResourceUpdateSchema, ClientResourceGrantBodySchema, ClientResourceGrantSchema } from "~/schemas/api-resource";
import { UuidSchema } from "~/schemas/uuid";
import {
  createApiResource,
  deleteApiResource,
  requireApiResource,
  grantClientResource,
  listApiResources,
  listClientResourceGrants,
  revokeClientResource,
  toApiResource,
  updateApiResource,
} from "../api-resources/service";
import { pageOf } from "../http/openapi-shapes";
import { ListQuerySchema } from "../http/pagination";
import { IdParams, operation } from "../http/route";
import { ClientId } from "./clients";

/**
 * API resources of an organization (decision 077): the APIs its clients ask access tokens for
 * with RFC 8707's `resource`, and which client may ask for which of them with which scopes.
 */
const NoQuery = z.object({}).strict();
const OrgParams = z.object({ orgId: UuidSchema });
const GrantParams = z.object({ id: ClientId, resourceId: UuidSchema });

/** /organizations/{orgId}/api-resources */
export const organizationApiResourcesOperations = [
  operation({
    method: "GET",
    path: "/organizations/{orgId}/api-resources",
    operationId: "apiResources.list",
    summary: "List an organization's API resources (offset or cursor paging)",
    tag: "api-resources",
    permission: "admin:resource:read",
    params: OrgParams,
    query: ListQuerySchema,
    response: pageOf(ApiResourceSchema),
    handler: async ({ ctx, params, query }) => ({ body: await listApiResources(ctx, params.orgId, query) }),
  }),
  operation({
    method: "POST",
    path: "/organizations/{orgId}/api-resources",
    operationId: "apiResources.create",
    summary: "Add an API resource: an absolute http(s) URI clients send as `resource`, and the scopes it defines",
    tag: "api-resources",
    permission: "admin:resource:write",
    params: OrgParams,
    query: NoQuery,
    body: ApiResourceCreateSchema,
    response: ApiResourceSchema,
    successStatus: 201,
    etag: true,
    handler: async ({ ctx, params, body }) => {
      const row = await createApiResource(ctx, params.orgId, body);
      ctx.audit({ eventType: "api_resource.created", organizationId: row.organizationId, targetType: "api_resource", targetId: row.id, data: { change: body } });
      return { body: toApiResource(row), version: row.version };
    },
  }),
];

/** /api-resources/{id} */
export const apiResourcesIdOperations = [
  operation({
    method: "GET",
    path: "/api-resources/{id}",
    operationId: "apiResources.get",
    summary: "Get an API resource",
    tag: "api-resources",
    permission: "admin:resource:read",
    params: IdParams,
    query: NoQuery,
    response: ApiResourceSchema,
    etag: true,
    handler: async ({ ctx, params }) => {
      const row = await requireApiResource(ctx, params.id);
      return { body: toApiResource(row), version: row.version };
    },
  }),
  operation({
    method: "PUT",
    path: "/api-resources/{id}",
    operationId: "apiResources.update",
    summary: "Update an API resource; scopes it no longer defines leave its grants; If-Match guards against lost updates",
    tag: "api-resources",
    permission: "admin:resource:write",
    params: IdParams,
    query: NoQuery,
    body: ApiResourceUpdateSchema,
    response: ApiResourceSchema,
    etag: true,
    handler: async ({ ctx, params, body, ifMatch }) => {
      const before = toApiResource(await requireApiResource(ctx, params.id));
      const { row, narrowed } = await updateApiResource(ctx, params.id, body, ifMatch);
      const after = toApiResource(row);
      ctx.audit({ eventType: "api_resource.updated", organizationId: row.organizationId, targetType: "api_resource", targetId: row.id, data: { change: body }, changes: { before, after } });
      // A grant the narrower scopes changed is on the client's record too, in the same write.
      for (const grant of narrowed) {
        ctx.audit({
          eventType: "client.resource_granted",
          organizationId: row.organizationId,
          targetType: "client",
          targetId: grant.clientId,
          data: { resourceId: row.id, identifier: row.identifier, scopes: grant.scopes, reason: "resource_scopes_narrowed" },
        });
      }
      return { body: after, version: row.version };
    },
  }),
  operation({
    method: "DELETE",
    path: "/api-resources/{id}",
    operationId: "apiResources.delete",
    summary: "Delete an API resource with its client grants; tokens already issued for it run out",
    tag: "api-resources",
    permission: "admin:resource:write",
    params: IdParams,
    query: NoQuery,
    successStatus: 204,
    handler: async ({ ctx, params, ifMatch }) => {
      const { row, grantedClients } = await deleteApiResource(ctx, params.id, ifMatch);
      // The name keeps the entry readable once the resource is gone (admin/audit/names.ts).
      ctx.audit({ eventType: "api_resource.deleted", organizationId: row.organizationId, targetType: "api_resource", targetId: row.id, data: { identifier: row.identifier, name: row.name, grantedClients } });
      return {};
    },
  }),
];

/** /clients/{id}/api-resources */
export const clientApiResourcesOperations = [
  operation({
    method: "GET",
    path: "/clients/{id}/api-resources",
    operationId: "clients.listApiResources",
    summary: "List the API resources a client may ask access tokens for, with the scopes of each",
    tag: "api-resources",
    permission: "admin:client:read",
    params: z.object({ id: ClientId }),
    query: NoQuery,
    response: z.object({ data: z.array(ClientResourceGrantSchema) }),
    handler: async ({ ctx, params }) => ({ body: { data: await listClientResourceGrants(ctx, params.id) } }),
  }),
];

/** /clients/{id}/api-resources/{resourceId} */
export const clientApiResourceOperations = [
  operation({
    method: "PUT",
    path: "/clients/{id}/api-resources/{resourceId}",
    operationId: "clients.grantApiResource",
    summary: "Let a client ask access tokens for an API resource of its organization, with these of the resource's scopes (replaces an earlier grant's scopes)",
    tag: "api-resources",
    permission: "admin:client:write",
    params: GrantParams,
    query: NoQuery,
    body: ClientResourceGrantBodySchema,
    response: ClientResourceGrantSchema,
    handler: async ({ ctx, params, body }) => {
      const { client, resource, grant } = await grantClientResource(ctx, params.id, params.resourceId, body.scopes);
      ctx.audit({
        eventType: "client.resource_granted",
        organizationId: client.organizationId,
        targetType: "client",
        targetId: client.id,
        data: { resourceId: resource.id, identifier: resource.identifier, scopes: grant.scopes },
      });
      return { body: grant };
    },
  }),
  operation({
    method: "DELETE",
    path: "/clients/{id}/api-resources/{resourceId}",
    operationId: "clients.revokeApiResource",
    summary: "Stop a client from asking access tokens for an API resource; tokens already issued run out",
    tag: "api-resources",
    permission: "admin:client:write",
    params: GrantParams,
    query: NoQuery,
    successStatus: 204,
    handler: async ({ ctx, params }) => {
      const { client, resource } = await revokeClientResource(ctx, params.id, params.resourceId);
      ctx.audit({ eventType: "client.resource_revoked", organizationId: client.organizationId, targetType: "client", targetId: client.id, data: { resourceId: resource.id, identifier: resource.identifier } });
      return {};
    },
  }),
];
