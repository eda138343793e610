import { UuidSchema } from "~/schemas/uuid";
import type { AuditEventType } from "~/schemas/audit-events";
import type { AuditEntry } from "../../context";
import { z } from "zod";
import type { Application as ApplicationRow } from "~/generated/prisma/client";
import {
  APPLICATION_STATUS_VALUES,
  ApplicationCreateSchema,
  ApplicationSchema,
  ApplicationUpdateSchema,
  ModuleCreateSchema,
  ModuleSchema,
  ModuleUpdateSchema,
} from "~/schemas/application";
import {
  addModule,
  createApplication,
  deleteApplication,
  deleteModule,
  requireApplication,
  listApplications,
  listModules,
  type ModuleOf,
  setApplicationStatus,
  toApplication,
  toModule,
  updateApplication,
  updateModule,
} from "../applications/service";
import { auditHistory } from "../http/history";
import { HistoryEntrySchema, historyOf, pageOf } from "../http/openapi-shapes";
import { HistoryQuerySchema, ListQuerySchema } from "../http/pagination";
import { IdParams, operation, type OperationContext } from "../http/route";

/** Application and module operations of the Admin API; the route modules under app/routes serve them. */
const uuid = () => UuidSchema;
const NoQuery = z.object({}).strict();
const ModuleParams = z.object({ id: uuid(), moduleId: uuid() });

const ListQuery = ListQuerySchema.extend({
  organizationId: uuid().optional(),
  status: z.enum(APPLICATION_STATUS_VALUES).optional(),
  q: z.string().trim().max(200, "must have at most 200 characters").optional(),
  sort: z.enum(["createdAt", "name"]).optional(),
}).strict();

type Audit = OperationContext<unknown, unknown, unknown>["audit"];

function auditApplication(audit: Audit, eventType: AuditEventType, app: ApplicationRow, data: Record<string, unknown> = {}, changes?: AuditEntry["changes"]) {
  audit({ eventType, organizationId: app.organizationId, targetType: "application", targetId: app.id, data, ...(changes ? { changes } : {}) });
}

/** Module changes are recorded on their application, so that its history shows them. */
function auditModule(audit: Audit, eventType: AuditEventType, { app, module }: ModuleOf, change: Record<string, unknown> = {}) {
  auditApplication(audit, eventType, app, { moduleId: module.id, moduleName: module.name, change });
}

/** /applications */
export const applicationsOperations = [
  operation({
    method: "GET",
    path: "/applications",
    operationId: "applications.list",
    summary: "List applications, optionally of one organization (offset or cursor paging)",
    tag: "applications",
    permission: "admin:app:read",
    query: ListQuery,
    response: pageOf(ApplicationSchema),
    handler: async ({ ctx, query }) => ({ body: await listApplications(ctx, query) }),
  }),
  operation({
    method: "POST",
    path: "/applications",
    operationId: "applications.create",
    summary: "Create an application in an organization",
    tag: "applications",
    permission: "admin:app:write",
    query: NoQuery,
    body: ApplicationCreateSchema,
    response: ApplicationSchema,
    successStatus: 201,
    etag: true,
    handler: async ({ ctx, body }) => {
      const row = await createApplication(ctx, body);
      auditApplication(ctx.audit, "application.created", row, { change: body });
      return { body: toApplication(row), version: row.version };
    },
  }),
];

/** /applications/{id} */
export const applicationsIdOperations = [
  operation({
    method: "GET",
    path: "/applications/{id}",
    operationId: "applications.get",
    summary: "Get an application",
    tag: "applications",
    permission: "admin:app:read",
    params: IdParams,
    query: NoQuery,
    response: ApplicationSchema,
    etag: true,
    handler: async ({ ctx, params }) => {
      const row = await requireApplication(ctx, params.id);
      return { body: toApplication(row), version: row.version };
    },
  }),
  operation({
    method: "PUT",
    path: "/applications/{id}",
    operationId: "applications.update",
    summary: "Update an application's name or description; If-Match guards against lost updates",
    tag: "applications",
    permission: "admin:app:write",
    params: IdParams,
    query: NoQuery,
    body: ApplicationUpdateSchema,
    response: ApplicationSchema,
    etag: true,
    handler: async ({ ctx, params, body, ifMatch }) => {
      const before = toApplication(await requireApplication(ctx, params.id));
      const row = await updateApplication(ctx, params.id, body, ifMatch);
      auditApplication(ctx.audit, "application.updated", row, { change: body }, { before, after: toApplication(row) });
      return { body: toApplication(row), version: row.version };
    },
  }),
  operation({
    method: "DELETE",
    path: "/applications/{id}",
    operationId: "applications.delete",
    summary: "Delete an application with its modules and custom claims (409 while it still has clients)",
    tag: "applications",
    permission: "admin:app:write",
    params: IdParams,
    query: NoQuery,
    successStatus: 204,
    handler: async ({ ctx, params, ifMatch }) => {
      const row = await deleteApplication(ctx, params.id, ifMatch);
      auditApplication(ctx.audit, "application.deleted", row, { change: { name: row.name } });
      return {};
    },
  }),
];

