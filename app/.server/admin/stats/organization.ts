import type { OrganizationStats } from "~/schemas/stats";
import type { Services } from "../../services";
import { notFound } from "../http/errors";

const DAY_MS = 86_400_000;

/**
 * Figures for one organization, counted the way the overview counts them (count and group-by
 * queries, one aggregate over the login audit entries); no rows are loaded. The login aggregate
 * reads the ("organizationId", "eventType", "createdAt") index of AuditEntry.
 */
export async function organizationStats(services: Services, organizationId: string): Promise<OrganizationStats> {
  const { prisma } = services.db;
  const org = await prisma.organization.findUnique({ where: { id: organizationId }, select: { id: true, slug: true, status: true } });
  if (!org) throw notFound("organization");
  const now = new Date();
  const dayAgo = new Date(now.getTime() - DAY_MS);
  const weekAgo = new Date(now.getTime() - 7 * DAY_MS);
  const monthAgo = new Date(now.getTime() - 30 * DAY_MS);
  const inOrg = { organizationId };

  const [usersTotal, usersActive, usersLocked, totpEnrolled, emailOtpEnabled, anyEnrolled, clients, applications, logins] = await Promise.all([
    prisma.user.count({ where: inOrg }),
    prisma.user.count({ where: { ...inOrg, status: "active" } }),
    prisma.user.count({ where: { ...inOrg, lockedUntil: { gt: now } } }),
    prisma.user.count({ where: { ...inOrg, totp: { is: { status: "enrolled" } } } }),
    prisma.user.count({ where: { ...inOrg, emailOtpEnabled: true } }),
    prisma.user.count({ where: { ...inOrg, OR: [{ emailOtpEnabled: true }, { totp: { is: { status: "enrolled" } } }] } }),
    prisma.client.groupBy({ by: ["status"], where: inOrg, _count: { _all: true } }),
    prisma.application.groupBy({ by: ["status"], where: inOrg, _count: { _all: true } }),
    prisma.$queryRaw<Array<{ method: string; day: number; week: number; month: number }>>`
      SELECT coalesce("data"->>'method', 'unknown') AS "method",
        (count(*) FILTER (WHERE "createdAt" >= ${dayAgo}))::int AS "day",
        (count(*) FILTER (WHERE "createdAt" >= ${weekAgo}))::int AS "week",
        count(*)::int AS "month"
      FROM "AuditEntry"
      WHERE "organizationId" = ${organizationId}::uuid AND "eventType" = 'auth.login.success' AND "createdAt" >= ${monthAgo}
      GROUP BY 1`,
  ]);

  const window = (pick: "day" | "week" | "month") => {
    const byMethod: Record<string, number> = { password: 0, magic_link: 0 };
    for (const row of logins) byMethod[row.method] = (byMethod[row.method] ?? 0) + Number(row[pick]);
    return { total: Object.values(byMethod).reduce((a, b) => a + b, 0), byMethod };
  };
  const byStatus = (rows: Array<{ status: string; _count: { _all: number } }>) => {
    const active = rows.find((r) => r.status === "active")?._count._all ?? 0;
    const total = rows.reduce((sum, r) => sum + r._count._all, 0);
    return { total, active, inactive: total - active };
  };
  return {
    generatedAt: now.toISOString(),
    organization: { id: org.id, slug: org.slug, status: org.status },
    users: { total: usersTotal, active: usersActive, inactive: usersTotal - usersActive, locked: usersLocked },
    logins: { last24h: window("day"), last7d: window("week"), last30d: window("month") },
    twoFactor: { totpEnrolled, emailOtpEnabled, anyEnrolled, adoptionRate: usersTotal === 0 ? 0 : Math.round((anyEnrolled / usersTotal) * 10_000) / 10_000 },
    clients: byStatus(clients),
    applications: byStatus(applications),
  };
}
