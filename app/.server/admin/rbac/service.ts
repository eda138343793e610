import type { Prisma } from "~/generated/prisma/client";
import type { Permission, PermissionCreate, Role, RoleCreate, RoleUpdate, UserRole } from "~/schemas/rbac";
import type { Services } from "../../services";
import { conflict, notFound, staleEtag, validation } from "../../errors";
import { listMode, listPage, type ListQuery, type Page } from "../http/pagination";
import { ADMIN_PERMISSIONS, SERVICE_ADMIN_ROLE } from "../permissions";
import { getUser, requireOrganization } from "../users/service";

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

export async function listRoles(services: Services, query: RbacListQuery): Promise<Page<Role>> {
  await requireOrganization(services, query.organizationId);
  const { prisma } = services.db;
  const where: Prisma.RoleWhereInput = nameWhere(query);
  const order = query.order ?? "asc";
  const page = await listPage(listMode(query), {
    count: () => prisma.role.count({ where }),
    offset: (skip, take) => prisma.role.findMany({ where, include: roleInclude, orderBy: [{ name: order }, { id: order }], skip, take }),
    after: (afterId, take) => prisma.role.findMany({ where: { ...where, ...idAfter(afterId, order) }, include: roleInclude, orderBy: { id: order }, take }),
  });
  return { ...page, data: page.data.map(toRole) };
}

export async function getRole(services: Services, id: string): Promise<RoleRow> {
  const row = await services.db.prisma.role.findUnique({ where: { id }, include: roleInclude });
  if (!row) throw notFound("role");
  return row;
}

async function isProtectedRole(services: Services, role: { organizationId: string; name: string }) {
  if (role.name !== SERVICE_ADMIN_ROLE) return false;
  const org = await services.db.prisma.organization.findUnique({ where: { id: role.organizationId }, select: { slug: true } });
  return org?.slug === services.config.superAdminSlug;
}

async function requirePermissionsOf(services: Services, organizationId: string, ids: string[], field: string) {
  if (ids.length === 0) return;
  const found = await services.db.prisma.permission.findMany({ where: { id: { in: ids }, organizationId }, select: { id: true } });
  const missing = ids.map((id, index) => ({ id, index })).filter(({ id }) => !found.some((f) => f.id === id));
  if (missing.length > 0) {
    throw validation(missing.map(({ index }) => ({ field: ids.length === 1 && field === "permissionId" ? field : `${field}.${index}`, message: "is not a permission of this organization" })));
  }
}

export async function createRole(services: Services, input: RoleCreate): Promise<RoleRow> {
  await requireOrganization(services, input.organizationId);
  const permissionIds = [...new Set(input.permissionIds ?? [])];
  await requirePermissionsOf(services, input.organizationId, permissionIds, "permissionIds");
  return services.db.prisma.role.create({
    data: {
      organizationId: input.organizationId,
      name: input.name,
      description: input.description ?? null,
      permissions: { create: permissionIds.map((permissionId) => ({ permissionId })) },
    },
    include: roleInclude,
  });
}

export async function updateRole(services: Services, id: string, input: RoleUpdate, expectedVersion: number | undefined): Promise<RoleRow> {
  const { prisma } = services.db;
  const role = await getRole(services, id);
  if (input.name !== undefined && input.name !== role.name && (await isProtectedRole(services, role))) {
    throw conflict("protected_role", `The ${SERVICE_ADMIN_ROLE} role of the super-admin organization cannot be renamed.`);
  }
  const updated = await prisma.role.updateMany({
    where: { id, ...(expectedVersion !== undefined ? { version: expectedVersion } : {}) },
    data: { ...input, version: { increment: 1 } },
  });
  if (updated.count !== 1) throw staleEtag();
  return getRole(services, id);
}

/** Bumps the role's version inside the transaction; a stale If-Match rolls the change back. */
async function bumpRole(tx: Prisma.TransactionClient, roleId: string, expectedVersion: number | undefined) {
  const bumped = await tx.role.updateMany({ where: { id: roleId, ...(expectedVersion !== undefined ? { version: expectedVersion } : {}) }, data: { version: { increment: 1 } } });
  if (bumped.count !== 1) throw staleEtag();
}

export async function assignPermission(services: Services, roleId: string, permissionId: string, expectedVersion: number | undefined): Promise<RoleRow> {
  const { prisma } = services.db;
  const role = await getRole(services, roleId);
  const permission = await prisma.permission.findUnique({ where: { id: permissionId }, select: { organizationId: true } });
  if (!permission) throw notFound("permission");
  if (permission.organizationId !== role.organizationId) throw validation([{ field: "permissionId", message: "belongs to another organization than the role" }]);
  await prisma.$transaction(async (tx) => {
    await tx.rolePermission.createMany({ data: [{ roleId, permissionId }], skipDuplicates: true });
    await bumpRole(tx, roleId, expectedVersion);
  });
  return getRole(services, roleId);
}

