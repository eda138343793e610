import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData, useLocation } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { sessionColumns } from "~/components/console/session-columns";
import { ListTable } from "~/components/console/list-table";
import { ConfirmAction, CursorPager, Notice, TextField } from "~/components/console/ui";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Sessions · Porta console" }];

/** By name (decision 039): an organization by name or slug, a user by email; ids ride along from links. */
const NAME_FILTERS = ["organization", "user"] as const;
const ID_FILTERS = ["organizationId", "userId"] as const;
const FILTERS = [...NAME_FILTERS, ...ID_FILTERS] as const;

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const search = new URL(args.request.url).searchParams;
  const filters = Object.fromEntries(FILTERS.map((f) => [f, search.get(f)?.trim() ?? ""])) as Record<(typeof FILTERS)[number], string>;
  const query = Object.fromEntries(FILTERS.map((f) => [f, filters[f] || undefined]));
  const result = await console.admin("sessions.list", { query: { ...query, cursor: search.get("cursor") ?? undefined, limit: "25" } });
  const done = search.get("done");
  if (!result.ok) {
    const details = result.error.details ?? [];
    // A name that matches nothing is said next to its field, in the page's language.
    const noMatch = NAME_FILTERS.filter((f) => result.status === 422 && details.some((d) => d.field === `query.${f}`));
    const rest = details.filter((d) => !noMatch.some((f) => d.field === `query.${f}`)).map((d) => `${d.field}: ${d.message}`).join("; ");
    const error = noMatch.length > 0 && !rest ? null : rest || result.error.message;
    return data({ filters, page: null, error, noMatch, done }, { status: result.status, headers: NO_STORE });
  }
  return data({ filters, page: result.body, error: null, noMatch: [] as Array<(typeof NAME_FILTERS)[number]>, done }, { headers: NO_STORE });
}

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const id = String(form.get("sessionId") ?? "");
  const result = await console.admin("sessions.revoke", { params: { id } });
  if (!result.ok) return data({ message: result.error.message }, { status: result.status, headers: NO_STORE });
  const back = new URL(args.request.url);
  back.searchParams.set("done", "revoked");
  return redirect(`${back.pathname}${back.search}`);
}

export default function Sessions() {
  const { filters, page, error, noMatch, done } = useLoaderData<typeof loader>();
  const failed = useActionData<typeof action>();
  const { search } = useLocation();
  const { t } = useTranslation("console");
  return (
    <>
      <h1>{t("sessions.title")}</h1>
      {done === "revoked" ? <Notice kind="info">{t("sessions.revoked")}</Notice> : null}
      {failed ? <Notice kind="error">{failed.message}</Notice> : null}
      <Form method="get" className="panel filters" aria-labelledby="filters-title">
        <h2 id="filters-title">{t("audit.filters")}</h2>
        <div className="filter-grid">
          {NAME_FILTERS.map((f) => (
            <TextField
              key={f}
              name={f}
              label={t(`sessions.${f}Filter`)}
              hint={t(`sessions.${f}Hint`)}
              defaultValue={filters[f]}
              error={noMatch.includes(f) ? t(`sessions.noMatch.${f}`, { text: filters[f] }) : undefined}
            />
          ))}
        </div>
        {ID_FILTERS.filter((f) => filters[f]).map((f) => (
          <input key={f} type="hidden" name={f} value={filters[f]} />
        ))}
        <button type="submit" className="button button-inline">{t("audit.apply")}</button>
      </Form>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {page ? (
        <>
          <ListTable
            rows={page.data}
            rowKey={(s) => s.id}
            caption={t("sessions.title")}
            columns={[
              ...sessionColumns(t, { user: true }),
              {
                header: t("common.actions"),
                cell: (s) => <ConfirmAction intent="revoke" label={t("sessions.revoke")} question={t("sessions.confirmRevoke")} fields={{ sessionId: s.id }} danger />,
              },
            ]}
          />
          <CursorPager search={search} cursor={page.cursor} />
        </>
      ) : null}
    </>
  );
}
