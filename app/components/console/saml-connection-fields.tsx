import { useTranslation } from "react-i18next";
import type { IdentityProvider, SamlConnection } from "~/schemas/identity-provider";
import { SAML_DEFAULT_ATTRIBUTES, SAML_NAME_ID_FORMATS } from "~/schemas/identity-provider";
import { list, text } from "./forms";
import { CheckboxGroup, CopyButton, SelectField, TextField } from "./ui";

/**
 * A SAML connection in the console (decision 081): where its settings come from on create, the
 * values the IdP's administrator registers, its certificates, and the settings an update changes.
 */

/** Fields whose errors show beside them. */
export const SAML_FIELDS = ["samlMetadataXml", "samlMetadataUrl"] as const;

/** The form field beside which an error of a nested Admin API path shows (a list's position counts from 1: a line). */
export const SAML_ERROR_FIELDS: Readonly<Record<string, string>> = {
  "saml.ssoUrl": "samlSsoUrl",
  "saml.signingCertificates": "samlCertificate",
  "saml.metadataUrl": "samlMetadataUrl",
  "saml.nameIdFormat": "nameIdFormat",
  "saml.groupRoles": "groupRoles",
  "saml.idpInitiatedClientId": "idpInitiatedClientId",
};

/** `group = role1, role2` per line, as the Admin API's groupRoles; malformed lines are sent as they are for the API to name. */
export function parseGroupRoles(value: string | undefined): Array<{ group: string; roles: string[] }> {
  return (value ?? "")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const at = line.lastIndexOf("=");
      const group = at < 0 ? line : line.slice(0, at).trim();
      const roles = at < 0 ? [] : line.slice(at + 1).split(",").map((r) => r.trim()).filter(Boolean);
      return { group, roles };
    });
}

export const formatGroupRoles = (groupRoles: ReadonlyArray<{ group: string; roles: string[] }>) => groupRoles.map((g) => `${g.group} = ${g.roles.join(", ")}`).join("\n");

/** Attribute names: an empty field means the default (SAML_DEFAULT_ATTRIBUTES). */
function attributeMapping(form: FormData) {
  const mapping: Record<string, string> = {};
  for (const key of ["email", "givenName", "familyName", "groups"] as const) {
    const value = text(form, `attr.${key}`)?.trim();
    if (value) mapping[key] = value;
  }
  return mapping;
}

/** The create form's SAML part: metadata XML, its URL, or entity ID (the issuer field) + SSO URL + certificate. */
export function samlCreateInput(form: FormData) {
  const xml = text(form, "samlMetadataXml")?.trim();
  const url = text(form, "samlMetadataUrl")?.trim();
  const ssoUrl = text(form, "samlSsoUrl")?.trim();
  const certificate = text(form, "samlCertificate")?.trim();
  const flags = list(form, "samlFlags");
  const manual = !xml && !url;
  return {
    ...(xml ? { samlMetadataXml: xml } : {}),
    ...(!xml && url ? { samlMetadataUrl: url } : {}),
    claimMapping: attributeMapping(form),
    saml: {
      ...(manual && ssoUrl ? { ssoUrl } : {}),
      ...(manual && certificate ? { signingCertificates: [certificate] } : {}),
      encryption: flags.includes("encryption"),
    },
  };
}

/** The provider page's SAML settings as the Admin API's update body. */
export function samlUpdateInput(form: FormData) {
  const flags = list(form, "samlFlags");
  const xml = text(form, "samlMetadataXml")?.trim();
  const client = text(form, "idpInitiatedClientId")?.trim();
  const nameIdFormat = text(form, "nameIdFormat");
  return {
    name: text(form, "name") ?? "",
    domains: (text(form, "domains") ?? "").split(/[\s,]+/).map((s) => s.trim()).filter(Boolean),
    enabled: list(form, "flags").includes("enabled"),
    createAccounts: list(form, "flags").includes("createAccounts"),
    trustUpstreamMfa: text(form, "trustUpstreamMfa") ?? "when_asserted",
    claimMapping: attributeMapping(form),
    ...(xml ? { samlMetadataXml: xml } : {}),
    saml: {
      ...(nameIdFormat ? { nameIdFormat } : {}),
      allowSha1: flags.includes("allowSha1"),
      encryption: flags.includes("encryption"),
      idpInitiatedClientId: client ? client : null,
      groupRoles: parseGroupRoles(text(form, "groupRoles")),
    },
  };
}