function statusOperation(status: "active" | "inactive") {
  const verb = status === "active" ? "activate" : "deactivate";
  return operation({
    method: "POST",
    path: `/applications/{id}/${verb}`,
    operationId: `applications.${verb}`,
    summary: status === "active" ? "Activate an application: its clients work again" : "Deactivate an application: none of its clients can authenticate any more",
    tag: "applications",
    permission: "admin:app:write",
    params: IdParams,
    query: NoQuery,
    response: ApplicationSchema,
    etag: true,
    handler: async ({ ctx, params, ifMatch }) => {
      const row = await setApplicationStatus(ctx, params.id, status, ifMatch);
      auditApplication(ctx.audit, `application.${verb}d`, row, { change: { status } });
      return { body: toApplication(row), version: row.version };
    },
  });
}

/** /applications/{id}/activate */
export const applicationsIdActivateOperations = [statusOperation("active")];

/** /applications/{id}/deactivate */
export const applicationsIdDeactivateOperations = [statusOperation("inactive")];

/** /applications/{id}/history */
export const applicationsIdHistoryOperations = [
  operation({
    method: "GET",
    path: "/applications/{id}/history",
    operationId: "applications.getHistory",
    summary: "The application's change history (modules included), newest first",
    tag: "applications",
    permission: "admin:app:read",
    params: IdParams,
    query: HistoryQuerySchema,
    response: historyOf(HistoryEntrySchema),
    handler: async ({ ctx, params, query }) => {
      await requireApplication(ctx, params.id);
      return { body: await auditHistory(ctx.db, { targetType: "application", targetId: params.id }, query) };
    },
  }),
];

/** /applications/{id}/modules */
export const applicationsIdModulesOperations = [
  operation({
    method: "GET",
    path: "/applications/{id}/modules",
    operationId: "applications.listModules",
    summary: "List an application's modules",
    tag: "applications",
    permission: "admin:app:read",
    params: IdParams,
    query: ListQuerySchema,
    response: pageOf(ModuleSchema),
    handler: async ({ ctx, params, query }) => ({ body: await listModules(ctx, params.id, query) }),
  }),
  operation({
    method: "POST",
    path: "/applications/{id}/modules",
    operationId: "applications.addModule",
    summary: "Add a module to an application",
    tag: "applications",
    permission: "admin:app:write",
    params: IdParams,
    query: NoQuery,
    body: ModuleCreateSchema,
    response: ModuleSchema,
    successStatus: 201,
    handler: async ({ ctx, params, body }) => {
      const found = await addModule(ctx, params.id, body);
      auditModule(ctx.audit, "application.module_added", found, body);
      return { body: toModule(found.module) };
    },
  }),
];

/** /applications/{id}/modules/{moduleId} */
export const applicationsIdModulesIdOperations = [
  operation({
    method: "PUT",
    path: "/applications/{id}/modules/{moduleId}",
    operationId: "applications.updateModule",
    summary: "Update a module (name, description, status)",
    tag: "applications",
    permission: "admin:app:write",
    params: ModuleParams,
    query: NoQuery,
    body: ModuleUpdateSchema,
    response: ModuleSchema,
    handler: async ({ ctx, params, body }) => {
      const found = await updateModule(ctx, params.id, params.moduleId, body);
      auditModule(ctx.audit, "application.module_updated", found, body);
      return { body: toModule(found.module) };
    },
  }),
  operation({
    method: "DELETE",
    path: "/applications/{id}/modules/{moduleId}",
    operationId: "applications.deleteModule",
    summary: "Delete a module",
    tag: "applications",
    permission: "admin:app:write",
    params: ModuleParams,
    query: NoQuery,
    successStatus: 204,
    handler: async ({ ctx, params }) => {
      const found = await deleteModule(ctx, params.id, params.moduleId);
      auditModule(ctx.audit, "application.module_deleted", found);
      return {};
    },
  }),
];

/** /applications/{id}/modules/{moduleId}/deactivate */
export const applicationsIdModulesIdDeactivateOperations = [
  operation({
    method: "POST",
    path: "/applications/{id}/modules/{moduleId}/deactivate",
    operationId: "applications.deactivateModule",
    summary: "Deactivate a module (PUT with status active re-activates it)",
    tag: "applications",
    permission: "admin:app:write",
    params: ModuleParams,
    query: NoQuery,
    response: ModuleSchema,
    handler: async ({ ctx, params }) => {
      const found = await updateModule(ctx, params.id, params.moduleId, { status: "inactive" });
      auditModule(ctx.audit, "application.module_deactivated", found, { status: "inactive" });
      return { body: toModule(found.module) };
    },
  }),
];
