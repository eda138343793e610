import { Link } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import type { OrganizationStats } from "~/schemas/stats";
import { DailyLoginsChart } from "./daily-chart";
import { BarChart } from "./ui";

/** Users by state, as the dashboard and an organization's page show them. */
export function UsersChart({ users }: { users: OrganizationStats["users"] }) {
  const { t } = useTranslation("console");
  return (
    <BarChart
      caption={t("dashboard.users")}
      rows={[
        { label: t("dashboard.active"), value: users.active },
        { label: t("dashboard.inactive"), value: users.inactive },
        { label: t("dashboard.locked"), value: users.locked },
      ]}
    />
  );
}

/** One organization's figures on its page: users, logins per day over 30 days, 2FA adoption. */
export function OrganizationStatsPanel({ stats, usersHref }: { stats: OrganizationStats; usersHref: string }) {
  const { t, i18n } = useTranslation("console");
  return (
    <section className="panel" aria-labelledby="org-stats-title">
      <h2 id="org-stats-title">{t("orgStats.title")}</h2>
      <div className="grid">
        <div>
          <UsersChart users={stats.users} />
          {stats.users.locked > 0 ? <Link to={`${usersHref}?locked=true`}>{t("lockout.link", { count: stats.users.locked })}</Link> : null}
        </div>
        <div>
          <p>{t("orgStats.logins", { day: stats.logins.last24h.total, week: stats.logins.last7d.total, month: stats.logins.last30d.total })}</p>
          <p>{t("dashboard.adoption", { percent: Math.round(stats.twoFactor.adoptionRate * 100) })}</p>
          <p>{t("orgStats.clients", { active: stats.clients.active, total: stats.clients.total })}</p>
        </div>
      </div>
      <DailyLoginsChart caption={t("dashboard.daily", { count: stats.logins.daily.length })} days={stats.logins.daily} language={i18n.language} />
    </section>
  );
}
