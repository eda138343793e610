import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { detailErrors, list, text, zodFieldErrors } from "~/components/console/forms";
import { InputField } from "~/components/console/detail-parts";
import { ListTable, Moment } from "~/components/console/list-table";
import { CheckboxGroup, ConfirmAction, Csrf, CopyButton, Notice, TextField } from "~/components/console/ui";
import { CLIENT_GRANT_TYPE_VALUES } from "~/schemas/client";
import { REGISTRATION_AUTH_METHOD_VALUES, RegistrationPolicySchema, RegistrationTokenCreateSchema } from "~/schemas/registration";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Client registration · Porta console" }];

/** An organization's dynamic client registration (decision 054): the policy and the initial access tokens. */
export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const orgId = args.params.id!;
  const [org, policy, tokens] = await Promise.all([
    console.admin("organizations.get", { params: { id: orgId } }),
    console.admin("registration.getPolicy", { params: { id: orgId } }),
    console.admin("registration.listTokens", { params: { id: orgId }, query: { limit: "100" } }),
  ]);
  if (!org.ok || !policy.ok) throw data({ message: "not_found" }, { status: 404 });
  return data(
    { org: org.body, policy: policy.body, version: policy.version!, tokens: tokens.ok ? tokens.body.data : [], done: new URL(args.request.url).searchParams.get("done") },
    { headers: NO_STORE },
  );
}

type ActionResult = { kind: "invalid"; form: "policy" | "token"; errors: Record<string, string> } | { kind: "issued"; token: string; hint: string };

const DAY = 86_400;

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const orgId = args.params.id!;
  const intent = String(form.get("intent") ?? "");
  if (intent === "revoke") {
    const revoked = await console.admin("registration.revokeToken", { params: { id: orgId, tokenId: String(form.get("tokenId") ?? "") } });
    if (!revoked.ok) return data<ActionResult>({ kind: "invalid", form: "token", errors: { form: revoked.error.message } }, { status: revoked.status, headers: NO_STORE });
    return redirect(`/console/organizations/${orgId}/registration?done=revoked`);
  }
  if (intent === "issue") {
    const days = Number(text(form, "expiresInDays") ?? "1");
    const maxUses = text(form, "maxUses");
    const parsed = RegistrationTokenCreateSchema.safeParse({
      ...(text(form, "label") ? { label: text(form, "label") } : {}),
      expiresInSeconds: Number.isFinite(days) ? Math.round(days * DAY) : Number.NaN,
      maxUses: maxUses ? Number(maxUses) : null,
    });
    if (!parsed.success) return data<ActionResult>({ kind: "invalid", form: "token", errors: zodFieldErrors(parsed.error) }, { status: 422, headers: NO_STORE });
    const issued = await console.admin("registration.createToken", { params: { id: orgId }, body: parsed.data });
    if (!issued.ok) return data<ActionResult>({ kind: "invalid", form: "token", errors: { form: issued.error.message } }, { status: issued.status, headers: NO_STORE });
    // The value is in this one response only; the page that shows it is never cached.
    return data<ActionResult>({ kind: "issued", token: issued.body.token, hint: issued.body.hint }, { headers: NO_STORE });
  }
  const parsed = RegistrationPolicySchema.safeParse({
    enabled: form.get("enabled") === "on",
    requireInitialAccessToken: form.get("requireInitialAccessToken") === "on",
    allowedGrantTypes: list(form, "allowedGrantTypes"),
    allowedTokenEndpointAuthMethods: list(form, "allowedTokenEndpointAuthMethods"),
    clientIdMetadataDocuments: {
      enabled: form.get("documentsEnabled") === "on",
      allowedDomains: (text(form, "allowedDomains") ?? "").split(/[\s,]+/).filter(Boolean),
    },
  });
  if (!parsed.success) return data<ActionResult>({ kind: "invalid", form: "policy", errors: zodFieldErrors(parsed.error) }, { status: 422, headers: NO_STORE });
  const version = Number(form.get("version"));
  const saved = await console.admin("registration.setPolicy", { params: { id: orgId }, body: parsed.data, ifMatch: Number.isSafeInteger(version) ? version : undefined });
  if (!saved.ok) {
    const errors = saved.error.details ? detailErrors(saved.error.details, ["allowedGrantTypes", "allowedTokenEndpointAuthMethods", "clientIdMetadataDocuments"]) : { form: saved.error.message };
    return data<ActionResult>({ kind: "invalid", form: "policy", errors }, { status: saved.status, headers: NO_STORE });
  }
  return redirect(`/console/organizations/${orgId}/registration?done=saved`);
}

