import { Form } from "@remix-run/react";
import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { ADMIN_API_ACCESS_SHOWN, BACKCHANNEL_SHOWN, clientUpdateInput, KEYS_SHOWN, SKIP_CONSENT_SHOWN, type ClientFormValues } from "./client-fields";
import { clientKindOf } from "./integration";
import { ConflictView, InputField } from "./detail-parts";
import { ListTable, Moment } from "./list-table";
import { list, zodFieldErrors } from "./forms";
import { ActionForm, CheckboxGroup, ConfirmAction, Csrf, Notice, SelectField } from "./ui";
import { ACCESS_TOKEN_TTL_BOUNDS, CLIENT_GRANT_TYPE_VALUES, CLIENT_PKCE_VALUES, ClientUpdateSchema, REFRESH_TOKEN_TTL_BOUNDS, LoginMethodsBodySchema, type Client, type ClientSecret } from "~/schemas/client";
import { LOGIN_METHODS } from "~/schemas/login-methods";
import type { TFunction } from "i18next";

/** Each grant type by a name people know (the device grant's protocol value is a URN), the value beside it. */
const GRANT_TYPE_LABELS: Record<(typeof CLIENT_GRANT_TYPE_VALUES)[number], string> = {
  authorization_code: "clientDetail.grantType.authorizationCode",
  refresh_token: "clientDetail.grantType.refreshToken",
  client_credentials: "clientDetail.grantType.clientCredentials",
  "urn:ietf:params:oauth:grant-type:device_code": "clientDetail.grantType.deviceCode",
};

function grantTypeNames(t: TFunction, grantTypes: readonly string[]): string {
  return grantTypes.map((g) => (g in GRANT_TYPE_LABELS ? t(GRANT_TYPE_LABELS[g as keyof typeof GRANT_TYPE_LABELS]) : g)).join(", ");
}

/** The sections of the console's client page. */
type EditResult = { kind: "invalid"; values: ClientFormValues; errors: Record<string, string> } | { kind: "conflict"; values: ClientFormValues; current: Client };

function useMethods() {
  const { t } = useTranslation("console");
  return (m: readonly string[]) => m.map((x) => t(`orgs.method.${x}`)).join(", ");
}

/** Whether the client may sign service-admins in to the Admin API; offered in the super-admin organization only. */
type AdminAccessKind = "service" | "organization";

function AdminApiAccessField({ checked, error, kind }: { checked: boolean; error: string | undefined; kind: AdminAccessKind }) {
  const { t } = useTranslation("console");
  const keys =
    kind === "service"
      ? { legend: "clientDetail.adminApiAccess", option: "clientDetail.adminApiAccessOption", hint: "clientDetail.adminApiAccessHint" }
      : { legend: "clientDetail.organizationAdminAccess", option: "clientDetail.organizationAdminAccessOption", hint: "clientDetail.organizationAdminAccessHint" };
  return (
    <fieldset className="field" aria-describedby={["adminApiAccess-hint", error ? "adminApiAccess-error" : ""].filter(Boolean).join(" ")}>
      <legend>{t(keys.legend)}</legend>
      <input type="hidden" name={ADMIN_API_ACCESS_SHOWN} value="1" />
      <label className="check">
        <input type="checkbox" name="adminApiAccess" value="yes" defaultChecked={checked} /> {t(keys.option)}
      </label>
      <p id="adminApiAccess-hint" className="hint">{t(keys.hint)}</p>
      {error ? <p id="adminApiAccess-error" className="field-error" role="alert">{error}</p> : null}
    </fieldset>
  );
}

/** Skip-consent: a first-party web client gets what it asks for without the consent page (decision 036). */
function SkipConsentField({ checked, error }: { checked: boolean; error: string | undefined }) {
  const { t } = useTranslation("console");
  return (
    <fieldset className="field" aria-describedby={["skipConsent-hint", error ? "skipConsent-error" : ""].filter(Boolean).join(" ")}>
      <legend>{t("clientDetail.consent")}</legend>
      <input type="hidden" name={SKIP_CONSENT_SHOWN} value="1" />
      <label className="check">
        <input type="checkbox" name="skipConsent" value="yes" defaultChecked={checked} /> {t("clientDetail.skipConsentOption")}
      </label>
      <p id="skipConsent-hint" className="hint">{t("clientDetail.skipConsentHint")}</p>
      {error ? <p id="skipConsent-error" className="field-error" role="alert">{error}</p> : null}
    </fieldset>
  );
}

