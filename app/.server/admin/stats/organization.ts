import { Prisma } from "~/generated/prisma/client";
import type { OrganizationStats } from "~/schemas/stats";
import type { Context } from "../../context";
import { notFound } from "../../errors";
import { loginFigures } from "./logins";


/**
 * Figures for one organization, counted the way the overview counts them (count and group-by
 * queries, one aggregate over the login audit entries); no rows are loaded. The login aggregate
 * reads the ("organizationId", "eventType", "createdAt") index of AuditEntry.
 */
export async function organizationStats(ctx: Context, organizationId: string): Promise<OrganizationStats> {
  const prisma = ctx.db;
  const org = await prisma.organization.findUnique({ where: { id: organizationId }, select: { id: true, slug: true, status: true } });
  if (!org) throw notFound("organization");
  const now = new Date();
  const inOrg = { organizationId };

  const [usersTotal, usersActive, usersLocked, totpEnrolled, emailOtpEnabled, anyEnrolled, importedPassword, clients, applications, logins] = await Promise.all([
    prisma.user.count({ where: inOrg }),
    prisma.user.count({ where: { ...inOrg, status: "active" } }),
    prisma.user.count({ where: { ...inOrg, lockedUntil: { gt: now } } }),
    prisma.user.count({ where: { ...inOrg, totp: { is: { status: "enrolled" } } } }),
    prisma.user.count({ where: { ...inOrg, emailOtpEnabled: true } }),
    prisma.user.count({ where: { ...inOrg, OR: [{ emailOtpEnabled: true }, { totp: { is: { status: "enrolled" } } }] } }),
    prisma.user.count({ where: { ...inOrg, legacyPassword: { not: Prisma.DbNull } } }),
    prisma.client.groupBy({ by: ["status"], where: inOrg, _count: { _all: true } }),
    prisma.application.groupBy({ by: ["status"], where: inOrg, _count: { _all: true } }),
    loginFigures(ctx, { now, windows: ["last24h", "last7d", "last30d"], days: 30, organizationId }),
  ]);

  const byStatus = (rows: Array<{ status: string; _count: { _all: number } }>) => {
    const active = rows.find((r) => r.status === "active")?._count._all ?? 0;
    const total = rows.reduce((sum, r) => sum + r._count._all, 0);
    return { total, active, inactive: total - active };
  };
  return {
    generatedAt: now.toISOString(),
    organization: { id: org.id, slug: org.slug, status: org.status },
    users: { total: usersTotal, active: usersActive, inactive: usersTotal - usersActive, locked: usersLocked, importedPassword },
    logins: { ...logins.windows, daily: logins.daily },
    twoFactor: { totpEnrolled, emailOtpEnabled, anyEnrolled, adoptionRate: usersTotal === 0 ? 0 : Math.round((anyEnrolled / usersTotal) * 10_000) / 10_000 },
    clients: byStatus(clients),
    applications: byStatus(applications),
  };
}
