import type { StatsOverview } from "~/schemas/stats";
import type { Services } from "../../services";

/**
 * The system-wide overview. Everything is counted in the database (count, group by, one
 * aggregate over the login audit entries); no rows are loaded.
 */
export async function statsOverview(services: Services): Promise<StatsOverview> {
  const { prisma } = services.db;
  const now = new Date();
  const dayAgo = new Date(now.getTime() - 86_400_000);
  const weekAgo = new Date(now.getTime() - 7 * 86_400_000);
  const liveUser = { organization: { status: { not: "deleted" } } };

  const [orgsByStatus, usersTotal, usersActive, usersLocked, totpEnrolled, emailOtpEnabled, anyEnrolled, logins] = await Promise.all([
    prisma.organization.groupBy({ by: ["status"], _count: { _all: true } }),
    prisma.user.count({ where: liveUser }),
    prisma.user.count({ where: { ...liveUser, status: "active" } }),
    prisma.user.count({ where: { ...liveUser, lockedUntil: { gt: now } } }),
    prisma.user.count({ where: { ...liveUser, totp: { is: { status: "enrolled" } } } }),
    prisma.user.count({ where: { ...liveUser, emailOtpEnabled: true } }),
    prisma.user.count({ where: { ...liveUser, OR: [{ emailOtpEnabled: true }, { totp: { is: { status: "enrolled" } } }] } }),
    prisma.$queryRaw<Array<{ method: string; day: number; week: number }>>`
      SELECT coalesce("data"->>'method', 'unknown') AS "method",
        (count(*) FILTER (WHERE "createdAt" >= ${dayAgo}))::int AS "day",
        count(*)::int AS "week"
      FROM "AuditEntry"
      WHERE "eventType" = 'auth.login.success' AND "createdAt" >= ${weekAgo}
      GROUP BY 1`,
  ]);

  const byStatus = { active: 0, suspended: 0, deleted: 0 };
  for (const row of orgsByStatus) if (row.status in byStatus) byStatus[row.status as keyof typeof byStatus] = row._count._all;
  const window = (pick: "day" | "week") => {
    const byMethod: Record<string, number> = { password: 0, magic_link: 0 };
    for (const row of logins) byMethod[row.method] = (byMethod[row.method] ?? 0) + Number(row[pick]);
    return { total: Object.values(byMethod).reduce((a, b) => a + b, 0), byMethod };
  };
  return {
    generatedAt: now.toISOString(),
    organizations: { total: byStatus.active + byStatus.suspended + byStatus.deleted, byStatus },
    users: { total: usersTotal, active: usersActive, inactive: usersTotal - usersActive, locked: usersLocked },
    logins: { last24h: window("day"), last7d: window("week") },
    twoFactor: { totpEnrolled, emailOtpEnabled, anyEnrolled, adoptionRate: usersTotal === 0 ? 0 : Math.round((anyEnrolled / usersTotal) * 10_000) / 10_000 },
  };
}
