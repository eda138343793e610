import { data, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole } from "~/.server/console/page";
import { AUDIT_EVENTS, isAuditEventType } from "~/schemas/audit-events";
import { ActorRef, NamedRef } from "~/components/console/audit-names";
import { fieldChangesOf, valueText } from "~/components/console/history";
import { Moment, ScrollTable } from "~/components/console/list-table";
import { Notice } from "~/components/console/ui";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Audit entry · Porta console" }];

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const result = await console.admin("audit.get", { params: { id: args.params.id ?? "" } });
  if (!result.ok) return data({ entry: null, status: result.status }, { status: result.status === 422 ? 404 : result.status, headers: NO_STORE });
  return data({ entry: result.body, status: 200 }, { headers: NO_STORE });
}

/**
 * One audit entry: what happened, who did it to what (by name, with links; the ids beside
 * them), the change field by field (only what changed, before → after) and the entry's full data.
 */
export default function AuditEntry() {
  const { entry } = useLoaderData<typeof loader>();
  const { t } = useTranslation("console");
  if (!entry) {
    return (
      <>
        <h1>{t("audit.entry.title")}</h1>
        <Notice kind="error">{t("audit.entry.notFound")}</Notice>
        <p><Link to="/console/audit">{t("audit.entry.back")}</Link></p>
      </>
    );
  }
  const changes = fieldChangesOf(entry.data);
  const described = isAuditEventType(entry.eventType) ? AUDIT_EVENTS[entry.eventType] : null;
  return (
    <>
      <p><Link to="/console/audit">{t("audit.entry.back")}</Link></p>
      <h1>{t("audit.entry.title")}: <code>{entry.eventType}</code></h1>
      <section className="panel" aria-labelledby="entry-facts">
        <h2 id="entry-facts">{t("audit.entry.facts")}</h2>
        <dl className="facts">
          <dt>{t("audit.time")}</dt>
          <dd><Moment iso={entry.createdAt} /></dd>
          <dt>{t("audit.event")}</dt>
          <dd><code>{entry.eventType}</code>{described ? <> · {described}</> : null}</dd>
          <dt>{t("audit.actor")}</dt>
          <dd><ActorRef actorType={entry.actorType} actorId={entry.actorId} named={entry.names.actor} /></dd>
          <dt>{t("audit.organization")}</dt>
          <dd>{entry.organizationId ? <NamedRef type="organization" id={entry.organizationId} named={entry.names.organization} /> : "—"}</dd>
          <dt>{t("audit.target")}</dt>
          <dd><NamedRef type={entry.targetType} id={entry.targetId} named={entry.names.target} /></dd>
          {entry.names.client ? (
            <>
              <dt>{t("audit.client")}</dt>
              <dd><NamedRef type="client" id={entry.names.client.id} named={entry.names.client} /></dd>
            </>
          ) : null}
          <dt>{t("audit.ip")}</dt>
          <dd>{entry.ip ?? "—"}</dd>
        </dl>
      </section>
      {changes ? (
        <section className="panel" aria-labelledby="entry-changes">
          <h2 id="entry-changes">{t("audit.entry.changes")}</h2>
          {changes.length === 0 ? (
            <p>{t("audit.entry.noChanges")}</p>
          ) : (
            <ScrollTable label={t("audit.entry.changes")}>
              <table className="list diff">
                <caption className="visually-hidden">{t("audit.entry.changes")}</caption>
                <thead>
                  <tr>
                    <th scope="col">{t("audit.entry.field")}</th>
                    <th scope="col">{t("audit.entry.before")}</th>
                    <th scope="col">{t("audit.entry.after")}</th>
                  </tr>
                </thead>
                <tbody>
                  {changes.map((c) => (
                    <tr key={c.field}>
                      <th scope="row">{c.field}</th>
                      <td><del>{valueText(c.before)}</del></td>
                      <td><ins>{valueText(c.after)}</ins></td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </ScrollTable>
          )}
        </section>
      ) : null}
      <section className="panel" aria-labelledby="entry-ids">
        <h2 id="entry-ids">{t("audit.entry.ids")}</h2>
        <dl className="facts">
          <dt>{t("audit.entry.id")}</dt>
          <dd><code>{entry.id}</code></dd>
          <dt>{t("audit.organizationId")}</dt>
          <dd><code>{entry.organizationId ?? "—"}</code></dd>
          <dt>{t("audit.actorId")}</dt>
          <dd><code>{entry.actorId ?? "—"}</code></dd>
          <dt>{t("audit.targetId")}</dt>
          <dd><code>{entry.targetType ?? "—"} {entry.targetId ?? ""}</code></dd>
          <dt>{t("audit.entry.requestId")}</dt>
          <dd><code>{entry.requestId ?? "—"}</code></dd>
        </dl>
      </section>
      <section className="panel" aria-labelledby="entry-data">
        <h2 id="entry-data">{t("audit.entry.data")}</h2>
        <pre className="entry-data" tabIndex={0}>{JSON.stringify(entry.data, null, 2)}</pre>
      </section>
    </>
  );
}