/**
 * PKCE of a confidential code-flow client (decision 073): as the organization's OAuth 2.1 mode
 * says, always, or not (for relying parties that cannot send it). A public client always sends it.
 */
function PkceField({ client, value, oauth21, error }: { client: Client; value: string; oauth21: boolean; error: string | undefined }) {
  const { t } = useTranslation("console");
  if (!client.grantTypes.includes("authorization_code")) return null;
  if (client.clientType === "public") return <p className="hint">{t("clientDetail.pkcePublic")}</p>;
  const label = (v: (typeof CLIENT_PKCE_VALUES)[number]) => (v === "inherit" ? t(oauth21 ? "clientDetail.pkceOption.inheritRequired" : "clientDetail.pkceOption.inheritOptional") : t(`clientDetail.pkceOption.${v}`));
  return <SelectField name="pkce" label={t("clientDetail.pkce")} options={CLIENT_PKCE_VALUES.map((v) => ({ value: v, label: label(v) }))} defaultValue={value} error={error} hint={t("clientDetail.pkceHint")} />;
}

/** What an empty lifetime field means, in seconds. */
export interface LifetimeDefaults {
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
}

/** Seconds in the largest unit that divides them (SI symbols, the same in English and German). */
export function duration(seconds: number): string {
  for (const [unit, size] of [["d", 86_400], ["h", 3600], ["min", 60]] as const) if (seconds % size === 0) return `${seconds / size} ${unit}`;
  return `${seconds} s`;
}

const shown = (value: number | string | null | undefined) => (value === null || value === undefined ? "" : String(value));

