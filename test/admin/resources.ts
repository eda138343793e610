import { expect } from "vitest";
import { SERVICE_ADMIN_ROLE } from "~/.server/admin/permissions";
import type { AdminPermission } from "~/.server/admin/permissions";
import type { adminApi } from "../support/admin-api";
import type { TestPorta } from "../support/porta";
import { expect422, type BadRequest } from "./helpers";

/**
 * Steps shared by the application, client and custom-claim Admin API tests: a fingerprint of
 * the tables those operations write, a table of bad requests that must each be a 422 writing
 * nothing, and a permission taken away from the service-admin role for a while.
 */
export async function resourceFingerprint(porta: TestPorta) {
  const prisma = porta.services.db.prisma;
  const [apps, appVersions, modules, moduleUpdates, clients, clientVersions, secrets, revoked, claims, claimUpdates, values, valueUpdates, audit, lastAudit] = await Promise.all([
    prisma.application.count(),
    prisma.application.aggregate({ _sum: { version: true } }),
    prisma.applicationModule.count(),
    prisma.applicationModule.aggregate({ _max: { updatedAt: true } }),
    prisma.client.count(),
    prisma.client.aggregate({ _sum: { version: true } }),
    prisma.clientSecret.count(),
    prisma.clientSecret.count({ where: { status: "revoked" } }),
    prisma.customClaimDefinition.count(),
    prisma.customClaimDefinition.aggregate({ _max: { updatedAt: true } }),
    prisma.customClaimValue.count(),
    prisma.customClaimValue.aggregate({ _max: { updatedAt: true } }),
    prisma.auditEntry.count(),
    prisma.auditEntry.findFirst({ orderBy: { id: "desc" }, select: { id: true } }),
  ]);
  return {
    apps,
    appVersions: appVersions._sum.version,
    modules,
    moduleUpdates: moduleUpdates._max.updatedAt?.toISOString() ?? null,
    clients,
    clientVersions: clientVersions._sum.version,
    secrets,
    revoked,
    claims,
    claimUpdates: claimUpdates._max.updatedAt?.toISOString() ?? null,
    values,
    valueUpdates: valueUpdates._max.updatedAt?.toISOString() ?? null,
    audit,
    lastAudit: lastAudit?.id ?? null,
  };
}

/** Sends each bad request: each must be a 422 naming its field, and the data must stay as it was. */
export async function expectAllRejected(porta: TestPorta, api: ReturnType<typeof adminApi>, requests: BadRequest[]) {
  const before = await resourceFingerprint(porta);
  for (const request of requests) {
    const res = await api.call(request.method, request.path, request.body);
    expect422(res, request.field, `${request.label}: ${request.method} ${request.path}`);
  }
  expect(await resourceFingerprint(porta)).toEqual(before);
}

/** Runs `fn` while the service-admin role lacks `permission`, then gives it back. */
export async function withoutPermission(porta: TestPorta, permission: AdminPermission, fn: () => Promise<void>) {
  const prisma = porta.services.db.prisma;
  const organizationId = porta.bootstrap.organizationId;
  const role = await prisma.role.findUniqueOrThrow({ where: { organizationId_name: { organizationId, name: SERVICE_ADMIN_ROLE } } });
  const grant = await prisma.permission.findUniqueOrThrow({ where: { organizationId_name: { organizationId, name: permission } } });
  await prisma.rolePermission.delete({ where: { roleId_permissionId: { roleId: role.id, permissionId: grant.id } } });
  try {
    await fn();
  } finally {
    await prisma.rolePermission.create({ data: { roleId: role.id, permissionId: grant.id } });
  }
}
