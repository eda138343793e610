import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE } from "~/.server/console/page";
import { requireOrganizationConsole, requireOrganizationConsoleForm } from "~/.server/console/organization-console";
import { scimEndpointOf } from "~/.server/scim/paths";
import { text, zodFieldErrors } from "~/components/console/forms";
import { ListTable, Moment } from "~/components/console/list-table";
import { ConfirmAction, Csrf, CopyButton, Notice, TextField } from "~/components/console/ui";
import { DEFAULT_SCIM_TOKEN_DAYS, ScimTokenCreateSchema } from "~/schemas/scim-token";

/** The organization console's page (decision 090): the service console's, bound to the signed-in administrator's organization through its door. */
export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "SCIM provisioning · Porta" }];

/** An organization's SCIM endpoint (decision 084): its base URL and the tokens identity providers provision with. */
export async function loader(args: LoaderFunctionArgs) {
  const console = await requireOrganizationConsole(args);
  const orgId = console.organizationId;
  const [org, tokens] = await Promise.all([
    console.admin("organizations.get", { params: { id: orgId } }),
    console.admin("scimTokens.list", { params: { orgId }, query: { limit: "100" } }),
  ]);
  if (!org.ok) throw data({ message: "not_found" }, { status: 404 });
  return data(
    { org: org.body, endpoint: scimEndpointOf(args.context.services.config.baseUrl, org.body.slug), tokens: tokens.ok ? tokens.body.data : [], done: new URL(args.request.url).searchParams.get("done") },
    { headers: NO_STORE },
  );
}

const t404 = "The SCIM token does not exist.";

type ActionResult = { kind: "invalid"; errors: Record<string, string> } | { kind: "issued"; token: string };

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireOrganizationConsoleForm(args);
  const orgId = console.organizationId;
  if (String(form.get("intent") ?? "") === "revoke") {
    const id = String(form.get("tokenId") ?? "");
    // Only a token of the organization this page is about: its id is checked before anything is revoked.
    const found = await console.admin("scimTokens.get", { params: { id } });
    if (!found.ok || found.body.organizationId !== orgId) {
      return data<ActionResult>({ kind: "invalid", errors: { form: found.ok ? t404 : found.error.message } }, { status: found.ok ? 404 : found.status, headers: NO_STORE });
    }
    const revoked = await console.admin("scimTokens.revoke", { params: { id } });
    if (!revoked.ok) return data<ActionResult>({ kind: "invalid", errors: { form: revoked.error.message } }, { status: revoked.status, headers: NO_STORE });
    return redirect(`/${console.slug}/console/scim?done=revoked`);
  }
  const days = Number(text(form, "expiresInDays") ?? String(DEFAULT_SCIM_TOKEN_DAYS));
  const parsed = ScimTokenCreateSchema.safeParse({ name: text(form, "name") ?? "", expiresInDays: days });
  if (!parsed.success) return data<ActionResult>({ kind: "invalid", errors: zodFieldErrors(parsed.error) }, { status: 422, headers: NO_STORE });
  const issued = await console.admin("scimTokens.create", { params: { orgId }, body: parsed.data });
  if (!issued.ok) return data<ActionResult>({ kind: "invalid", errors: { form: issued.error.message } }, { status: issued.status, headers: NO_STORE });
  // The value is in this one response only; the page that shows it is never cached.
  return data<ActionResult>({ kind: "issued", token: issued.body.token }, { headers: NO_STORE });
}

export default function Scim() {
  const { endpoint, tokens, done } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation("console");
  const errors = result?.kind === "invalid" ? result.errors : {};
  return (
    <>
      <h1>{t("scim.title")}</h1>
      <p className="muted">{t("scim.intro")}</p>
      {done ? <Notice kind="info">{t("scim.done.revoked")}</Notice> : null}
      <div className="field">
        <label htmlFor="scim-endpoint">{t("scim.endpoint")}</label>
        <input id="scim-endpoint" readOnly value={endpoint} />
      </div>
      <h2>{t("scim.tokens")}</h2>
      {result?.kind === "issued" ? (
        <section className="panel secret" aria-labelledby="token-title">
          <h3 id="token-title">{t("scim.tokenOnce")}</h3>
          <p>{t("scim.tokenOnceText")}</p>
          <div className="field">
            <label htmlFor="scim-token">{t("scim.token")}</label>
            <input id="scim-token" readOnly value={result.token} className="secret-value" />
          </div>
          <CopyButton value={result.token} label={t("scim.copy")} />
        </section>
      ) : null}
      {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
      <ListTable
        rows={tokens}
        rowKey={(token) => token.id}
        empty={t("scim.noTokens")}
        caption={t("scim.tokens")}
        columns={[
          { header: t("scim.name"), cell: (token) => token.name },
          { header: t("scim.prefix"), cell: (token) => <code>{`${token.prefix}…`}</code> },
          { header: t("scim.lastUsed"), cell: (token) => (token.lastUsedAt ? <Moment iso={token.lastUsedAt} /> : t("scim.never")) },
          { header: t("scim.expires"), cell: (token) => <Moment iso={token.expiresAt} /> },
          { header: t("common.status"), cell: (token) => t(`scim.status.${token.status}`) },
          {
            header: t("common.actions"),
            cell: (token) =>
              token.status === "revoked" ? null : (
                <ConfirmAction intent="revoke" label={t("scim.revoke")} question={t("scim.confirmRevoke", { prefix: token.prefix })} fields={{ tokenId: token.id }} />
              ),
          },
        ]}
      />
      <Form method="post" reloadDocument noValidate className="panel form" aria-labelledby="new-token-title">
        <h3 id="new-token-title">{t("scim.issue")}</h3>
        <Csrf />
        <input type="hidden" name="intent" value="issue" />
        <TextField name="name" label={t("scim.name")} error={errors.name} />
        <TextField name="expiresInDays" label={t("scim.expiresInDays")} defaultValue={String(DEFAULT_SCIM_TOKEN_DAYS)} error={errors.expiresInDays} />
        <button type="submit" className="button button-inline">{t("scim.issue")}</button>
      </Form>
    </>
  );
}
