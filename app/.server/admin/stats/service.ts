import { Prisma } from "~/generated/prisma/client";
import type { StatsOverview } from "~/schemas/stats";
import type { Context } from "../../context";
import { firstSteps } from "./first-steps";
import { loginFigures } from "./logins";

/** Days of the overview's login series: two weeks show a weekly rhythm. */
const OVERVIEW_DAYS = 14;

/**
 * The system-wide overview. Everything is counted in the database (count, group by, one
 * aggregate over the login audit entries); no rows are loaded.
 */
export async function statsOverview(ctx: Context<"config">): Promise<StatsOverview> {
  const prisma = ctx.db;
  const now = new Date();
  const liveUser = { organization: { status: { not: "deleted" } } };

  const [orgsByStatus, usersTotal, usersActive, usersLocked, totpEnrolled, emailOtpEnabled, anyEnrolled, importedPassword, logins, steps] = await Promise.all([
    prisma.organization.groupBy({ by: ["status"], _count: { _all: true } }),
    prisma.user.count({ where: liveUser }),
    prisma.user.count({ where: { ...liveUser, status: "active" } }),
    prisma.user.count({ where: { ...liveUser, lockedUntil: { gt: now } } }),
    prisma.user.count({ where: { ...liveUser, totp: { is: { status: "enrolled" } } } }),
    prisma.user.count({ where: { ...liveUser, emailOtpEnabled: true } }),
    prisma.user.count({ where: { ...liveUser, OR: [{ emailOtpEnabled: true }, { totp: { is: { status: "enrolled" } } }] } }),
    prisma.user.count({ where: { ...liveUser, legacyPassword: { not: Prisma.DbNull } } }),
    loginFigures(ctx, { now, windows: ["last24h", "last7d"], days: OVERVIEW_DAYS }),
    firstSteps(ctx),
  ]);

  const byStatus = { active: 0, suspended: 0, deleted: 0 };
  for (const row of orgsByStatus) if (row.status in byStatus) byStatus[row.status as keyof typeof byStatus] = row._count._all;
  return {
    generatedAt: now.toISOString(),
    // Deleted organizations are gone for operators: the total is the organizations that exist.
    organizations: { total: byStatus.active + byStatus.suspended, byStatus },
    users: { total: usersTotal, active: usersActive, inactive: usersTotal - usersActive, locked: usersLocked, importedPassword },
    logins: { ...logins.windows, daily: logins.daily },
    twoFactor: { totpEnrolled, emailOtpEnabled, anyEnrolled, adoptionRate: usersTotal === 0 ? 0 : Math.round((anyEnrolled / usersTotal) * 10_000) / 10_000 },
    firstSteps: steps,
  };
}
