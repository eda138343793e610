import { data, redirect, type ActionFunctionArgs, type HeadersFunction, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { currentSetup, finishSetup, openLink, setupCsrfSubject, setupPath, type Refusal, type SetupSession } from "~/.server/console/setup-link";
import { readForm } from "~/.server/http/form";
import { resolveLanguage } from "~/.server/i18n";
import { scimEndpointOf } from "~/.server/scim/paths";
import { detailErrors, text, zodFieldErrors } from "~/components/console/forms";
import { IDENTITY_PROVIDER_FIELDS, IdentityProviderFields, identityProviderInput } from "~/components/console/identity-provider-fields";
import { ListTable, Moment } from "~/components/console/list-table";
import { SAML_ERROR_FIELDS, SAML_FIELDS, SamlCreateFields, SamlServiceProviderValues, samlCreateInput } from "~/components/console/saml-connection-fields";
import { CopyButton, Notice, TextField } from "~/components/console/ui";
import { OrganizationDomainCreateSchema } from "~/schemas/domain";
import { IdentityProviderCreateSchema } from "~/schemas/identity-provider";
import { DEFAULT_SCIM_TOKEN_DAYS, ScimTokenCreateSchema } from "~/schemas/scim-token";

/**
 * GET /{slug}/setup?token=… and /{slug}/setup (decision 089): what a customer's IT person does
 * with a setup link — connect the organization's identity provider, prove its domain, issue a
 * SCIM token, and finish. Nothing else of the organization is shown. The token opens the link
 * once and is dropped from the address at once (a redirect); the browser that opened it carries
 * the link's cookie from then on (app/.server/console/setup-link.ts).
 */
// Not Referrer-Policy no-referrer: Chromium then sends its form posts with `Origin: null`, which
// the edge guard refuses as cross-site. The token has left the address before any form is shown,
// and Porta's own policy (same-origin) sends no Referer to other sites.
const NO_STORE = { "Cache-Control": "no-store" };
// Remix keeps a loader's or action's headers only through this export: the finish's cookie too.
export const headers: HeadersFunction = ({ actionHeaders }) => {
  const cookie = actionHeaders.get("Set-Cookie");
  return cookie ? { ...NO_STORE, "Set-Cookie": cookie } : NO_STORE;
};
export const meta: MetaFunction = () => [{ title: "Setup · Porta" }, { name: "robots", content: "noindex" }];

type Ended = { view: "invalid"; language: string } | { view: "refused"; language: string; refusal: Refusal } | { view: "finished"; language: string; organization: string };

export async function loader({ request, params, context }: LoaderFunctionArgs) {
  const slug = params.slug!;
  const language = await resolveLanguage(request, {});
  const token = new URL(request.url).searchParams.get("token");
  if (token !== null) {
    const opened = await openLink(context, request, slug, token);
    if (opened.kind === "opened") return redirect(opened.location, { status: 303, headers: { ...NO_STORE, "Set-Cookie": opened.cookie } });
    if (opened.kind === "refused") return data<Ended>({ view: "refused", language, refusal: opened.refusal }, { status: 403, headers: NO_STORE });
    return data<Ended>({ view: "invalid", language }, { status: 404, headers: NO_STORE });
  }
  const current = await currentSetup(context, request, slug);
  if (current.kind === "none") return data<Ended>({ view: "invalid", language }, { status: 404, headers: NO_STORE });
  if (current.kind === "refused") return data<Ended>({ view: "refused", language, refusal: current.refusal }, { status: 403, headers: NO_STORE });
  return data({ view: "setup" as const, language, ...(await setupView(context.services.config.baseUrl, current.setup)), done: new URL(request.url).searchParams.get("done") }, { headers: NO_STORE });
}

async function setupView(baseUrl: string, setup: SetupSession) {
  const organizationId = setup.organization.id;
  const [providers, domains, tokens] = await Promise.all([
    setup.admin("identityProviders.list", { query: { organizationId, limit: "100" } }),
    setup.admin("domains.list", { params: { orgId: organizationId } }),
    setup.admin("scimTokens.list", { params: { orgId: organizationId }, query: { limit: "100" } }),
  ]);
  // The list leaves out the SAML settings' detail: each connection is read for the values its IdP needs.
  const details = await Promise.all((providers.ok ? providers.body.data : []).map((p) => setup.admin("identityProviders.get", { params: { id: p.id } })));
  return {
    organization: setup.organization,
    note: setup.note,
    expiresAt: setup.expiresAt,
    csrf: setup.csrf,
    providers: details.flatMap((d) => (d.ok ? [d.body] : [])),
    domains: domains.ok ? domains.body.data : [],
    tokens: tokens.ok ? tokens.body.data : [],
    scimEndpoint: scimEndpointOf(baseUrl, setup.organization.slug),
  };
}

type ActionResult =
  | Ended
  | { view: "result"; errors: Record<string, string>; section: "idp" | "refresh" | "domain" | "scim"; domain?: string }
  | { view: "result"; section: "scim"; token: string; errors?: undefined }
  | { view: "result"; section: "domain"; checked: { status: string; lastError: string | null }; errors?: undefined };

const FORM_MAX_BYTES = 256 * 1024;

export async function action({ request, params, context }: ActionFunctionArgs) {
  const slug = params.slug!;
  const language = await resolveLanguage(request, {});
  const current = await currentSetup(context, request, slug);
  if (current.kind === "none") return data<ActionResult>({ view: "invalid", language }, { status: 404, headers: NO_STORE });
  if (current.kind === "refused") return data<ActionResult>({ view: "refused", language, refusal: current.refusal }, { status: 403, headers: NO_STORE });
  const setup = current.setup;
  const length = Number(request.headers.get("content-length"));
  if (!Number.isSafeInteger(length) || length > FORM_MAX_BYTES) {
    context.res.setHeader("Connection", "close");
    throw data({ message: "too_large" }, { status: 413, headers: NO_STORE });
  }
  const form = await readForm(request);
  if (!context.services.csrf.verify(setupCsrfSubject(setup.linkId), form.get("csrf"))) throw data({ message: "csrf" }, { status: 403, headers: NO_STORE });
  const organizationId = setup.organization.id;
  const back = (done: string) => redirect(`${setupPath(slug)}?done=${done}`, { status: 303, headers: NO_STORE });
  const fail = (section: "idp" | "refresh" | "domain" | "scim", status: number, errors: Record<string, string>, extra: { domain?: string } = {}) =>
    data<ActionResult>({ view: "result", section, errors, ...extra }, { status, headers: NO_STORE });

  switch (String(form.get("intent") ?? "")) {
    case "connect": {
      const input = identityProviderInput(form, { organizationId });
      const parsed = IdentityProviderCreateSchema.safeParse(text(form, "kind") === "saml" ? { ...input, clientId: undefined, ...samlCreateInput(form) } : input);
      if (!parsed.success) return fail("idp", 422, zodFieldErrors(parsed.error));
      const created = await setup.admin("identityProviders.create", { body: parsed.data });
      if (!created.ok) return fail("idp", created.status, created.error.details ? detailErrors(created.error.details, [...IDENTITY_PROVIDER_FIELDS, ...SAML_FIELDS], SAML_ERROR_FIELDS) : { form: created.error.message });
      return back("connected");
    }
    case "refreshMetadata": {
      // Another organization's connection is not found: the link's caller is held to its organization.
      const refreshed = await setup.admin("identityProviders.refreshSamlMetadata", { params: { id: String(form.get("providerId") ?? "") } });
      if (!refreshed.ok) return fail("refresh", refreshed.status, { form: refreshed.error.details?.map((d) => `${d.field}: ${d.message}`).join("; ") ?? refreshed.error.message });
      return back("refreshed");
    }
    case "addDomain": {
      const typed = String(form.get("domain") ?? "");
      const parsed = OrganizationDomainCreateSchema.safeParse({ domain: typed });
      if (!parsed.success) return fail("domain", 422, zodFieldErrors(parsed.error), { domain: typed });
      const added = await setup.admin("domains.add", { params: { orgId: organizationId }, body: parsed.data });
      if (!added.ok) return fail("domain", added.status, added.error.details?.length ? Object.fromEntries(added.error.details.map((d) => [d.field, d.message])) : { form: added.error.message }, { domain: typed });
      return back("domainAdded");
    }
    case "verifyDomain": {
      // Another organization's domain id is not found: the link's caller is held to its organization.
      const checked = await setup.admin("domains.verify", { params: { id: String(form.get("domainId") ?? "") } });
      if (!checked.ok) return fail("domain", checked.status, { form: checked.error.message });
      return data<ActionResult>({ view: "result", section: "domain", checked: { status: checked.body.status, lastError: checked.body.lastError } }, { headers: NO_STORE });
    }
    case "removeDomain": {
      const removed = await setup.admin("domains.delete", { params: { id: String(form.get("domainId") ?? "") } });
      if (!removed.ok) return fail("domain", removed.status, { form: removed.error.message });
      return back("domainRemoved");
    }
    case "issueToken": {
      const parsed = ScimTokenCreateSchema.safeParse({ name: text(form, "tokenName") ?? "", expiresInDays: Number(text(form, "expiresInDays") ?? String(DEFAULT_SCIM_TOKEN_DAYS)) });
      if (!parsed.success) {
        const { name, ...rest } = zodFieldErrors(parsed.error);
        return fail("scim", 422, name === undefined ? rest : { ...rest, tokenName: name });
      }
      const issued = await setup.admin("scimTokens.create", { params: { orgId: organizationId }, body: parsed.data });
      if (!issued.ok) return fail("scim", issued.status, { form: issued.error.message });
      // The value is in this one response only; the page is never cached.
      return data<ActionResult>({ view: "result", section: "scim", token: issued.body.token }, { headers: NO_STORE });
    }
    case "revokeToken": {
      const revoked = await setup.admin("scimTokens.revoke", { params: { id: String(form.get("tokenId") ?? "") } });
      if (!revoked.ok) return fail("scim", revoked.status, { form: revoked.error.message });
      return back("tokenRevoked");
    }
    case "finish": {
      const { cookie } = await finishSetup(context, setup);
      return data<ActionResult>({ view: "finished", language, organization: setup.organization.name }, { status: 200, headers: { ...NO_STORE, "Set-Cookie": cookie } });
    }
    default:
      throw data({ message: "unknown intent" }, { status: 400, headers: NO_STORE });
  }
}

function Csrf({ value }: { value: string }) {
  return <input type="hidden" name="csrf" value={value} />;
}

function EndedPage({ ended }: { ended: Ended }) {
  const { t } = useTranslation("console");
  const title = ended.view === "finished" ? t("setupPage.finishedTitle") : t("setupPage.endedTitle");
  const text =
    ended.view === "finished"
      ? t("setupPage.finished", { organization: ended.organization })
      : ended.view === "refused"
        ? t(`setupPage.refused.${ended.refusal.reason}`, { organization: ended.refusal.organization.name })
        : t("setupPage.invalid");
  return (
    <main className="page">
      <section className="card" aria-labelledby="page-title">
        <h1 id="page-title">{title}</h1>
        <p role={ended.view === "finished" ? "status" : "alert"}>{text}</p>
        {ended.view === "finished" ? null : <p className="muted">{t("setupPage.whomToAsk")}</p>}
      </section>
    </main>
  );
}

export default function SetupPage() {
  const page = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>() as ActionResult | undefined;
  const { t } = useTranslation("console");
  if (result && result.view !== "result") return <EndedPage ended={result} />;
  if (page.view !== "setup") return <EndedPage ended={page} />;
  const outcome = result ?? null;
  const errorsOf = (section: string): Record<string, string> => (outcome && outcome.section === section && outcome.errors ? outcome.errors : {});
  const idpErrors = errorsOf("idp");
  const domainErrors = errorsOf("domain");
  const scimErrors = errorsOf("scim");
  const issued = outcome && "token" in outcome ? outcome.token : null;
  const checked = outcome && "checked" in outcome ? outcome.checked : null;
  const { csrf } = page;
  return (
    <div className="console">
      <main id="main" className="console-main setup-page">
        <h1>{t("setupPage.title", { organization: page.organization.name })}</h1>
        <p className="muted">{t("setupPage.intro", { expires: page.expiresAt.replace("T", " ").slice(0, 16) })}</p>
        {page.done ? <Notice kind="info">{t(`setupPage.done.${page.done}`, { defaultValue: "" })}</Notice> : null}

        <section aria-labelledby="sso-title">
          <h2 id="sso-title">{t("setupPage.sso")}</h2>
          <p className="muted">{t("setupPage.ssoIntro")}</p>
          {errorsOf("refresh").form ? <Notice kind="error">{errorsOf("refresh").form}</Notice> : null}
          {page.providers.map((provider) =>
            provider.saml ? (
              <div key={provider.id}>
                <h3>{provider.name}</h3>
                <SamlServiceProviderValues saml={provider.saml} provider={provider} />
                {provider.saml.metadataUrl ? (
                  <Form method="post" reloadDocument className="panel">
                    <Csrf value={csrf} />
                    <input type="hidden" name="intent" value="refreshMetadata" />
                    <input type="hidden" name="providerId" value={provider.id} />
                    <button type="submit" className="button button-inline">{t("idp.saml.refresh")}</button>
                  </Form>
                ) : null}
              </div>
            ) : (
              <section key={provider.id} className="panel" aria-labelledby={`callback-${provider.id}`}>
                <h3 id={`callback-${provider.id}`}>{provider.name}</h3>
                <p>{t("idp.callbackHint")}</p>
                <p><code>{provider.callbackUrl}</code> <CopyButton value={provider.callbackUrl} label={t("idp.copyCallback")} /></p>
              </section>
            ),
          )}
          <Form method="post" reloadDocument noValidate className="panel form" aria-labelledby="connect-title">
            <h3 id="connect-title">{t("setupPage.connect")}</h3>
            {idpErrors.form ? <Notice kind="error">{idpErrors.form}</Notice> : null}
            <Csrf value={csrf} />
            <input type="hidden" name="intent" value="connect" />
            <IdentityProviderFields provider={null} errors={idpErrors} />
            <SamlCreateFields errors={idpErrors} />
            <button type="submit" className="button button-inline">{t("idp.create")}</button>
          </Form>
        </section>

        <section aria-labelledby="domains-title">
          <h2 id="domains-title">{t("setupPage.domains")}</h2>
          <p className="muted">{t("domains.intro")}</p>
          {checked ? (
            <Notice kind={checked.status === "verified" ? "info" : "error"}>{checked.status === "verified" ? t("domains.checkedOk") : t("domains.checkedFailed", { error: checked.lastError ?? "" })}</Notice>
          ) : null}
          {domainErrors.form ? <Notice kind="error">{domainErrors.form}</Notice> : null}
          {page.domains.map((d) =>
            d.status === "verified" ? null : (
              <section key={d.id} className="panel" aria-labelledby={`record-${d.id}`}>
                <h3 id={`record-${d.id}`}>{t("domains.recordFor", { domain: d.domain })}</h3>
                <p>{t("domains.recordText")}</p>
                <dl>
                  <dt>{t("domains.recordType")}</dt>
                  <dd><code>TXT</code></dd>
                  <dt>{t("domains.recordName")}</dt>
                  <dd><code>{d.record.name}</code> <CopyButton value={d.record.name} label={t("domains.copyName")} /></dd>
                  <dt>{t("domains.recordValue")}</dt>
                  <dd><code>{d.record.value}</code> <CopyButton value={d.record.value} label={t("domains.copyValue")} /></dd>
                </dl>
              </section>
            ),
          )}
          <ListTable
            rows={page.domains}
            rowKey={(d) => d.id}
            empty={t("domains.none")}
            caption={t("setupPage.domains")}
            columns={[
              { header: t("domains.domain"), cell: (d) => <code>{d.domain}</code> },
              { header: t("common.status"), cell: (d) => t(`domains.status.${d.status}`) },
              { header: t("domains.lastError"), cell: (d) => d.lastError ?? "" },
              {
                header: t("common.actions"),
                cell: (d) => (
                  <>
                    <Form method="post" reloadDocument className="inline-form">
                      <Csrf value={csrf} />
                      <input type="hidden" name="intent" value="verifyDomain" />
                      <input type="hidden" name="domainId" value={d.id} />
                      <button type="submit" className="button button-inline button-secondary">{t("domains.verify")}</button>
                    </Form>
                    <Form method="post" reloadDocument className="inline-form">
                      <Csrf value={csrf} />
                      <input type="hidden" name="intent" value="removeDomain" />
                      <input type="hidden" name="domainId" value={d.id} />
                      <button type="submit" className="button button-inline button-danger">{t("domains.remove")}</button>
                    </Form>
                  </>
                ),
              },
            ]}
          />
          <Form method="post" reloadDocument noValidate className="panel form" aria-labelledby="add-domain-title">
            <h3 id="add-domain-title">{t("domains.add")}</h3>
            <Csrf value={csrf} />
            <input type="hidden" name="intent" value="addDomain" />
            <TextField name="domain" label={t("domains.domain")} hint={t("domains.domainHint")} defaultValue={outcome && "domain" in outcome ? (outcome.domain ?? "") : ""} error={domainErrors.domain} required />
            <button type="submit" className="button button-inline">{t("domains.add")}</button>
          </Form>
        </section>

        <section aria-labelledby="scim-title">
          <h2 id="scim-title">{t("scim.title")}</h2>
          <p className="muted">{t("scim.intro")}</p>
          <div className="field">
            <label htmlFor="scim-endpoint">{t("scim.endpoint")}</label>
            <input id="scim-endpoint" readOnly value={page.scimEndpoint} />
          </div>
          {issued ? (
            <section className="panel secret" aria-labelledby="token-title">
              <h3 id="token-title">{t("scim.tokenOnce")}</h3>
              <p>{t("scim.tokenOnceText")}</p>
              <div className="field">
                <label htmlFor="scim-token">{t("scim.token")}</label>
                <input id="scim-token" readOnly value={issued} className="secret-value" />
              </div>
              <CopyButton value={issued} label={t("scim.copy")} />
            </section>
          ) : null}
          {scimErrors.form ? <Notice kind="error">{scimErrors.form}</Notice> : null}
          <ListTable
            rows={page.tokens}
            rowKey={(token) => token.id}
            empty={t("scim.noTokens")}
            caption={t("scim.tokens")}
            columns={[
              { header: t("scim.name"), cell: (token) => token.name },
              { header: t("scim.prefix"), cell: (token) => <code>{`${token.prefix}…`}</code> },
              { header: t("scim.expires"), cell: (token) => <Moment iso={token.expiresAt} /> },
              { header: t("common.status"), cell: (token) => t(`scim.status.${token.status}`) },
              {
                header: t("common.actions"),
                cell: (token) =>
                  token.status === "revoked" ? null : (
                    <Form method="post" reloadDocument className="inline-form">
                      <Csrf value={csrf} />
                      <input type="hidden" name="intent" value="revokeToken" />
                      <input type="hidden" name="tokenId" value={token.id} />
                      <button type="submit" className="button button-inline button-danger">{t("scim.revoke")}</button>
                    </Form>
                  ),
              },
            ]}
          />
          <Form method="post" reloadDocument noValidate className="panel form" aria-labelledby="new-token-title">
            <h3 id="new-token-title">{t("scim.issue")}</h3>
            <Csrf value={csrf} />
            <input type="hidden" name="intent" value="issueToken" />
            {/* Not `name`: the connection form above has that field, and a label finds its field by id. */}
            <TextField name="tokenName" label={t("scim.name")} error={scimErrors.tokenName} />
            <TextField name="expiresInDays" label={t("scim.expiresInDays")} defaultValue={String(DEFAULT_SCIM_TOKEN_DAYS)} error={scimErrors.expiresInDays} />
            <button type="submit" className="button button-inline">{t("scim.issue")}</button>
          </Form>
        </section>

        <Form method="post" reloadDocument className="panel" aria-labelledby="finish-title">
          <h2 id="finish-title">{t("setupPage.finish")}</h2>
          <p>{t("setupPage.finishText")}</p>
          <Csrf value={csrf} />
          <input type="hidden" name="intent" value="finish" />
          <button type="submit" className="button button-inline">{t("setupPage.finish")}</button>
        </Form>
      </main>
    </div>
  );
}
