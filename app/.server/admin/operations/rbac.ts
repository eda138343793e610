import { UuidSchema } from "~/schemas/uuid";
import { z } from "zod";
import {
  EffectivePermissionsSchema,
  PermissionCreateSchema,
  PermissionSchema,
  RoleCreateSchema,
  RoleSchema,
  RoleUpdateSchema,
  UserRoleSchema,
} from "~/schemas/rbac";
import { pageOf } from "../http/openapi-shapes";
import { ListQuerySchema } from "../http/pagination";
import { IdParams, operation } from "../http/route";
import {
  assignPermission,
  assignUserRole,
  createPermission,
  createRole,
  deletePermission,
  effectivePermissions,
  requirePermission,
  requireRole,
  listPermissions,
  listRoles,
  listUserRoles,
  removePermission,
  removeUserRole,
  toPermission,
  toRole,
  updateRole,
} from "../rbac/service";

/** Roles, permissions and user-role assignments. Roles and permissions belong to the organization named on create and list. */
const uuid = () => UuidSchema;
/** Operations without parameters refuse unknown ones, as bodies refuse unknown fields. */
const NoQuery = z.object({}).strict();
const RbacListQuery = ListQuerySchema.extend({
  organizationId: uuid(),
  q: z.string().trim().max(200, "must have at most 200 characters").optional(),
}).strict();
const RolePermissionParams = z.object({ id: uuid(), permissionId: uuid() });
const UserRoleParams = z.object({ id: uuid(), roleId: uuid() });
const UserRolesResponse = z.object({ data: z.array(UserRoleSchema) });

/** /roles */
export const rolesOperations = [
  operation({
    method: "GET",
    path: "/roles",
    operationId: "roles.list",
    summary: "List an organization's roles with their permissions (offset or cursor paging, search q)",
    tag: "roles",
    permission: "admin:rbac:read",
    organizationScope: [{ in: "query", field: "organizationId" }],
    query: RbacListQuery,
    response: pageOf(RoleSchema),
    handler: async ({ ctx, query }) => ({ body: await listRoles(ctx, query) }),
  }),
  operation({
    method: "POST",
    path: "/roles",
    operationId: "roles.create",
    summary: "Create a role in an organization, optionally with permissions of that organization",
    tag: "roles",
    permission: "admin:rbac:write",
    query: NoQuery,
    body: RoleCreateSchema,
    response: RoleSchema,
    successStatus: 201,
    etag: true,
    handler: async ({ ctx, body }) => {
      const row = await createRole(ctx, body);
      ctx.audit({ eventType: "role.created", organizationId: row.organizationId, targetType: "role", targetId: row.id, data: { change: body } });
      return { body: toRole(row), version: row.version };
    },
  }),
];

/** /roles/{id} */
export const roleOperations = [
  operation({
    method: "GET",
    path: "/roles/{id}",
    operationId: "roles.get",
    summary: "Get a role with its permissions",
    tag: "roles",
    permission: "admin:rbac:read",
    organizationScope: [{ in: "entity", param: "id", owner: "role" }],
    query: NoQuery,
    params: IdParams,
    response: RoleSchema,
    etag: true,
    handler: async ({ ctx, params }) => {
      const row = await requireRole(ctx, params.id);
      return { body: toRole(row), version: row.version };
    },
  }),
  operation({
    method: "PUT",
    path: "/roles/{id}",
    operationId: "roles.update",
    summary: "Rename a role or change its description; If-Match guards against lost updates",
    tag: "roles",
    permission: "admin:rbac:write",
    query: NoQuery,
    params: IdParams,
    body: RoleUpdateSchema,
    response: RoleSchema,
    etag: true,
    handler: async ({ ctx, params, body, ifMatch }) => {
      const before = toRole(await requireRole(ctx, params.id));
      const row = await updateRole(ctx, params.id, body, ifMatch);
      ctx.audit({ eventType: "role.updated", organizationId: row.organizationId, targetType: "role", targetId: row.id, data: { change: body }, changes: { before, after: toRole(row) } });
      return { body: toRole(row), version: row.version };
    },
  }),
];

/** /roles/{id}/permissions/{permissionId} */
export const rolePermissionOperations = [
  operation({
    method: "PUT",
    path: "/roles/{id}/permissions/{permissionId}",
    operationId: "roles.assignPermission",
    summary: "Grant the role a permission of its organization (idempotent)",
    tag: "roles",
    permission: "admin:rbac:write",
    query: NoQuery,
    params: RolePermissionParams,
    response: RoleSchema,
    etag: true,
    handler: async ({ ctx, params, ifMatch }) => {
      const row = await assignPermission(ctx, params.id, params.permissionId, ifMatch);
      ctx.audit({ eventType: "role.permission_assigned", organizationId: row.organizationId, targetType: "role", targetId: row.id, data: { change: { permissionId: params.permissionId } } });
      return { body: toRole(row), version: row.version };
    },
  }),
  operation({
    method: "DELETE",
    path: "/roles/{id}/permissions/{permissionId}",
    operationId: "roles.removePermission",
    summary: "Take a permission from the role",
    tag: "roles",
    permission: "admin:rbac:write",
    query: NoQuery,
    params: RolePermissionParams,
    successStatus: 204,
    handler: async ({ ctx, params, ifMatch }) => {
      const role = await requireRole(ctx, params.id);
      await removePermission(ctx, params.id, params.permissionId, ifMatch);
      ctx.audit({ eventType: "role.permission_removed", organizationId: role.organizationId, targetType: "role", targetId: role.id, data: { change: { permissionId: params.permissionId } } });
      return {};
    },
  }),
];

