import { data, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE } from "~/.server/console/page";
import { requireOrganizationConsole } from "~/.server/console/organization-console";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Audit log · Porta" }];

/** The organization's audit log: the door binds the list to the organization. */
export async function loader(args: LoaderFunctionArgs) {
  const console = await requireOrganizationConsole(args);
  const entries = await console.admin("audit.list", { query: { limit: "100" } });
  return data(
    {
      slug: console.slug,
      entries: entries.ok ? entries.body.data.map((e) => ({ id: e.id, createdAt: e.createdAt, eventType: e.eventType, actorType: e.actorType, actor: e.names.actor?.name ?? e.actorId, target: e.names.target?.name ?? e.targetId })) : [],
      error: entries.ok ? null : entries.error.message,
    },
    { headers: NO_STORE },
  );
}

export default function OrganizationAudit() {
  const { slug, entries, error } = useLoaderData<typeof loader>();
  const { t } = useTranslation("console");
  return (
    <>
      <p className="breadcrumb">
        <Link to={`/${slug}/console`}>{t("organizationConsole.users")}</Link>
      </p>
      <h1>{t("organizationConsole.audit")}</h1>
      {error ? <p role="alert">{error}</p> : null}
      <table>
        <thead>
          <tr>
            <th scope="col">{t("organizationConsole.when")}</th>
            <th scope="col">{t("organizationConsole.event")}</th>
            <th scope="col">{t("organizationConsole.actor")}</th>
            <th scope="col">{t("organizationConsole.target")}</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((entry) => (
            <tr key={entry.id} data-testid="org-audit-entry">
              <td>{entry.createdAt}</td>
              <td>{entry.eventType}</td>
              <td>{entry.actor ?? entry.actorType}</td>
              <td>{entry.target ?? ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