export function ClientEditForm(props: {
  client: Client;
  version: number;
  apps: Array<{ id: string; name: string }>;
  result: EditResult | undefined;
  /** Which administration the client may sign people in to: the Admin API (super-admin organization) or the organization's own door. */
  offerAdminApiAccess: AdminAccessKind;
  defaults: LifetimeDefaults;
  /** The organization's OAuth 2.1 mode, which a client's PKCE setting `inherit` follows. */
  oauth21: boolean;
}) {
  const { client, version, apps, result, offerAdminApiAccess, defaults, oauth21 } = props;
  const { t } = useTranslation("console");
  const [clientErrors, setClientErrors] = useState<Record<string, string> | null>(null);
  const errors = clientErrors ?? (result?.kind === "invalid" ? result.errors : {});
  const values = result?.values;
  const appName = (id: string | null | undefined) => (id ? (apps.find((a) => a.id === id)?.name ?? id) : t("clientDetail.noApplication"));

  if (result?.kind === "conflict") {
    const { current } = result;
    const rows = [
      { field: t("clients.name"), now: current.name, yours: result.values.name },
      { field: t("clients.redirectUris"), now: current.redirectUris.join(" "), yours: result.values.redirectUris.join(" ") },
      { field: t("clientDetail.postLogoutRedirectUris"), now: current.postLogoutRedirectUris.join(" "), yours: result.values.postLogoutRedirectUris.join(" ") },
      { field: t("clientDetail.scope"), now: current.scope, yours: result.values.scope },
      { field: t("clientDetail.grantTypes"), now: grantTypeNames(t, current.grantTypes), yours: grantTypeNames(t, result.values.grantTypes) },
      { field: t("clientDetail.application"), now: appName(current.applicationId), yours: appName(result.values.applicationId) },
    ];
    if (result.values.accessTokenTtlSeconds !== undefined) {
      rows.push({ field: t("clientDetail.accessTokenTtl"), now: shown(current.accessTokenTtlSeconds), yours: shown(result.values.accessTokenTtlSeconds) });
    }
    if (result.values.refreshTokenTtlSeconds !== undefined) {
      rows.push({ field: t("clientDetail.refreshTokenTtl"), now: shown(current.refreshTokenTtlSeconds), yours: shown(result.values.refreshTokenTtlSeconds) });
    }
    if (result.values.allowedCorsOrigins !== undefined) {
      rows.push({ field: t("clientDetail.allowedCorsOrigins"), now: current.allowedCorsOrigins.join(" "), yours: result.values.allowedCorsOrigins.join(" ") });
    }
    if (result.values.tokenExchangeAudiences !== undefined) {
      rows.push({ field: t("clientDetail.tokenExchangeAudiences"), now: current.tokenExchangeAudiences.join(" "), yours: result.values.tokenExchangeAudiences.join(" ") });
    }
    const consent = (skip: boolean) => t(skip ? "clientDetail.consentSkipped" : "clientDetail.consentAsked");
    if (result.values.skipConsent !== undefined) rows.push({ field: t("clientDetail.consent"), now: consent(current.skipConsent), yours: consent(result.values.skipConsent) });
    if (result.values.pkce !== undefined) rows.push({ field: t("clientDetail.pkce"), now: current.pkce, yours: result.values.pkce });
    const access = (allowed: boolean) => t(allowed ? "clientDetail.adminApiAccessAllowed" : "clientDetail.adminApiAccessDenied");
    if (result.values.adminApiAccess !== undefined) {
      rows.push({ field: t("clientDetail.adminApiAccess"), now: access(current.adminApiAccess), yours: access(result.values.adminApiAccess) });
    }
    return <ConflictView text={t("clientDetail.conflictText")} rows={rows} />;
  }

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    const parsed = ClientUpdateSchema.safeParse(clientUpdateInput(new FormData(event.currentTarget)));
    if (parsed.success) return setClientErrors(null);
    event.preventDefault();
    setClientErrors(zodFieldErrors(parsed.error));
  }

  return (
    <Form method="post" reloadDocument noValidate onSubmit={onSubmit} className="panel form" aria-labelledby="edit-client-title">
      <h2 id="edit-client-title">{t("clientDetail.edit")}</h2>
      {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
      <Csrf />
      <input type="hidden" name="intent" value="update" />
      <input type="hidden" name="version" value={version} />
      <InputField id="name" name="name" label={t("clients.name")} defaultValue={values?.name ?? client.name} error={errors.name} required />
      <InputField id="redirectUris" name="redirectUris" label={t("clients.redirectUris")} defaultValue={(values?.redirectUris ?? client.redirectUris).join("\n")} error={errors.redirectUris} hint={t("clients.redirectHint")} multiline />
      <InputField
        id="postLogoutRedirectUris"
        name="postLogoutRedirectUris"
        label={t("clientDetail.postLogoutRedirectUris")}
        defaultValue={(values?.postLogoutRedirectUris ?? client.postLogoutRedirectUris).join("\n")}
        error={errors.postLogoutRedirectUris}
        hint={t("clients.redirectHint")}
        multiline
      />
      {clientKindOf(client) !== "machine" ? (
        <InputField
          id="allowedCorsOrigins"
          name="allowedCorsOrigins"
          label={t("clientDetail.allowedCorsOrigins")}
          defaultValue={(values?.allowedCorsOrigins ?? client.allowedCorsOrigins).join("\n")}
          error={errors.allowedCorsOrigins}
          hint={t("clientDetail.allowedCorsOriginsHint")}
          multiline
        />
      ) : null}
      {client.clientType === "confidential" ? (
        <InputField
          id="tokenExchangeAudiences"
          name="tokenExchangeAudiences"
          label={t("clientDetail.tokenExchangeAudiences")}
          defaultValue={(values?.tokenExchangeAudiences ?? client.tokenExchangeAudiences).join("\n")}
          error={errors.tokenExchangeAudiences}
          hint={t("clientDetail.tokenExchangeAudiencesHint")}
          multiline
        />
      ) : null}
      <InputField id="scope" name="scope" label={t("clientDetail.scope")} defaultValue={values?.scope ?? client.scope} error={errors.scope} hint={t("clientDetail.scopeHint")} required />
      <CheckboxGroup
        name="grantTypes"
        legend={t("clientDetail.grantTypes")}
        options={CLIENT_GRANT_TYPE_VALUES.map((g) => ({ value: g, label: t(GRANT_TYPE_LABELS[g]) }))}
        checked={values?.grantTypes ?? client.grantTypes}
        error={errors.grantTypes}
      />
      <SelectField
        name="applicationId"
        label={t("clientDetail.application")}
        options={[{ value: "", label: t("clientDetail.noApplication") }, ...apps.map((a) => ({ value: a.id, label: a.name }))]}
        defaultValue={(values ? values.applicationId : client.applicationId) ?? ""}
        error={errors.applicationId}
      />
      {client.applicationType === "web" ? <SkipConsentField checked={values?.skipConsent ?? client.skipConsent} error={errors.skipConsent} /> : null}
      <PkceField client={client} value={values?.pkce ?? client.pkce} oauth21={oauth21} error={errors.pkce} />
      <fieldset className="field">
        <legend>{t("clientDetail.lifetimes")}</legend>
        <InputField
          id="accessTokenTtlSeconds"
          name="accessTokenTtlSeconds"
          type="number"
          label={t("clientDetail.accessTokenTtl")}
          defaultValue={shown(values?.accessTokenTtlSeconds !== undefined ? values.accessTokenTtlSeconds : client.accessTokenTtlSeconds)}
          error={errors.accessTokenTtlSeconds}
          hint={t("clientDetail.lifetimeHint", { count: defaults.accessTokenTtlSeconds, duration: duration(defaults.accessTokenTtlSeconds), min: ACCESS_TOKEN_TTL_BOUNDS.min, max: ACCESS_TOKEN_TTL_BOUNDS.max, maxDuration: duration(ACCESS_TOKEN_TTL_BOUNDS.max) })}
        />
        <InputField
          id="refreshTokenTtlSeconds"
          name="refreshTokenTtlSeconds"
          type="number"
          label={t("clientDetail.refreshTokenTtl")}
          defaultValue={shown(values?.refreshTokenTtlSeconds !== undefined ? values.refreshTokenTtlSeconds : client.refreshTokenTtlSeconds)}
          error={errors.refreshTokenTtlSeconds}
          hint={t("clientDetail.lifetimeHint", { count: defaults.refreshTokenTtlSeconds, duration: duration(defaults.refreshTokenTtlSeconds), min: REFRESH_TOKEN_TTL_BOUNDS.min, max: REFRESH_TOKEN_TTL_BOUNDS.max, maxDuration: duration(REFRESH_TOKEN_TTL_BOUNDS.max) })}
        />
      </fieldset>
      <AdminApiAccessField kind={offerAdminApiAccess} checked={values?.adminApiAccess ?? client.adminApiAccess} error={errors.adminApiAccess} />
      {clientKindOf(client) !== "machine" ? (
        <fieldset className="field">
          <legend>{t("clientDetail.backchannelLogout")}</legend>
          <input type="hidden" name={BACKCHANNEL_SHOWN} value="1" />
          <InputField
            id="backchannelLogoutUri"
            name="backchannelLogoutUri"
            label={t("clientDetail.backchannelLogoutUri")}
            defaultValue={(values?.backchannelLogoutUri !== undefined ? values.backchannelLogoutUri : client.backchannelLogoutUri) ?? ""}
            error={errors.backchannelLogoutUri}
            hint={t("clientDetail.backchannelLogoutUriHint")}
          />
          <label className="check">
            <input type="checkbox" name="backchannelLogoutSessionRequired" value="yes" defaultChecked={values?.backchannelLogoutSessionRequired ?? client.backchannelLogoutSessionRequired} />{" "}
            {t("clientDetail.backchannelLogoutSessionRequired")}
          </label>
        </fieldset>
      ) : null}
      {clientKindOf(client) !== "machine" ? (
        <InputField
          id="initiateLoginUri"
          name="initiateLoginUri"
          label={t("clientDetail.initiateLoginUri")}
          defaultValue={(values?.initiateLoginUri !== undefined ? values.initiateLoginUri : client.initiateLoginUri) ?? ""}
          error={errors.initiateLoginUri}
          hint={t("clientDetail.initiateLoginUriHint")}
        />
      ) : null}
      <fieldset className="field">
        <legend>{t("clientDetail.keys")}</legend>
        <input type="hidden" name={KEYS_SHOWN} value="1" />
        <InputField
          id="jwksUri"
          name="jwksUri"
          label={t("clientDetail.jwksUri")}
          defaultValue={(values?.jwksUri !== undefined ? values.jwksUri : client.jwksUri) ?? ""}
          error={errors.jwksUri}
          hint={t("clientDetail.jwksUriHint")}
        />
        <InputField
          id="jwks"
          name="jwks"
          label={t("clientDetail.jwks")}
          multiline
          defaultValue={keysText(values?.jwks !== undefined ? values.jwks : client.jwks)}
          error={errors.jwks}
          hint={t("clientDetail.jwksHint")}
        />
      </fieldset>
      <button type="submit" className="button button-inline">{t("common.save")}</button>
    </Form>
  );
}

