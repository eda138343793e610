import { data, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, useLoaderData, useLocation } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import type { Page } from "~/.server/admin/http/pagination";
import { consoleHeaders, NO_STORE, requireConsole } from "~/.server/console/page";
import { CursorPager, Notice, TextField } from "~/components/console/ui";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Audit log · Porta console" }];

interface AuditEntry {
  id: string;
  createdAt: string;
  eventType: string;
  organizationId: string | null;
  actorType: string;
  actorId: string | null;
  targetType: string | null;
  targetId: string | null;
}

const FILTERS = ["eventType", "organizationId", "actorId", "targetId"] as const;

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const search = new URL(args.request.url).searchParams;
  const filters = Object.fromEntries(FILTERS.map((f) => [f, search.get(f)?.trim() ?? ""])) as Record<(typeof FILTERS)[number], string>;
  const result = await console.admin<Page<AuditEntry>>("audit.list", {
    query: { ...filters, cursor: search.get("cursor") ?? undefined, limit: "25" },
  });
  if (!result.ok) {
    const details = result.error.details?.map((d) => `${d.field}: ${d.message}`).join("; ");
    return data({ filters, page: null, error: details || result.error.message }, { status: result.status, headers: NO_STORE });
  }
  return data({ filters, page: result.body, error: null }, { headers: NO_STORE });
}

export default function Audit() {
  const { filters, page, error } = useLoaderData<typeof loader>();
  const { search } = useLocation();
  const { t, i18n } = useTranslation("console");
  return (
    <>
      <h1>{t("audit.title")}</h1>
      <Form method="get" className="panel filters" aria-labelledby="filters-title">
        <h2 id="filters-title">{t("audit.filters")}</h2>
        <div className="filter-grid">
          {FILTERS.map((f) => (
            <TextField key={f} name={f} label={t(`audit.${f}`)} defaultValue={filters[f]} />
          ))}
        </div>
        <button type="submit" className="button button-inline">{t("audit.apply")}</button>
      </Form>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {page ? (
        <>
          {page.data.length === 0 ? (
            <p>{t("common.none")}</p>
          ) : (
            <div className="table-wrap">
              <table className="list">
                <thead>
                  <tr>
                    <th scope="col">{t("audit.time")}</th>
                    <th scope="col">{t("audit.event")}</th>
                    <th scope="col">{t("audit.actor")}</th>
                    <th scope="col">{t("audit.target")}</th>
                  </tr>
                </thead>
                <tbody>
                  {page.data.map((e) => (
                    <tr key={e.id}>
                      <td>{new Date(e.createdAt).toLocaleString(i18n.language, { timeZone: "UTC" })} UTC</td>
                      <td><code>{e.eventType}</code></td>
                      <td>{e.actorType}{e.actorId ? <> <code>{e.actorId}</code></> : null}</td>
                      <td>{e.targetType ?? ""}{e.targetId ? <> <code>{e.targetId}</code></> : null}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <CursorPager search={search} cursor={page.cursor} />
        </>
      ) : null}
    </>
  );
}