export async function removePermission(services: Services, roleId: string, permissionId: string, expectedVersion: number | undefined): Promise<void> {
  const { prisma } = services.db;
  const role = await getRole(services, roleId);
  const held = role.permissions.find((p) => p.permission.id === permissionId);
  if (!held) throw notFound("permission assignment");
  if ((ADMIN_PERMISSIONS as readonly string[]).includes(held.permission.name) && (await isProtectedRole(services, role))) {
    throw conflict("protected_role", `The ${SERVICE_ADMIN_ROLE} role of the super-admin organization keeps every admin permission.`);
  }
  await prisma.$transaction(async (tx) => {
    await tx.rolePermission.deleteMany({ where: { roleId, permissionId } });
    await bumpRole(tx, roleId, expectedVersion);
  });
}

export async function listPermissions(services: Services, query: RbacListQuery): Promise<Page<Permission>> {
  await requireOrganization(services, query.organizationId);
  const { prisma } = services.db;
  const where: Prisma.PermissionWhereInput = nameWhere(query);
  const order = query.order ?? "asc";
  const page = await listPage(listMode(query), {
    count: () => prisma.permission.count({ where }),
    offset: (skip, take) => prisma.permission.findMany({ where, orderBy: [{ name: order }, { id: order }], skip, take }),
    after: (afterId, take) => prisma.permission.findMany({ where: { ...where, ...idAfter(afterId, order) }, orderBy: { id: order }, take }),
  });
  return { ...page, data: page.data.map(toPermission) };
}

export async function getPermission(services: Services, id: string) {
  const row = await services.db.prisma.permission.findUnique({ where: { id } });
  if (!row) throw notFound("permission");
  return row;
}

export async function createPermission(services: Services, input: PermissionCreate) {
  await requireOrganization(services, input.organizationId);
  return services.db.prisma.permission.create({ data: { organizationId: input.organizationId, name: input.name, description: input.description ?? null } });
}

/** Deleting a permission removes it from every role that held it. */
export async function deletePermission(services: Services, id: string) {
  const { prisma } = services.db;
  const permission = await getPermission(services, id);
  if ((ADMIN_PERMISSIONS as readonly string[]).includes(permission.name)) {
    const org = await prisma.organization.findUnique({ where: { id: permission.organizationId }, select: { slug: true } });
    if (org?.slug === services.config.superAdminSlug) throw conflict("protected_permission", "The Admin API's own permissions cannot be deleted.");
  }
  const roles = await prisma.rolePermission.findMany({ where: { permissionId: id }, select: { roleId: true } });
  await prisma.$transaction([
    prisma.permission.delete({ where: { id } }),
    prisma.role.updateMany({ where: { id: { in: roles.map((r) => r.roleId) } }, data: { version: { increment: 1 } } }),
  ]);
  return permission;
}

export async function listUserRoles(services: Services, userId: string): Promise<UserRole[]> {
  await getUser(services, userId);
  const rows = await services.db.prisma.userRole.findMany({
    where: { userId },
    orderBy: { createdAt: "asc" },
    select: { createdAt: true, role: { select: { id: true, organizationId: true, name: true, description: true } } },
  });
  return rows.map((r) => ({ ...r.role, assignedAt: r.createdAt.toISOString() }));
}

export async function assignUserRole(services: Services, userId: string, roleId: string) {
  const user = await getUser(services, userId);
  const role = await getRole(services, roleId);
  if (role.organizationId !== user.organizationId) throw validation([{ field: "roleId", message: "belongs to another organization than the user" }]);
  const created = await services.db.prisma.userRole.createMany({ data: [{ userId, roleId }], skipDuplicates: true });
  return { user, role, created: created.count === 1 };
}

export async function removeUserRole(services: Services, userId: string, roleId: string, adminId: string) {
  const user = await getUser(services, userId);
  const role = await getRole(services, roleId);
  if (userId === adminId && (await isProtectedRole(services, role))) {
    throw conflict("self_modification", `You cannot remove the ${SERVICE_ADMIN_ROLE} role from your own account.`);
  }
  const deleted = await services.db.prisma.userRole.deleteMany({ where: { userId, roleId } });
  if (deleted.count !== 1) throw notFound("role assignment");
  return { user, role };
}

export async function effectivePermissions(services: Services, userId: string) {
  const user = await getUser(services, userId);
  const rows = await services.db.prisma.userRole.findMany({
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