function TextArea({ name, label, hint, defaultValue, error, rows = 6 }: { name: string; label: string; hint?: string; defaultValue?: string; error?: string | undefined; rows?: number }) {
  return (
    <div className="field">
      <label htmlFor={name}>{label}</label>
      <textarea id={name} name={name} rows={rows} defaultValue={defaultValue} spellCheck={false} aria-describedby={hint ? `${name}-hint` : undefined} aria-invalid={error ? true : undefined} />
      {hint ? <p id={`${name}-hint`} className="hint">{hint}</p> : null}
      {error ? <p className="field-error" role="alert">{error}</p> : null}
    </div>
  );
}

function AttributeFields({ provider }: { provider: IdentityProvider | null }) {
  const { t } = useTranslation("console");
  return (
    <fieldset className="field">
      <legend>{t("idp.saml.attributes")}</legend>
      <p className="hint">{t("idp.saml.attributesHint")}</p>
      {(["email", "givenName", "familyName", "groups"] as const).map((key) => (
        <TextField key={key} name={`attr.${key}`} label={t(`idp.saml.attr.${key}`)} hint={t("idp.saml.attrDefault", { name: SAML_DEFAULT_ATTRIBUTES[key] })} defaultValue={provider?.claimMapping[key] ?? ""} />
      ))}
    </fieldset>
  );
}

/** The create form's SAML part, shown beside the other kinds' fields (the issuer field is the entity ID). */
export function SamlCreateFields({ errors }: { errors: Record<string, string> }) {
  const { t } = useTranslation("console");
  return (
    <fieldset className="field">
      <legend>{t("idp.saml.source")}</legend>
      <p className="hint">{t("idp.saml.sourceHint")}</p>
      <TextArea name="samlMetadataXml" label={t("idp.saml.metadataXml")} error={errors.samlMetadataXml} />
      <TextField name="samlMetadataUrl" label={t("idp.saml.metadataUrl")} hint={t("idp.saml.metadataUrlHint")} error={errors.samlMetadataUrl} />
      <TextField name="samlSsoUrl" label={t("idp.saml.ssoUrl")} hint={t("idp.saml.manualHint")} error={errors.samlSsoUrl} />
      <TextArea name="samlCertificate" label={t("idp.saml.certificate")} hint={t("idp.saml.manualHint")} rows={4} error={errors.samlCertificate} />
      <AttributeFields provider={null} />
      <CheckboxGroup name="samlFlags" legend={t("idp.saml.options")} options={[{ value: "encryption", label: t("idp.saml.encryption") }]} checked={[]} />
    </fieldset>
  );
}

const expiry = (iso: string) => iso.slice(0, 10);