export function LoginMethodsPanel({ client, orgDefault, errors: serverErrors }: { client: Client; orgDefault: readonly string[]; errors: Record<string, string> }) {
  const { t } = useTranslation("console");
  const methods = useMethods();
  const [clientErrors, setClientErrors] = useState<Record<string, string> | null>(null);
  const errors = clientErrors ?? serverErrors;

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    const parsed = LoginMethodsBodySchema.safeParse({ loginMethods: list(new FormData(event.currentTarget), "loginMethods") });
    if (parsed.success) return setClientErrors(null);
    event.preventDefault();
    setClientErrors(zodFieldErrors(parsed.error));
  }

  return (
    <section className="panel" aria-labelledby="login-methods-title">
      <h2 id="login-methods-title">{t("clients.loginMethods")}</h2>
      <p>{client.loginMethods === null ? t("clientDetail.inherits", { methods: methods(orgDefault) }) : t("clientDetail.overridden", { methods: methods(client.loginMethods) })}</p>
      <Form method="post" reloadDocument noValidate onSubmit={onSubmit} className="form">
        <Csrf />
        <input type="hidden" name="intent" value="setLoginMethods" />
        <CheckboxGroup
          name="loginMethods"
          legend={t("clients.overrideMethods")}
          options={LOGIN_METHODS.map((m) => ({ value: m, label: t(`orgs.method.${m}`) }))}
          checked={client.loginMethods ?? orgDefault}
          error={errors.loginMethods}
        />
        <button type="submit" className="button button-inline">{t("clientDetail.setOverride")}</button>
      </Form>
      {client.loginMethods !== null ? (
        <ConfirmAction intent="clearLoginMethods" label={t("clients.useDefault")} question={t("clients.confirmInherit", { name: client.name, methods: methods(orgDefault) })} />
      ) : null}
    </section>
  );
}

