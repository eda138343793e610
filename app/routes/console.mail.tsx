import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { ListTable, Moment } from "~/components/console/list-table";
import { ActionForm, ConfirmAction, Notice } from "~/components/console/ui";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Undelivered mail · Porta console" }];

const PAGE_SIZE = 25;

/** The dead-letter queue of mail, newest first, with a re-drive per mail and for all. */
export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const search = new URL(args.request.url).searchParams;
  const pageNumber = Math.max(1, Number.parseInt(search.get("page") ?? "1", 10) || 1);
  const result = await console.admin("mail.listDead", { query: { page: String(pageNumber), pageSize: String(PAGE_SIZE) } });
  const done = search.get("done");
  const counts = { redriven: Number(search.get("redriven") ?? 0), linkExpired: Number(search.get("linkExpired") ?? 0) };
  if (!result.ok) return data({ page: null, error: result.error.message, done, counts }, { status: result.status, headers: NO_STORE });
  return data({ page: result.body, error: null, done, counts }, { headers: NO_STORE });
}

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const intent = form.get("intent");
  if (intent === "redrive") {
    const result = await console.admin("mail.redrive", { params: { id: String(form.get("mailId") ?? "") }, body: {} });
    // The page says why in the admin's language; the API's message is English.
    if (!result.ok) return data({ code: result.error.code, message: result.error.message }, { status: result.status, headers: NO_STORE });
    return redirect("/console/mail?done=redriven");
  }
  if (intent === "redrive-all") {
    const result = await console.admin("mail.redriveAll", { body: {} });
    if (!result.ok) return data({ code: result.error.code, message: result.error.message }, { status: result.status, headers: NO_STORE });
    return redirect(`/console/mail?done=redrivenAll&redriven=${result.body.redriven}&linkExpired=${result.body.linkExpired}`);
  }
  return data({ code: "unknown_action", message: "unknown action" }, { status: 400, headers: NO_STORE });
}

export default function Mail() {
  const { page, error, done, counts } = useLoaderData<typeof loader>();
  const failed = useActionData<typeof action>();
  const { t } = useTranslation("console");
  const pages = page ? Math.max(1, Math.ceil(page.total / page.pageSize)) : 1;
  return (
    <>
      <h1>{t("mail.title")}</h1>
      <p className="muted">{t("mail.intro")}</p>
      {done === "redriven" ? <Notice kind="info">{t("mail.redriven")}</Notice> : null}
      {done === "redrivenAll" ? <Notice kind="info">{t("mail.redrivenAll", { count: counts.redriven, expired: counts.linkExpired })}</Notice> : null}
      {failed ? <Notice kind="error">{failed.code === "link_expired" ? t("mail.linkExpired") : failed.message}</Notice> : null}
      {error ? <Notice kind="error">{error}</Notice> : null}
      {page && page.data.length === 0 ? <p>{t("mail.none")}</p> : null}
      {page && page.data.length > 0 ? (
        <>
          <ListTable
            rows={page.data}
            rowKey={(m) => m.id}
            columns={[
              { header: t("mail.kind"), cell: (m) => t(`mail.kinds.${m.kind}`) },
              {
                header: t("mail.recipient"),
                cell: (m) =>
                  m.userId && m.organizationId ? <Link to={`/console/organizations/${m.organizationId}/users/${m.userId}`}>{m.email ?? m.userId}</Link> : (m.email ?? "—"),
              },
              { header: t("mail.reason"), cell: (m) => <code>{m.reason}</code> },
              { header: t("mail.attempts"), cell: (m) => (m.attempts === null ? "—" : String(m.attempts)) },
              { header: t("mail.failedAt"), cell: (m) => <Moment iso={m.failedAt} /> },
              { header: t("mail.linkExpires"), cell: (m) => (m.linkExpired ? t("mail.expired") : <Moment iso={m.linkExpiresAt} />) },
              {
                header: t("common.actions"),
                cell: (m) =>
                  m.linkExpired ? (
                    t("mail.cannotRedrive")
                  ) : (
                    <ActionForm intent="redrive" fields={{ mailId: m.id }}>
                      <button type="submit" className="button button-inline">
                        {t("mail.redrive")}
                      </button>
                    </ActionForm>
                  ),
              },
            ]}
          />
          {pages > 1 ? (
            <nav className="pager" aria-label={t("mail.pages")}>
              {page.page > 1 ? <Link to={`/console/mail?page=${page.page - 1}`}>{t("mail.newer")}</Link> : null}
              {page.page < pages ? <Link to={`/console/mail?page=${page.page + 1}`}>{t("mail.older")}</Link> : null}
            </nav>
          ) : null}
          <section className="panel actions-panel" aria-label={t("common.actions")}>
            <ConfirmAction intent="redrive-all" label={t("mail.redriveAll")} question={t("mail.confirmRedriveAll", { count: page.total })} />
          </section>
        </>
      ) : null}
    </>
  );
}
