import { Form } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import type { ApiResource, ClientResourceGrant } from "~/schemas/api-resource";
import { list, text } from "./forms";
import { ActionForm, CheckboxGroup, ConfirmAction, Csrf, Notice, SelectField, TextField } from "./ui";

/** The API resource form (decision 077): what a person typed, kept as typed to show it again. */
export interface ApiResourceFormValues {
  identifier: string;
  name: string;
  scopes: string;
  /** Only on the edit page, one field per saved scope (named `description:<scope>`); null where the form has none. */
  scopeDescriptions: Record<string, string> | null;
  accessTokenTtlSeconds: string;
  consentRequired: boolean;
  status: string;
}

export const API_RESOURCE_FIELDS = ["identifier", "name", "scopes", "scopeDescriptions", "accessTokenTtlSeconds", "consentRequired", "status"] as const;
const DESCRIPTION = "description:";

export function apiResourceValues(form: FormData): ApiResourceFormValues {
  return {
    identifier: (text(form, "identifier") ?? "").trim(),
    name: text(form, "name") ?? "",
    scopes: text(form, "scopes") ?? "",
    scopeDescriptions:
      form.get("describesScopes") === "on"
        ? Object.fromEntries([...form.keys()].filter((key) => key.startsWith(DESCRIPTION)).map((key) => [key.slice(DESCRIPTION.length), text(form, key) ?? ""]))
        : null,
    accessTokenTtlSeconds: (text(form, "accessTokenTtlSeconds") ?? "").trim(),
    // A checkbox: present when ticked.
    consentRequired: form.get("consentRequired") === "on",
    status: text(form, "status") ?? "active",
  };
}

/** The form's values as the Admin API's body: scopes separated by spaces, commas or lines; an empty lifetime is the default. */
export function apiResourceBody(values: ApiResourceFormValues) {
  const ttl = values.accessTokenTtlSeconds;
  const scopes = values.scopes.split(/[\s,]+/).filter(Boolean);
  // An empty field describes nothing, and a scope taken out of the list takes its description along.
  const described = values.scopeDescriptions && Object.entries(values.scopeDescriptions).filter(([scope, description]) => scopes.includes(scope) && description.trim() !== "");
  return {
    identifier: values.identifier,
    name: values.name,
    scopes,
    ...(described ? { scopeDescriptions: Object.fromEntries(described) } : {}),
    accessTokenTtlSeconds: ttl === "" ? null : /^\d+$/.test(ttl) ? Number(ttl) : ttl,
    consentRequired: values.consentRequired,
    status: values.status,
  };
}

export function valuesOf(resource: ApiResource): ApiResourceFormValues {
  return {
    identifier: resource.identifier,
    name: resource.name,
    scopes: resource.scopes.join(" "),
    scopeDescriptions: Object.fromEntries(resource.scopes.map((scope) => [scope, resource.scopeDescriptions[scope] ?? ""])),
    accessTokenTtlSeconds: resource.accessTokenTtlSeconds === null ? "" : String(resource.accessTokenTtlSeconds),
    consentRequired: resource.consentRequired,
    status: resource.status,
  };
}

const EMPTY: ApiResourceFormValues = { identifier: "", name: "", scopes: "", scopeDescriptions: null, accessTokenTtlSeconds: "", consentRequired: true, status: "active" };

