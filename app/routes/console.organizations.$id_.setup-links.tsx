import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { text, zodFieldErrors } from "~/components/console/forms";
import { ListTable, Moment } from "~/components/console/list-table";
import { ConfirmAction, Csrf, CopyButton, Notice, TextField } from "~/components/console/ui";
import { DEFAULT_SETUP_LINK_DAYS, SetupLinkCreateSchema } from "~/schemas/setup-link";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Setup links · Porta console" }];

/** An organization's setup links (decision 089): create one (its URL shown once), see what became of each, revoke. */
export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const orgId = args.params.id!;
  const [org, links] = await Promise.all([
    console.admin("organizations.get", { params: { id: orgId } }),
    console.admin("setupLinks.list", { params: { orgId }, query: { limit: "100" } }),
  ]);
  if (!org.ok) throw data({ message: "not_found" }, { status: 404 });
  return data({ org: org.body, links: links.ok ? links.body.data : [], done: new URL(args.request.url).searchParams.get("done") }, { headers: NO_STORE });
}

type ActionResult = { kind: "invalid"; errors: Record<string, string> } | { kind: "created"; url: string };

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const orgId = args.params.id!;
  if (String(form.get("intent") ?? "") === "revoke") {
    const id = String(form.get("linkId") ?? "");
    // Only a link of the organization this page is about.
    const found = await console.admin("setupLinks.get", { params: { id } });
    if (!found.ok || found.body.organizationId !== orgId) {
      return data<ActionResult>({ kind: "invalid", errors: { form: found.ok ? "The setup link does not exist." : found.error.message } }, { status: found.ok ? 404 : found.status, headers: NO_STORE });
    }
    const revoked = await console.admin("setupLinks.revoke", { params: { id } });
    if (!revoked.ok) return data<ActionResult>({ kind: "invalid", errors: { form: revoked.error.message } }, { status: revoked.status, headers: NO_STORE });
    return redirect(`/console/organizations/${orgId}/setup-links?done=revoked`);
  }
  const note = text(form, "note");
  const parsed = SetupLinkCreateSchema.safeParse({ expiresInDays: Number(text(form, "expiresInDays") ?? String(DEFAULT_SETUP_LINK_DAYS)), ...(note ? { note } : {}) });
  if (!parsed.success) return data<ActionResult>({ kind: "invalid", errors: zodFieldErrors(parsed.error) }, { status: 422, headers: NO_STORE });
  const created = await console.admin("setupLinks.create", { params: { orgId }, body: parsed.data });
  if (!created.ok) return data<ActionResult>({ kind: "invalid", errors: created.error.details?.length ? Object.fromEntries(created.error.details.map((d) => [d.field, d.message])) : { form: created.error.message } }, { status: created.status, headers: NO_STORE });
  // The URL is in this one response only; the page that shows it is never cached.
  return data<ActionResult>({ kind: "created", url: created.body.url }, { headers: NO_STORE });
}

export default function SetupLinks() {
  const { org, links, done } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation("console");
  const errors = result?.kind === "invalid" ? result.errors : {};
  return (
    <>
      <p className="breadcrumb"><Link to={`/console/organizations/${org.id}`}>{org.name}</Link></p>
      <h1>{t("setupLink.title")}</h1>
      <p className="muted">{t("setupLink.intro")}</p>
      {done === "revoked" ? <Notice kind="info">{t("setupLink.revoked")}</Notice> : null}
      {result?.kind === "created" ? (
        <section className="panel secret" aria-labelledby="url-title">
          <h2 id="url-title">{t("setupLink.urlOnce")}</h2>
          <p>{t("setupLink.urlOnceText")}</p>
          <div className="field">
            <label htmlFor="setup-url">{t("setupLink.url")}</label>
            <input id="setup-url" readOnly value={result.url} className="secret-value" />
          </div>
          <CopyButton value={result.url} label={t("setupLink.copy")} />
        </section>
      ) : null}
      {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
      <ListTable
        rows={links}
        rowKey={(link) => link.id}
        empty={t("setupLink.none")}
        caption={t("setupLink.title")}
        columns={[
          { header: t("setupLink.note"), cell: (link) => link.note ?? "" },
          { header: t("common.status"), cell: (link) => t(`setupLink.status.${link.status}`) },
          { header: t("setupLink.created"), cell: (link) => <Moment iso={link.createdAt} /> },
          { header: t("setupLink.opened"), cell: (link) => (link.openedAt ? <Moment iso={link.openedAt} /> : "") },
          { header: t("setupLink.expires"), cell: (link) => <Moment iso={link.expiresAt} /> },
          {
            header: t("common.actions"),
            cell: (link) =>
              link.status === "pending" || link.status === "opened" ? (
                <ConfirmAction intent="revoke" label={t("setupLink.revoke")} question={t("setupLink.confirmRevoke")} fields={{ linkId: link.id }} danger />
              ) : null,
          },
        ]}
      />
      <Form method="post" reloadDocument noValidate className="panel form" aria-labelledby="new-link-title">
        <h2 id="new-link-title">{t("setupLink.create")}</h2>
        <Csrf />
        <input type="hidden" name="intent" value="create" />
        <TextField name="note" label={t("setupLink.note")} hint={t("setupLink.noteHint")} error={errors.note} />
        <TextField name="expiresInDays" label={t("setupLink.expiresInDays")} hint={t("setupLink.expiresInDaysHint")} defaultValue={String(DEFAULT_SETUP_LINK_DAYS)} error={errors.expiresInDays} />
        <button type="submit" className="button button-inline">{t("setupLink.create")}</button>
      </Form>
    </>
  );
}
