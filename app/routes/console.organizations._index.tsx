import { data, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useLoaderData, useLocation } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole } from "~/.server/console/page";
import { ListTable } from "~/components/console/list-table";
import { CursorPager, Notice } from "~/components/console/ui";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Organizations · Porta console" }];

const PAGE_SIZE = "20";
const STATUSES = ["active", "suspended", "deleted"] as const;
type StatusFilter = (typeof STATUSES)[number] | "";
const statusFilter = (value: string | null): StatusFilter => (STATUSES as readonly string[]).includes(value ?? "") ? (value as StatusFilter) : "";

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const search = new URL(args.request.url).searchParams;
  const q = search.get("q") ?? "";
  const status = statusFilter(search.get("status"));
  const result = await console.admin("organizations.list", {
    query: { q: q.trim() || undefined, status: status || undefined, cursor: search.get("cursor") ?? undefined, limit: PAGE_SIZE, sort: "name", order: "asc" },
  });
  if (!result.ok) return data({ q, status, page: null, error: result.error.message }, { status: result.status, headers: NO_STORE });
  return data({ q, status, page: result.body, error: null }, { headers: NO_STORE });
}

export default function Organizations() {
  const { q, status, page, error } = useLoaderData<typeof loader>();
  const { search } = useLocation();
  const { t } = useTranslation("console");
  return (
    <>
      <div className="page-head">
        <h1>{t("orgs.title")}</h1>
        <Link className="button button-inline" to="/console/organizations/new">{t("orgs.new")}</Link>
      </div>
      <Form method="get" className="search" role="search">
        <label htmlFor="q">{t("orgs.searchLabel")}</label>
        <input id="q" name="q" type="search" defaultValue={q} />
        <label htmlFor="status">{t("common.status")}</label>
        <select id="status" name="status" defaultValue={status}>
          <option value="">{t("orgs.anyStatus")}</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>{t(`status.${s}`)}</option>
          ))}
        </select>
        <button type="submit" className="button button-inline button-secondary">{t("common.search")}</button>
      </Form>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {page ? (
        <>
          <p className="muted">{t("orgs.total", { count: page.total })}</p>
          <ListTable
            rows={page.data}
            rowKey={(org) => org.id}
            empty={t("empty.organizations")}
            columns={[
              { header: t("common.name"), cell: (org) => <Link to={`/console/organizations/${org.id}`}>{org.name}</Link> },
              { header: t("orgs.slug"), cell: (org) => <code>{org.slug}</code> },
              { header: t("common.status"), cell: (org) => t(`status.${org.status}`) },
              { header: t("orgs.loginMethods"), cell: (org) => org.defaultLoginMethods.map((m) => t(`orgs.method.${m}`)).join(", ") },
            ]}
          />
          <CursorPager search={search} cursor={page.cursor} />
        </>
      ) : null}
    </>
  );
}