/** What the IdP's administrator registers, each value with a copy button. */
export function SamlServiceProviderValues({ saml, provider }: { saml: SamlConnection; provider: IdentityProvider }) {
  const { t } = useTranslation("console");
  const mapping = { ...SAML_DEFAULT_ATTRIBUTES, ...provider.claimMapping };
  const rows: Array<[string, string]> = [
    [t("idp.saml.spEntityId"), saml.entityId],
    [t("idp.saml.acsUrl"), saml.acsUrl],
    [t("idp.saml.spMetadataUrl"), saml.spMetadataUrl],
    [t("idp.saml.nameIdFormat"), saml.nameIdFormat],
    [t("idp.saml.attr.email"), mapping.email],
    [t("idp.saml.attr.givenName"), mapping.givenName],
    [t("idp.saml.attr.familyName"), mapping.familyName],
    [t("idp.saml.attr.groups"), mapping.groups],
  ];
  return (
    <section className="panel" aria-labelledby="saml-sp-title">
      <h2 id="saml-sp-title">{t("idp.saml.spTitle")}</h2>
      <p>{t("idp.saml.spHint")}</p>
      <dl>
        {rows.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd><code>{value}</code> <CopyButton value={value} label={t("idp.saml.copy", { name: label })} /></dd>
          </div>
        ))}
      </dl>
      <h3>{t("idp.saml.idpTitle")}</h3>
      <p>{t("idp.saml.entityId")}: <code>{provider.issuer}</code></p>
      <p>{t("idp.saml.ssoUrl")}: <code>{saml.ssoUrl}</code></p>
      {saml.metadataUrl ? (
        <p>{t("idp.saml.metadataUrl")}: <code>{saml.metadataUrl}</code> {saml.metadataRefreshedAt ? t("idp.saml.refreshedAt", { at: saml.metadataRefreshedAt.replace("T", " ").slice(0, 16) }) : null}</p>
      ) : null}
      <h3>{t("idp.saml.certificates")}</h3>
      <ul>
        {saml.certificates.map((c, i) => (
          <li key={i}>{c ? t("idp.saml.certificateLine", { subject: c.subject, notAfter: expiry(c.notAfter), fingerprint: c.fingerprint }) : t("idp.saml.certificateUnreadable")}</li>
        ))}
      </ul>
      {saml.encryption ? <p>{t("idp.saml.encryptionCertificate", { notAfter: expiry(saml.encryption.notAfter) })}</p> : null}
    </section>
  );
}

/** The SAML settings an update changes (the provider page's form, instead of client ID, secret and scopes). */
export function SamlSettingsFields({
  provider,
  saml,
  clients,
  errors,
  postedGroupRoles,
}: {
  provider: IdentityProvider;
  saml: SamlConnection;
  clients: Array<{ id: string; name: string }>;
  errors: Record<string, string>;
  /** The group roles as sent in a refused update, kept for the person to correct. */
  postedGroupRoles?: string | undefined;
}) {
  const { t } = useTranslation("console");
  const checked = [saml.allowSha1 ? "allowSha1" : "", saml.encryptionCertificate ? "encryption" : ""].filter(Boolean);
  return (
    <>
      <SelectField name="nameIdFormat" label={t("idp.saml.nameIdFormat")} defaultValue={saml.nameIdFormat} options={SAML_NAME_ID_FORMATS.map((f) => ({ value: f, label: f }))} error={errors.nameIdFormat} />
      <AttributeFields provider={provider} />
      <TextArea name="groupRoles" label={t("idp.saml.groupRoles")} hint={t("idp.saml.groupRolesHint")} defaultValue={postedGroupRoles ?? formatGroupRoles(saml.groupRoles)} rows={4} error={errors.groupRoles} />
      <SelectField
        name="idpInitiatedClientId"
        label={t("idp.saml.idpInitiated")}
        hint={t("idp.saml.idpInitiatedHint")}
        defaultValue={saml.idpInitiatedClientId ?? ""}
        options={[{ value: "", label: t("idp.saml.idpInitiatedOff") }, ...clients.map((c) => ({ value: c.id, label: `${c.name} (${c.id})` }))]}
        error={errors.idpInitiatedClientId}
      />
      <CheckboxGroup
        name="samlFlags"
        legend={t("idp.saml.options")}
        options={[
          { value: "allowSha1", label: t("idp.saml.allowSha1") },
          { value: "encryption", label: t("idp.saml.encryption") },
        ]}
        checked={checked}
      />
      <TextArea name="samlMetadataXml" label={t("idp.saml.replaceMetadata")} hint={t("idp.saml.replaceMetadataHint")} error={errors.samlMetadataXml} rows={4} />
    </>
  );
}
