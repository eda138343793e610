import { Prisma } from "~/generated/prisma/client";
import { LOGIN_METHODS } from "~/schemas/login-methods";
import type { LoginDay, LoginWindow } from "~/schemas/stats";
import type { Context } from "../../context";

export const DAY_MS = 86_400_000;
/** Primary methods always present in a breakdown, so that a chart has a stable legend. */
const METHODS = LOGIN_METHODS;

export type WindowName = "last24h" | "last7d" | "last30d";
const WINDOW_DAYS: Record<WindowName, number> = { last24h: 1, last7d: 7, last30d: 30 };

interface Row {
  method: string;
  day: string;
  d1: number;
  d7: number;
  d30: number;
  /** Entries of the row's method on the row's day. */
  n: number;
}

export interface LoginFigures<W extends WindowName> {
  windows: Record<W, LoginWindow>;
  /** One entry per UTC calendar day, oldest first, today last; days without logins count 0. */
  daily: LoginDay[];
}

const emptyBreakdown = (): Record<string, number> => Object.fromEntries(METHODS.map((m) => [m, 0]));
const utcDay = (date: Date) => date.toISOString().slice(0, 10);

/**
 * Successful logins by primary method over rolling windows and per UTC day, from one aggregate
 * over the login audit entries (the ("organizationId", "eventType", "createdAt") index when an
 * organization is given): rows are grouped in the database, never loaded.
 */
export async function loginFigures<W extends WindowName>(
  ctx: Context,
  options: { now: Date; windows: readonly W[]; days: number; organizationId?: string },
): Promise<LoginFigures<W>> {
  const { now, windows, days, organizationId } = options;
  const at = (name: WindowName) => new Date(now.getTime() - WINDOW_DAYS[name] * DAY_MS);
  const firstDay = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - (days - 1)));
  const since = new Date(Math.min(firstDay.getTime(), ...windows.map((w) => at(w).getTime())));
  const prisma = ctx.db;
  // A composed fragment stays a parameter; with an organization, the filter makes the
  // ("organizationId", "eventType", "createdAt") index usable.
  const inOrganization = organizationId ? Prisma.sql`"organizationId" = ${organizationId}::uuid AND` : Prisma.empty;
  const rows = await prisma.$queryRaw<Row[]>`
    SELECT coalesce("data"->>'method', 'unknown') AS "method",
      to_char("createdAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS "day",
      (count(*) FILTER (WHERE "createdAt" >= ${at("last24h")}))::int AS "d1",
      (count(*) FILTER (WHERE "createdAt" >= ${at("last7d")}))::int AS "d7",
      (count(*) FILTER (WHERE "createdAt" >= ${at("last30d")}))::int AS "d30",
      count(*)::int AS "n"
    FROM "AuditEntry"
    WHERE ${inOrganization} "eventType" = 'auth.login.success' AND "createdAt" >= ${since}
    GROUP BY 1, 2`;

  const column: Record<WindowName, "d1" | "d7" | "d30"> = { last24h: "d1", last7d: "d7", last30d: "d30" };
  const windowFigures = {} as Record<W, LoginWindow>;
  for (const name of windows) {
    const byMethod = emptyBreakdown();
    for (const row of rows) byMethod[row.method] = (byMethod[row.method] ?? 0) + Number(row[column[name]]);
    windowFigures[name] = { total: sum(byMethod), byMethod };
  }

  const byDay = new Map<string, Record<string, number>>();
  for (let i = 0; i < days; i++) byDay.set(utcDay(new Date(firstDay.getTime() + i * DAY_MS)), emptyBreakdown());
  for (const row of rows) {
    const breakdown = byDay.get(row.day);
    // Rows before the first day belong to a window only.
    if (breakdown) breakdown[row.method] = (breakdown[row.method] ?? 0) + Number(row.n);
  }
  const daily = [...byDay].map(([date, byMethod]) => ({ date, total: sum(byMethod), byMethod }));
  return { windows: windowFigures, daily };
}

function sum(byMethod: Record<string, number>): number {
  return Object.values(byMethod).reduce((a, b) => a + b, 0);
}