/** Create or edit an API resource; every field has its label. */
export function ApiResourceForm(props: { intent: "create" | "update"; titleId: string; title: string; submit: string; values?: ApiResourceFormValues | undefined; errors: Record<string, string>; version?: number }) {
  const { intent, titleId, title, submit, errors, version } = props;
  const values = props.values ?? EMPTY;
  const { t } = useTranslation("console");
  return (
    <Form method="post" reloadDocument noValidate className="panel form" aria-labelledby={titleId}>
      <h2 id={titleId}>{title}</h2>
      {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
      <Csrf />
      <input type="hidden" name="intent" value={intent} />
      {version !== undefined ? <input type="hidden" name="version" value={version} /> : null}
      <TextField name="identifier" label={t("apiResources.identifier")} defaultValue={values.identifier} error={errors.identifier} hint={t("apiResources.identifierHint")} required />
      <TextField name="name" label={t("common.name")} defaultValue={values.name} error={errors.name} required />
      <TextField name="scopes" label={t("apiResources.scopes")} defaultValue={values.scopes} error={errors.scopes} hint={t("apiResources.scopesHint")} />
      {values.scopeDescriptions ? (
        <fieldset className="field" aria-describedby="scopeDescriptions-hint">
          <legend>{t("apiResources.scopeDescriptions")}</legend>
          <input type="hidden" name="describesScopes" value="on" />
          <p id="scopeDescriptions-hint" className="hint">{t("apiResources.scopeDescriptionsHint")}</p>
          {Object.keys(values.scopeDescriptions).length === 0 ? <p className="hint">{t("apiResources.noScopes")}</p> : null}
          {Object.entries(values.scopeDescriptions).map(([scope, description]) => (
            <TextField key={scope} name={`${DESCRIPTION}${scope}`} label={t("apiResources.scopeDescription", { scope })} defaultValue={description} />
          ))}
          {errors.scopeDescriptions ? <p className="field-error" role="alert">{errors.scopeDescriptions}</p> : null}
        </fieldset>
      ) : null}
      <TextField name="accessTokenTtlSeconds" label={t("apiResources.ttl")} defaultValue={values.accessTokenTtlSeconds} error={errors.accessTokenTtlSeconds} hint={t("apiResources.ttlHint")} />
      <div className="field">
        <label className="check">
          <input type="checkbox" name="consentRequired" defaultChecked={values.consentRequired} aria-describedby="consentRequired-hint" /> {t("apiResources.consentRequired")}
        </label>
        <p id="consentRequired-hint" className="hint">{t("apiResources.consentHint")}</p>
        {errors.consentRequired ? <p className="field-error" role="alert">{errors.consentRequired}</p> : null}
      </div>
      <SelectField
        name="status"
        label={t("common.status")}
        options={[
          { value: "active", label: t("apiResources.active") },
          { value: "inactive", label: t("apiResources.inactive") },
        ]}
        defaultValue={values.status}
        error={errors.status}
      />
      <button type="submit" className="button">{submit}</button>
    </Form>
  );
}

/** The scopes a client is granted per API resource of its organization: grant, change, revoke. */
export function ClientResourceGrants({ resources, grants }: { resources: ApiResource[]; grants: ClientResourceGrant[] }) {
  const { t } = useTranslation("console");
  const granted = new Map(grants.map((g) => [g.resourceId, g.scopes]));
  return (
    <section className="panel" aria-labelledby="client-resources-title">
      <h2 id="client-resources-title">{t("apiResources.clientTitle")}</h2>
      <p className="hint">{t("apiResources.clientIntro")}</p>
      {resources.length === 0 ? <p>{t("apiResources.noneInOrganization")}</p> : null}
      {resources.map((resource) => {
        const scopes = granted.get(resource.id);
        return (
          <div key={resource.id} className="resource-grant">
            <h3>
              {resource.name} <code>{resource.identifier}</code>
            </h3>
            <p className="muted">{scopes ? t("apiResources.grantedScopes", { scopes: scopes.join(" ") || "—" }) : t("apiResources.notGranted")}</p>
            <ActionForm intent="grantResource" fields={{ resourceId: resource.id }} className="inline-form">
              {resource.scopes.length > 0 ? (
                <CheckboxGroup name="scopes" legend={t("apiResources.scopesFor", { name: resource.name })} options={resource.scopes.map((s) => ({ value: s, label: resource.scopeDescriptions[s] ? `${s} (${resource.scopeDescriptions[s]})` : s }))} checked={scopes ?? []} />
              ) : (
                <p className="hint">{t("apiResources.noScopes")}</p>
              )}
              <button type="submit" className="button button-inline">{scopes ? t("apiResources.saveGrant", { name: resource.name }) : t("apiResources.grant", { name: resource.name })}</button>
            </ActionForm>
            {scopes ? (
              <ConfirmAction intent="revokeResource" label={t("apiResources.revoke", { name: resource.name })} question={t("apiResources.confirmRevoke", { name: resource.name })} fields={{ resourceId: resource.id }} />
            ) : null}
          </div>
        );
      })}
    </section>
  );
}

/** The granted scopes the form names (checkboxes). */
export const grantedScopesInput = (form: FormData) => ({ scopes: list(form, "scopes") });
