import type { Prisma } from "~/generated/prisma/client";
import type { Permission, PermissionCreate, Role, RoleCreate, RoleUpdate, UserRole } from "~/schemas/rbac";
import type { Context, Db } from "../../context";
import { compareAndSet } from "../../db/compare-and-set";
import { conflict, notFound, validation } from "../../errors";
import { listMode, listPage, type ListQuery, type Page } from "../http/pagination";
import { isOrganizationRole } from "../organization-roles";
import { ADMIN_PERMISSIONS, SERVICE_ADMIN_ROLE } from "../permissions";
import { requireUser, requireManagedOrganization } from "../users/service";

/**
 * Roles, permissions and role assignments, each belonging to one organization. A role holds
 * permissions of its own organization only, and a user holds roles of their own organization only.
 * The `service-admin` role of the super-admin organization and the admin permissions it holds
 * are protected: without them nobody could use the Admin API.
 */
const roleInclude = { permissions: { select: { permission: { select: { id: true, name: true } } }, orderBy: { createdAt: "asc" } } } satisfies Prisma.RoleInclude;
type RoleRow = Prisma.RoleGetPayload<{ include: typeof roleInclude }>;

export function toRole(row: RoleRow): Role {
  return {
    id: row.id,
    organizationId: row.organizationId,
    name: row.name,
    description: row.description,
    permissions: row.permissions.map((p) => p.permission),
    builtIn: isOrganizationRole(row.name),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function toPermission(row: { id: string; organizationId: string; name: string; description: string | null; createdAt: Date }): Permission {
  return { id: row.id, organizationId: row.organizationId, name: row.name, description: row.description, createdAt: row.createdAt.toISOString() };
}

export interface RbacListQuery extends ListQuery {
  organizationId: string;
  q?: string | undefined;
}

function nameWhere(query: RbacListQuery) {
  return {
    organizationId: query.organizationId,
    ...(query.q ? { OR: [{ name: { contains: query.q, mode: "insensitive" as const } }, { description: { contains: query.q, mode: "insensitive" as const } }] } : {}),
  };
}

const idAfter = (afterId: string | null, order: "asc" | "desc") => (afterId ? { id: order === "asc" ? { gt: afterId } : { lt: afterId } } : {});

export async function listRoles(ctx: Context, query: RbacListQuery): Promise<Page<Role>> {
  await requireManagedOrganization(ctx, query.organizationId);
  const prisma = ctx.db;
  const where: Prisma.RoleWhereInput = nameWhere(query);
  const order = query.order ?? "asc";
  const page = await listPage(listMode(query), {
    count: () => prisma.role.count({ where }),
    offset: (skip, take) => prisma.role.findMany({ where, include: roleInclude, orderBy: [{ name: order }, { id: order }], skip, take }),
    after: (afterId, take) => prisma.role.findMany({ where: { ...where, ...idAfter(afterId, order) }, include: roleInclude, orderBy: { id: order }, take }),
  });
  return { ...page, data: page.data.map(toRole) };
}

export async function requireRole(ctx: Context, id: string): Promise<RoleRow> {
  const row = await ctx.db.role.findUnique({ where: { id }, include: roleInclude });
  if (!row) throw notFound("role");
  return row;
}

async function isProtectedRole(ctx: Context<"config">, role: { organizationId: string; name: string }) {
  if (isOrganizationRole(role.name)) return true;
  if (role.name !== SERVICE_ADMIN_ROLE) return false;
  const org = await ctx.db.organization.findUnique({ where: { id: role.organizationId }, select: { slug: true } });
  return org?.slug === ctx.config.superAdminSlug;
}

async function requirePermissionsOf(ctx: Context, organizationId: string, ids: string[], field: string) {
  if (ids.length === 0) return;
  const found = await ctx.db.permission.findMany({ where: { id: { in: ids }, organizationId }, select: { id: true } });
  const missing = ids.map((id, index) => ({ id, index })).filter(({ id }) => !found.some((f) => f.id === id));
  if (missing.length > 0) {
    throw validation(missing.map(({ index }) => ({ field: ids.length === 1 && field === "permissionId" ? field : `${field}.${index}`, message: "is not a permission of this organization" })));
  }
}

export async function createRole(ctx: Context, input: RoleCreate): Promise<RoleRow> {
  await requireManagedOrganization(ctx, input.organizationId);
  const permissionIds = [...new Set(input.permissionIds ?? [])];
  await requirePermissionsOf(ctx, input.organizationId, permissionIds, "permissionIds");
  return ctx.db.role.create({
    data: {
      organizationId: input.organizationId,
      name: input.name,
      description: input.description ?? null,
      permissions: { create: permissionIds.map((permissionId) => ({ permissionId })) },
    },
    include: roleInclude,
  });
}

export async function updateRole(ctx: Context<"config">, id: string, input: RoleUpdate, expectedVersion: number | undefined): Promise<RoleRow> {
  const prisma = ctx.db;
  const role = await requireRole(ctx, id);
  if (input.name !== undefined && input.name !== role.name && (await isProtectedRole(ctx, role))) {
    throw conflict("protected_role", `The ${role.name} role cannot be renamed.`);
  }
  await compareAndSet({ ifMatch: expectedVersion }, (guard) => prisma.role.updateMany({ where: { id, ...guard }, data: { ...input, version: { increment: 1 } } }));
  return requireRole(ctx, id);
}

/**
 * Deletes a role with its assignments and permissions' links (the users stay). The super-admin
 * organization's `service-admin` role is never deleted.
 */
export async function deleteRole(ctx: Context<"config">, id: string, expectedVersion: number | undefined): Promise<RoleRow> {
  const role = await requireRole(ctx, id);
  if (await isProtectedRole(ctx, role)) throw conflict("protected_role", `The ${role.name} role cannot be deleted.`);
  await compareAndSet({ ifMatch: expectedVersion }, (guard) => ctx.db.role.deleteMany({ where: { id, ...guard } }));
  return role;
}

/** Bumps the role's version in the write; a stale If-Match rolls the whole write back. */
async function bumpRole(tx: Db, roleId: string, expectedVersion: number | undefined) {
  await compareAndSet({ ifMatch: expectedVersion }, (guard) => tx.role.updateMany({ where: { id: roleId, ...guard }, data: { version: { increment: 1 } } }));
}

export async function assignPermission(ctx: Context, roleId: string, permissionId: string, expectedVersion: number | undefined): Promise<RoleRow> {
  const prisma = ctx.db;
  const role = await requireRole(ctx, roleId);
  const permission = await prisma.permission.findUnique({ where: { id: permissionId }, select: { organizationId: true } });
  if (!permission) throw notFound("permission");
  if (permission.organizationId !== role.organizationId) throw validation([{ field: "permissionId", message: "belongs to another organization than the role" }]);
  await prisma.rolePermission.createMany({ data: [{ roleId, permissionId }], skipDuplicates: true });
  await bumpRole(prisma, roleId, expectedVersion);
  return requireRole(ctx, roleId);
}

export async function removePermission(ctx: Context<"config">, roleId: string, permissionId: string, expectedVersion: number | undefined): Promise<void> {
  const prisma = ctx.db;
  const role = await requireRole(ctx, roleId);
  const held = role.permissions.find((p) => p.permission.id === permissionId);
  if (!held) throw notFound("permission assignment");
  if ((ADMIN_PERMISSIONS as readonly string[]).includes(held.permission.name) && (await isProtectedRole(ctx, role))) {
    throw conflict("protected_role", `The ${SERVICE_ADMIN_ROLE} role of the super-admin organization keeps every admin permission.`);
  }
  await prisma.rolePermission.deleteMany({ where: { roleId, permissionId } });
  await bumpRole(prisma, roleId, expectedVersion);
}

export async function listPermissions(ctx: Context, query: RbacListQuery): Promise<Page<Permission>> {
  await requireManagedOrganization(ctx, query.organizationId);
  const prisma = ctx.db;
  const where: Prisma.PermissionWhereInput = nameWhere(query);
  const order = query.order ?? "asc";
  const page = await listPage(listMode(query), {
    count: () => prisma.permission.count({ where }),
    offset: (skip, take) => prisma.permission.findMany({ where, orderBy: [{ name: order }, { id: order }], skip, take }),
    after: (afterId, take) => prisma.permission.findMany({ where: { ...where, ...idAfter(afterId, order) }, orderBy: { id: order }, take }),
  });
  return { ...page, data: page.data.map(toPermission) };
}

export async function requirePermission(ctx: Context, id: string) {
  const row = await ctx.db.permission.findUnique({ where: { id } });
  if (!row) throw notFound("permission");
  return row;
}

export async function createPermission(ctx: Context, input: PermissionCreate) {
  await requireManagedOrganization(ctx, input.organizationId);
  return ctx.db.permission.create({ data: { organizationId: input.organizationId, name: input.name, description: input.description ?? null } });
}

/** Deleting a permission removes it from every role that held it. */
export async function deletePermission(ctx: Context<"config">, id: string) {
  const prisma = ctx.db;
  const permission = await requirePermission(ctx, id);
  if ((ADMIN_PERMISSIONS as readonly string[]).includes(permission.name)) {
    const org = await prisma.organization.findUnique({ where: { id: permission.organizationId }, select: { slug: true } });
    if (org?.slug === ctx.config.superAdminSlug) throw conflict("protected_permission", "The Admin API's own permissions cannot be deleted.");
  }
  const roles = await prisma.rolePermission.findMany({ where: { permissionId: id }, select: { roleId: true } });
  await prisma.permission.delete({ where: { id } });
  await prisma.role.updateMany({ where: { id: { in: roles.map((r) => r.roleId) } }, data: { version: { increment: 1 } } });
  return permission;
}

export async function listUserRoles(ctx: Context, userId: string): Promise<UserRole[]> {
  await requireUser(ctx, userId);
  const rows = await ctx.db.userRole.findMany({
    where: { userId },
    orderBy: { createdAt: "asc" },
    select: { createdAt: true, role: { select: { id: true, organizationId: true, name: true, description: true } } },
  });
  return rows.map((r) => ({ ...r.role, assignedAt: r.createdAt.toISOString() }));
}

export async function assignUserRole(ctx: Context, userId: string, roleId: string) {
  const user = await requireUser(ctx, userId);
  const role = await requireRole(ctx, roleId);
  if (role.organizationId !== user.organizationId) throw validation([{ field: "roleId", message: "belongs to another organization than the user" }]);
  const created = await ctx.db.userRole.createMany({ data: [{ userId, roleId }], skipDuplicates: true });
  return { user, role, created: created.count === 1 };
}

export async function removeUserRole(ctx: Context<"config">, userId: string, roleId: string, adminId: string) {
  const user = await requireUser(ctx, userId);
  const role = await requireRole(ctx, roleId);
  if (userId === adminId && (await isProtectedRole(ctx, role))) {
    throw conflict("self_modification", `You cannot remove the ${SERVICE_ADMIN_ROLE} role from your own account.`);
  }
  const deleted = await ctx.db.userRole.deleteMany({ where: { userId, roleId } });
  if (deleted.count !== 1) throw notFound("role assignment");
  return { user, role };
}

export async function effectivePermissions(ctx: Context, userId: string) {
  const user = await requireUser(ctx, userId);
  const rows = await ctx.db.userRole.findMany({
    where: { userId },
    select: { role: { select: { name: true, permissions: { select: { permission: { select: { id: true, name: true, description: true } } } } } } },
  });
  const byId = new Map<string, { id: string; name: string; description: string | null; grantedBy: string[] }>();
  for (const { role } of rows) {
    for (const { permission } of role.permissions) {
      const entry = byId.get(permission.id) ?? { ...permission, grantedBy: [] };
      entry.grantedBy.push(role.name);
      byId.set(permission.id, entry);
    }
  }
  return {
    userId,
    organizationId: user.organizationId,
    roles: rows.map((r) => r.role.name).sort(),
    permissions: [...byId.values()].map((p) => ({ ...p, grantedBy: p.grantedBy.sort() })).sort((a, b) => a.name.localeCompare(b.name)),
  };
}
