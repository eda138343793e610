import { z } from "zod";
import { OrganizationCreateSchema, OrganizationSchema, OrganizationUpdateSchema } from "~/schemas/organization";
import { notFound } from "../../errors";
import { auditHistory } from "../http/history";
import { HistoryEntrySchema, historyOf, pageOf } from "../http/openapi-shapes";
import { HistoryQuerySchema, ListQuerySchema } from "../http/pagination";
import { IdParams, operation } from "../http/route";
import {
  createOrganization,
  requireOrganization,
  listOrganizations,
  setOrganizationStatus,
  toOrganization,
  updateOrganization,
  validateSlug,
} from "../organizations/service";

/** Organization operations of the Admin API; the route modules under app/routes serve them. */
const ListQuery = ListQuerySchema.extend({
  q: z.string().trim().max(200).optional(),
  status: z.enum(["active", "suspended", "deleted"]).optional(),
  sort: z.enum(["createdAt", "name", "slug"]).optional(),
}).strict();

/** /organizations */
export const organizationsOperations = [
  operation({
    method: "GET",
    path: "/organizations",
    operationId: "organizations.list",
    summary: "List organizations (offset or cursor paging, search, sorting)",
    tag: "organizations",
    permission: "admin:org:read",
    query: ListQuery,
    response: pageOf(OrganizationSchema),
    handler: async ({ ctx, query }) => ({ body: await listOrganizations(ctx, query) }),
  }),
  operation({
    method: "POST",
    path: "/organizations",
    operationId: "organizations.create",
    summary: "Create an organization",
    tag: "organizations",
    permission: "admin:org:create",
    body: OrganizationCreateSchema,
    response: OrganizationSchema,
    successStatus: 201,
    etag: true,
    handler: async ({ ctx, body }) => {
      const row = await createOrganization(ctx, body);
      ctx.audit({ eventType: "organization.created", organizationId: row.id, targetType: "organization", targetId: row.id, data: { change: body } });
      return { body: toOrganization(row), version: row.version };
    },
  }),
];

/** /organizations/{id} */
export const organizationsIdOperations = [
  operation({
    method: "GET",
    path: "/organizations/{id}",
    operationId: "organizations.get",
    summary: "Get an organization",
    tag: "organizations",
    permission: "admin:org:read",
    organizationScope: [{ in: "path", param: "id" }],
    params: IdParams,
    response: OrganizationSchema,
    etag: true,
    handler: async ({ ctx, params }) => {
      const row = await requireOrganization(ctx, params.id);
      if (row.status === "deleted") throw notFound("organization");
      return { body: toOrganization(row), version: row.version };
    },
  }),
  operation({
    method: "PUT",
    path: "/organizations/{id}",
    operationId: "organizations.update",
    summary: "Update an organization (name, default login methods, 2FA policy, locale, OAuth 2.1 mode); If-Match guards against lost updates",
    tag: "organizations",
    permission: "admin:org:update",
    params: IdParams,
    body: OrganizationUpdateSchema,
    response: OrganizationSchema,
    etag: true,
    handler: async ({ ctx, params, body, ifMatch }) => {
      const before = toOrganization(await requireOrganization(ctx, params.id));
      const row = await updateOrganization(ctx, params.id, body, ifMatch);
      const after = toOrganization(row);
      ctx.audit({ eventType: "organization.updated", organizationId: row.id, targetType: "organization", targetId: row.id, data: { change: body }, changes: { before, after } });
      return { body: toOrganization(row), version: row.version };
    },
  }),
  operation({
    method: "DELETE",
    path: "/organizations/{id}",
    operationId: "organizations.delete",
    summary: "Delete an organization: its protocol routes answer 404 and its sessions end",
    tag: "organizations",
    permission: "admin:org:delete",
    params: IdParams,
    successStatus: 204,
    handler: async ({ ctx, params }) => {
      const row = await setOrganizationStatus(ctx, params.id, "deleted");
      ctx.audit({ eventType: "organization.deleted", organizationId: row.id, targetType: "organization", targetId: row.id, data: {} });
      return {};
    },
  }),
];

/** /organizations/{id}/activate */
export const organizationsIdActivateOperations = [
  operation({
    method: "POST",
    path: "/organizations/{id}/activate",
    operationId: "organizations.activate",
    summary: "Activate a suspended organization",
    tag: "organizations",
    permission: "admin:org:update",
    params: IdParams,
    response: OrganizationSchema,
    etag: true,
    handler: async ({ ctx, params }) => {
      const row = await setOrganizationStatus(ctx, params.id, "active");
      ctx.audit({ eventType: "organization.activated", organizationId: row.id, targetType: "organization", targetId: row.id, data: {} });
      return { body: toOrganization(row), version: row.version };
    },
  }),
];

/** /organizations/{id}/history */
export const organizationsIdHistoryOperations = [
  operation({
    method: "GET",
    path: "/organizations/{id}/history",
    operationId: "organizations.getHistory",
    summary: "The organization's change history, newest first",
    tag: "organizations",
    permission: "admin:org:read",
    organizationScope: [{ in: "path", param: "id" }],
    params: IdParams,
    query: HistoryQuerySchema,
    response: historyOf(HistoryEntrySchema),
    handler: async ({ ctx, params, query }) => {
      await requireOrganization(ctx, params.id);
      return { body: await auditHistory(ctx.db, { targetType: "organization", targetId: params.id }, query) };
    },
  }),
];

/** /organizations/{id}/suspend */
export const organizationsIdSuspendOperations = [
  operation({
    method: "POST",
    path: "/organizations/{id}/suspend",
    operationId: "organizations.suspend",
    summary: "Suspend an organization: its protocol routes answer 404 and its sessions end",
    tag: "organizations",
    permission: "admin:org:update",
    params: IdParams,
    response: OrganizationSchema,
    etag: true,
    handler: async ({ ctx, params }) => {
      const row = await setOrganizationStatus(ctx, params.id, "suspended");
      ctx.audit({ eventType: "organization.suspended", organizationId: row.id, targetType: "organization", targetId: row.id, data: {} });
      return { body: toOrganization(row), version: row.version };
    },
  }),
];

/** /organizations/validate-slug */
export const organizationsValidateSlugOperations = [
  operation({
    method: "GET",
    path: "/organizations/validate-slug",
    operationId: "organizations.validateSlug",
    summary: "Check whether a slug is well-formed and free",
    tag: "organizations",
    permission: "admin:org:read",
    query: z.object({ slug: z.string().max(200) }).strict(),
    response: z.object({ slug: z.string(), valid: z.boolean(), available: z.boolean(), message: z.string().optional() }),
    handler: async ({ ctx, query }) => ({ body: await validateSlug(ctx, query.slug) }),
  }),
];