export default function Registration() {
  const { org, policy, version, tokens, done } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation("console");
  const policyErrors = result?.kind === "invalid" && result.form === "policy" ? result.errors : {};
  const tokenErrors = result?.kind === "invalid" && result.form === "token" ? result.errors : {};
  return (
    <>
      <p className="breadcrumb"><Link to={`/console/organizations/${org.id}`}>{org.name}</Link></p>
      <h1>{t("registration.title")}</h1>
      <p className="muted">{t("registration.intro", { endpoint: `/${org.slug}/register` })}</p>
      {done ? <Notice kind="info">{t(`registration.done.${done === "revoked" ? "revoked" : "saved"}`)}</Notice> : null}
      <Form method="post" reloadDocument noValidate className="panel form" aria-labelledby="registration-policy-title">
        <h2 id="registration-policy-title">{t("registration.policy")}</h2>
        {policyErrors.form ? <Notice kind="error">{policyErrors.form}</Notice> : null}
        <Csrf />
        <input type="hidden" name="intent" value="policy" />
        <input type="hidden" name="version" value={version} />
        <label className="check">
          <input type="checkbox" name="enabled" defaultChecked={policy.enabled} /> {t("registration.enabled")}
        </label>
        <label className="check">
          <input type="checkbox" name="requireInitialAccessToken" defaultChecked={policy.requireInitialAccessToken} /> {t("registration.requireToken")}
        </label>
        <CheckboxGroup
          name="allowedGrantTypes"
          legend={t("registration.grantTypes")}
          options={CLIENT_GRANT_TYPE_VALUES.map((value) => ({ value, label: value }))}
          checked={policy.allowedGrantTypes}
          error={policyErrors.allowedGrantTypes}
        />
        <CheckboxGroup
          name="allowedTokenEndpointAuthMethods"
          legend={t("registration.authMethods")}
          options={REGISTRATION_AUTH_METHOD_VALUES.map((value) => ({ value, label: value }))}
          checked={policy.allowedTokenEndpointAuthMethods}
          error={policyErrors.allowedTokenEndpointAuthMethods}
        />
        <fieldset>
          <legend>{t("registration.documents")}</legend>
          <p className="muted">{t("registration.documentsIntro")}</p>
          <label className="check">
            <input type="checkbox" name="documentsEnabled" defaultChecked={policy.clientIdMetadataDocuments.enabled} /> {t("registration.documentsEnabled")}
          </label>
          <InputField
            id="allowedDomains"
            name="allowedDomains"
            label={t("registration.allowedDomains")}
            hint={t("registration.allowedDomainsHint")}
            defaultValue={policy.clientIdMetadataDocuments.allowedDomains.join("\n")}
            error={policyErrors.clientIdMetadataDocuments}
            multiline
          />
        </fieldset>
        <button type="submit" className="button button-inline">{t("registration.save")}</button>
      </Form>
      <h2>{t("registration.tokens")}</h2>
      {result?.kind === "issued" ? (
        <section className="panel secret" aria-labelledby="token-title">
          <h3 id="token-title">{t("registration.tokenOnce")}</h3>
          <p>{t("registration.tokenOnceText")}</p>
          <div className="field">
            <label htmlFor="registration-token">{t("registration.token")}</label>
            <input id="registration-token" readOnly value={result.token} className="secret-value" />
          </div>
          <CopyButton value={result.token} label={t("registration.copy")} />
        </section>
      ) : null}
      {tokenErrors.form ? <Notice kind="error">{tokenErrors.form}</Notice> : null}
      <ListTable
        rows={tokens}
        rowKey={(token) => token.id}
        empty={t("registration.noTokens")}
        caption={t("registration.tokens")}
        columns={[
          { header: t("registration.hint"), cell: (token) => <code>{`…${token.hint}`}</code> },
          { header: t("registration.label"), cell: (token) => token.label ?? "" },
          { header: t("registration.uses"), cell: (token) => (token.maxUses === null ? String(token.uses) : `${token.uses} / ${token.maxUses}`) },
          { header: t("registration.expires"), cell: (token) => <Moment iso={token.expiresAt} /> },
          { header: t("common.status"), cell: (token) => t(`registration.status.${token.status}`) },
          {
            header: t("common.actions"),
            cell: (token) =>
              token.status === "revoked" ? null : (
                <ConfirmAction intent="revoke" label={t("registration.revoke")} question={t("registration.confirmRevoke", { hint: token.hint })} fields={{ tokenId: token.id }} />
              ),
          },
        ]}
      />
      <Form method="post" reloadDocument noValidate className="panel form" aria-labelledby="new-token-title">
        <h3 id="new-token-title">{t("registration.issue")}</h3>
        <Csrf />
        <input type="hidden" name="intent" value="issue" />
        <TextField name="label" label={t("registration.label")} error={tokenErrors.label} />
        <TextField name="expiresInDays" label={t("registration.expiresInDays")} defaultValue="1" error={tokenErrors.expiresInSeconds} />
        <TextField name="maxUses" label={t("registration.maxUses")} hint={t("registration.maxUsesHint")} error={tokenErrors.maxUses} />
        <button type="submit" className="button button-inline">{t("registration.issue")}</button>
      </Form>
    </>
  );
}
