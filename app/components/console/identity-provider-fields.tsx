import { useTranslation } from "react-i18next";
import type { IdentityProvider } from "~/schemas/identity-provider";
import { AUTH_METHOD_KINDS, IDENTITY_PROVIDER_KINDS, TOKEN_ENDPOINT_AUTH_METHODS, UPSTREAM_MFA_TRUST } from "~/schemas/identity-provider";
import { list, text } from "./forms";
import { CheckboxGroup, SelectField, TextField } from "./ui";

/** The fields of an upstream identity provider (decision 046); the client secret is write-only: the field is always empty. */
export const IDENTITY_PROVIDER_FIELDS = ["name", "kind", "issuer", "tenantId", "teamId", "keyId", "clientId", "clientSecret", "scopes", "domains", "enabled", "createAccounts", "trustUpstreamMfa", "claimMapping", "tokenEndpointAuthMethod", "assumeVerifiedEmails"] as const;

const words = (value: string | undefined) => (value ?? "").split(/[\s,]+/).map((s) => s.trim()).filter(Boolean);

/** The form as the Admin API's body: `create` carries organization, kind and tenant; an empty secret field keeps the stored one. */
export function identityProviderInput(form: FormData, create: { organizationId: string } | null) {
  const flags = list(form, "flags");
  const secret = text(form, "clientSecret") ?? "";
  const scopes = words(text(form, "scopes"));
  const kind = text(form, "kind") ?? "oidc";
  const issuer = text(form, "issuer")?.trim();
  const tenantId = text(form, "tenantId")?.trim();
  const teamId = text(form, "teamId")?.trim();
  const keyId = text(form, "keyId")?.trim();
  const apple = { ...(teamId ? { teamId } : {}), ...(keyId ? { keyId } : {}) };
  // Only forms that show the choice (kinds whose token-endpoint authentication can be chosen) carry it.
  const authMethod = text(form, "tokenEndpointAuthMethod");
  const common = {
    name: text(form, "name") ?? "",
    clientId: text(form, "clientId") ?? "",
    ...(secret ? { clientSecret: secret } : {}),
    ...(scopes.length ? { scopes } : {}),
    domains: words(text(form, "domains")),
    enabled: flags.includes("enabled"),
    createAccounts: flags.includes("createAccounts"),
    trustUpstreamMfa: text(form, "trustUpstreamMfa") ?? "when_asserted",
    assumeVerifiedEmails: flags.includes("assumeVerifiedEmails"),
    ...(authMethod ? { tokenEndpointAuthMethod: authMethod } : {}),
  };
  if (!create) {
    return { ...common, ...(issuer ? { issuer } : {}), ...apple, ...(flags.includes("removeSecret") && !secret ? { clientSecret: null } : {}) };
  }
  return { organizationId: create.organizationId, kind, ...((kind === "oidc" || kind === "saml") && issuer ? { issuer } : {}), ...(kind === "microsoft" && tenantId ? { tenantId } : {}), ...(kind === "apple" ? apple : {}), ...common };
}

export function IdentityProviderFields({ provider, errors }: { provider: IdentityProvider | null; errors: Record<string, string> }) {
  const { t } = useTranslation("console");
  const checked = provider
    ? [provider.enabled ? "enabled" : "", provider.createAccounts ? "createAccounts" : "", provider.assumeVerifiedEmails ? "assumeVerifiedEmails" : ""].filter(Boolean)
    : ["enabled"];
  return (
    <>
      <TextField name="name" label={t("idp.name")} hint={t("idp.nameHint")} defaultValue={provider?.name ?? ""} error={errors.name} required />
      {provider ? (
        <p className="muted">{t(`idp.kind.${provider.kind}`)}</p>
      ) : (
        <SelectField name="kind" label={t("idp.kindLabel")} defaultValue="oidc" options={IDENTITY_PROVIDER_KINDS.map((k) => ({ value: k, label: t(`idp.kind.${k}`) }))} error={errors.kind} />
      )}
      {!provider || provider.kind === "oidc" ? (
        <TextField name="issuer" label={t("idp.issuer")} hint={t("idp.issuerHint")} defaultValue={provider?.issuer ?? ""} error={errors.issuer} />
      ) : (
        <p className="muted">{t("idp.issuer")}: <code>{provider.issuer}</code></p>
      )}
      {provider ? null : <TextField name="tenantId" label={t("idp.tenantId")} hint={t("idp.tenantHint")} error={errors.tenantId} />}
      {!provider || provider.kind === "apple" ? (
        <>
          <TextField name="teamId" label={t("idp.teamId")} hint={t("idp.appleHint")} defaultValue={provider?.teamId ?? ""} error={errors.teamId} />
          <TextField name="keyId" label={t("idp.keyId")} hint={t("idp.appleHint")} defaultValue={provider?.keyId ?? ""} error={errors.keyId} />
        </>
      ) : null}
      {provider?.kind === "saml" ? null : (
        <>
      <TextField name="clientId" label={t("idp.clientId")} defaultValue={provider?.clientId ?? ""} error={errors.clientId} required />
      <div className="field">
        <label htmlFor="clientSecret">{t("idp.clientSecret")}</label>
        <input id="clientSecret" name="clientSecret" type="password" autoComplete="off" aria-describedby="clientSecret-hint" aria-invalid={errors.clientSecret ? true : undefined} />
        <p id="clientSecret-hint" className="hint">{provider?.hasClientSecret ? t("idp.secretKept") : t("idp.secretHint")}</p>
        {errors.clientSecret ? <p className="field-error" role="alert">{errors.clientSecret}</p> : null}
      </div>
      {!provider || AUTH_METHOD_KINDS.includes(provider.kind) ? (
        <SelectField
          name="tokenEndpointAuthMethod"
          label={t("idp.authMethod")}
          defaultValue={provider?.tokenEndpointAuthMethod ?? "auto"}
          options={TOKEN_ENDPOINT_AUTH_METHODS.map((v) => ({ value: v, label: t(`idp.authMethodValue.${v}`) }))}
          error={errors.tokenEndpointAuthMethod}
        />
      ) : null}
      <TextField name="scopes" label={t("idp.scopes")} hint={t("idp.scopesHint")} defaultValue={provider?.scopes.join(" ") ?? ""} error={errors.scopes} />
        </>
      )}
      <TextField name="domains" label={t("idp.domains")} hint={t("idp.domainsHint")} defaultValue={provider?.domains.join(" ") ?? ""} error={errors.domains} />
      <SelectField
        name="trustUpstreamMfa"
        label={t("idp.trust")}
        defaultValue={provider?.trustUpstreamMfa ?? "when_asserted"}
        options={UPSTREAM_MFA_TRUST.map((v) => ({ value: v, label: t(`idp.trustValue.${v}`) }))}
        error={errors.trustUpstreamMfa}
      />
      <CheckboxGroup
        name="flags"
        legend={t("idp.options")}
        options={[
          { value: "enabled", label: t("idp.enabled") },
          { value: "createAccounts", label: t("idp.createAccounts") },
          { value: "assumeVerifiedEmails", label: t("idp.assumeVerifiedEmails") },
          ...(provider?.hasClientSecret ? [{ value: "removeSecret", label: t("idp.removeSecret") }] : []),
        ]}
        checked={checked}
        error={errors.enabled ?? errors.createAccounts ?? errors.assumeVerifiedEmails}
      />
    </>
  );
}