/** /permissions */
export const permissionsOperations = [
  operation({
    method: "GET",
    path: "/permissions",
    operationId: "permissions.list",
    summary: "List an organization's permissions (offset or cursor paging, search q)",
    tag: "permissions",
    permission: "admin:rbac:read",
    organizationScope: [{ in: "query", field: "organizationId" }],
    query: RbacListQuery,
    response: pageOf(PermissionSchema),
    handler: async ({ ctx, query }) => ({ body: await listPermissions(ctx, query) }),
  }),
  operation({
    method: "POST",
    path: "/permissions",
    operationId: "permissions.create",
    summary: "Create a permission in an organization",
    tag: "permissions",
    permission: "admin:rbac:write",
    query: NoQuery,
    body: PermissionCreateSchema,
    response: PermissionSchema,
    successStatus: 201,
    handler: async ({ ctx, body }) => {
      const row = await createPermission(ctx, body);
      ctx.audit({ eventType: "permission.created", organizationId: row.organizationId, targetType: "permission", targetId: row.id, data: { change: body } });
      return { body: toPermission(row) };
    },
  }),
];

/** /permissions/{id} */
export const permissionOperations = [
  operation({
    method: "GET",
    path: "/permissions/{id}",
    operationId: "permissions.get",
    summary: "Get a permission",
    tag: "permissions",
    permission: "admin:rbac:read",
    organizationScope: [{ in: "entity", param: "id", owner: "permission" }],
    query: NoQuery,
    params: IdParams,
    response: PermissionSchema,
    handler: async ({ ctx, params }) => ({ body: toPermission(await requirePermission(ctx, params.id)) }),
  }),
  operation({
    method: "DELETE",
    path: "/permissions/{id}",
    operationId: "permissions.delete",
    summary: "Delete a permission; every role that held it loses it",
    tag: "permissions",
    permission: "admin:rbac:write",
    query: NoQuery,
    params: IdParams,
    successStatus: 204,
    handler: async ({ ctx, params }) => {
      const row = await deletePermission(ctx, params.id);
      ctx.audit({ eventType: "permission.deleted", organizationId: row.organizationId, targetType: "permission", targetId: row.id, data: { change: { name: row.name } } });
      return {};
    },
  }),
];

/** /users/{id}/roles */
export const userRolesOperations = [
  operation({
    method: "GET",
    path: "/users/{id}/roles",
    operationId: "userRoles.list",
    summary: "The roles the user holds",
    tag: "user roles",
    permission: "admin:rbac:read",
    organizationScope: [{ in: "entity", param: "id", owner: "user" }],
    query: NoQuery,
    params: IdParams,
    response: UserRolesResponse,
    handler: async ({ ctx, params }) => ({ body: { data: await listUserRoles(ctx, params.id) } }),
  }),
];

/** /users/{id}/roles/{roleId} */
export const userRoleOperations = [
  operation({
    method: "PUT",
    path: "/users/{id}/roles/{roleId}",
    operationId: "userRoles.assign",
    summary: "Give the user a role of their own organization (idempotent)",
    tag: "user roles",
    permission: "admin:rbac:write",
    organizationScope: [{ in: "entity", param: "id", owner: "user" }, { in: "entity", param: "roleId", owner: "role" }],
    query: NoQuery,
    params: UserRoleParams,
    response: UserRolesResponse,
    handler: async ({ ctx, params }) => {
      const { user, role, created } = await assignUserRole(ctx, params.id, params.roleId);
      ctx.audit({ eventType: "user.role_assigned", organizationId: user.organizationId, targetType: "user", targetId: user.id, data: { change: { roleId: role.id, role: role.name, created } } });
      return { body: { data: await listUserRoles(ctx, params.id) } };
    },
  }),
  operation({
    method: "DELETE",
    path: "/users/{id}/roles/{roleId}",
    operationId: "userRoles.remove",
    summary: "Take a role from the user",
    tag: "user roles",
    permission: "admin:rbac:write",
    organizationScope: [{ in: "entity", param: "id", owner: "user" }, { in: "entity", param: "roleId", owner: "role" }],
    query: NoQuery,
    params: UserRoleParams,
    successStatus: 204,
    handler: async ({ ctx, params, admin }) => {
      const { user, role } = await removeUserRole(ctx, params.id, params.roleId, admin.id);
      ctx.audit({ eventType: "user.role_removed", organizationId: user.organizationId, targetType: "user", targetId: user.id, data: { change: { roleId: role.id, role: role.name } } });
      return {};
    },
  }),
];

/** /users/{id}/effective-permissions */
export const userEffectivePermissionsOperations = [
  operation({
    method: "GET",
    path: "/users/{id}/effective-permissions",
    operationId: "userRoles.getEffectivePermissions",
    summary: "Every permission the user holds through their roles, with the roles that grant it",
    tag: "user roles",
    permission: "admin:rbac:read",
    organizationScope: [{ in: "entity", param: "id", owner: "user" }],
    query: NoQuery,
    params: IdParams,
    response: EffectivePermissionsSchema,
    handler: async ({ ctx, params }) => ({ body: await effectivePermissions(ctx, params.id) }),
  }),
];
