import { data, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { LOGIN_METHODS } from "~/schemas/login-methods";
import { useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole } from "~/.server/console/page";
import { DailyLoginsChart } from "~/components/console/daily-chart";
import { UsersChart } from "~/components/console/organization-stats";
import { FirstStepsPanel } from "~/components/console/first-steps";
import { BarChart, Notice } from "~/components/console/ui";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Dashboard · Porta console" }];

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const stats = await console.admin("stats.get");
  return data({ stats: stats.ok ? stats.body : null }, { headers: NO_STORE });
}

export default function Dashboard() {
  const { stats } = useLoaderData<typeof loader>();
  const { t, i18n } = useTranslation("console");
  if (!stats) return <Notice kind="error">{t("error.generic")}</Notice>;
  const methods = (window: { byMethod: Record<string, number> }) =>
    LOGIN_METHODS.map((m) => ({ label: t(`dashboard.method.${m}`), value: window.byMethod[m] ?? 0 }));
  return (
    <>
      <h1>{t("dashboard.title")}</h1>
      <div className="grid">
        <FirstStepsPanel steps={stats.firstSteps} />
        <section className="panel" aria-labelledby="orgs-title">
          <h2 id="orgs-title">{t("dashboard.organizations")}</h2>
          <p className="figure">{t("dashboard.organizationCount", { count: stats.organizations.total })}</p>
          <BarChart
            caption={t("dashboard.organizations")}
            rows={[
              { label: t("dashboard.active"), value: stats.organizations.byStatus.active },
              { label: t("dashboard.suspended"), value: stats.organizations.byStatus.suspended },
            ]}
          />
        </section>
        <section className="panel" aria-labelledby="users-title">
          <h2 id="users-title">{t("dashboard.activeUsers")}</h2>
          <p className="figure">{t("dashboard.activeUserCount", { count: stats.users.active })}</p>
          <UsersChart users={stats.users} />
        </section>
        <section className="panel panel-wide" aria-labelledby="daily-title">
          <h2 id="daily-title">{t("dashboard.overTime")}</h2>
          <DailyLoginsChart caption={t("dashboard.daily", { count: stats.logins.daily.length })} days={stats.logins.daily} language={i18n.language} />
        </section>
        <section className="panel" aria-labelledby="logins-title">
          <h2 id="logins-title">{t("dashboard.logins")}</h2>
          <BarChart caption={t("dashboard.last24h")} rows={methods(stats.logins.last24h)} />
          <BarChart caption={t("dashboard.last7d")} rows={methods(stats.logins.last7d)} />
        </section>
        <section className="panel" aria-labelledby="tf-title">
          <h2 id="tf-title">{t("dashboard.twoFactor")}</h2>
          <p>{t("dashboard.adoption", { percent: Math.round(stats.twoFactor.adoptionRate * 100) })}</p>
          <BarChart
            caption={t("dashboard.twoFactor")}
            rows={[
              { label: t("dashboard.totp"), value: stats.twoFactor.totpEnrolled },
              { label: t("dashboard.emailOtp"), value: stats.twoFactor.emailOtpEnabled },
            ]}
          />
        </section>
      </div>
    </>
  );
}