export function ClientSecrets({ secrets, errors }: { secrets: ClientSecret[]; errors: Record<string, string> }) {
  const { t } = useTranslation("console");
  return (
    <section className="panel" aria-labelledby="secrets-title">
      <h2 id="secrets-title">{t("clientDetail.secrets")}</h2>
      <ListTable
        rows={secrets}
        rowKey={(s) => s.id}
        caption={t("clientDetail.secrets")}
        columns={[
          { header: t("clientDetail.secretHint"), cell: (s) => <code>…{s.hint}</code> },
          { header: t("clientDetail.secretLabel"), cell: (s) => s.label ?? "" },
          { header: t("common.created"), cell: (s) => <Moment iso={s.createdAt} /> },
          { header: t("clientDetail.expires"), cell: (s) => (s.expiresAt ? <Moment iso={s.expiresAt} /> : t("clientDetail.never")) },
          { header: t("common.status"), cell: (s) => (s.status === "revoked" ? <>{t("clientDetail.secretRevoked")} <Moment iso={s.revokedAt} /></> : t("clientDetail.secretActive")) },
          {
            header: t("common.actions"),
            cell: (s) =>
              s.status === "active" ? (
                <ConfirmAction intent="revokeSecret" label={t("clientDetail.revokeSecret", { hint: s.hint })} question={t("clientDetail.confirmRevokeSecret", { hint: s.hint })} fields={{ secretId: s.id }} danger />
              ) : null,
          },
        ]}
      />
      <ActionForm intent="generateSecret" className="form">
        {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
        <InputField id="secret-label" name="label" label={t("clientDetail.secretLabelOptional")} error={errors.label} />
        <InputField id="secret-expires" name="expiresOn" type="date" label={t("clientDetail.expiresOn")} hint={t("clientDetail.expiresOnHint")} error={errors.expiresAt} />
        <button type="submit" className="button button-inline">{t("clientDetail.generateSecret")}</button>
      </ActionForm>
    </section>
  );
}

export function ClientActions({ client }: { client: Client }) {
  const { t } = useTranslation("console");
  return (
    <section className="panel actions-panel" aria-label={t("common.actions")} id="client-actions">
      {client.status === "active" ? (
        <ConfirmAction intent="deactivate" label={t("clientDetail.deactivate")} question={t("clients.confirmRevoke", { name: client.name })} />
      ) : (
        <ConfirmAction intent="activate" label={t("users.activate")} question={t("clients.confirmActivate", { name: client.name })} />
      )}
      <ConfirmAction intent="delete" label={t("clientDetail.delete")} question={t("clientDetail.confirmDelete", { name: client.name })} danger />
    </section>
  );
}

/** A key set as the form shows it: indented JSON, or the text typed when it did not parse. */
function keysText(value: unknown): string {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}
