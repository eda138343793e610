import { stringify } from "yaml";
import { tenantOf } from "./plan";
import { CONFIG_VERSION, ConfigSchema, type ClientConfig, type Config, type IdentityProviderConfig, type OrganizationConfig } from "./schema";
import type { OrganizationState } from "./state";

/**
 * An organization's configuration in the file's format, from what the Admin API reads: every
 * field the file can set, references by name, and a secret only as the environment variable an
 * apply will read it from (named after the organization and the provider), never its value.
 */
export const secretVariable = (organization: string, provider: string) => `PORTA_${organization}_${provider}_CLIENT_SECRET`.toUpperCase().replace(/[^A-Z0-9_]+/g, "_");

export function exportOrganization(state: OrganizationState): OrganizationConfig {
  const org = state.organization.data;
  const b = state.branding.data;
  const appNames = new Map(state.applications.map((a) => [a.data.id, a.data.name]));
  const byName = <T>(key: (t: T) => string) => (x: T, y: T) => key(x).localeCompare(key(y));

  const clients: ClientConfig[] = state.clients
    .map(({ data: c }) => ({
      name: c.name,
      application: c.applicationId ? (appNames.get(c.applicationId) ?? null) : null,
      clientType: c.clientType,
      applicationType: c.applicationType,
      ...(c.clientType === "confidential" ? { tokenEndpointAuthMethod: c.tokenEndpointAuthMethod as ClientConfig["tokenEndpointAuthMethod"] } : {}),
      jwks: c.jwks,
      jwksUri: c.jwksUri,
      redirectUris: c.redirectUris,
      postLogoutRedirectUris: c.postLogoutRedirectUris,
      grantTypes: c.grantTypes,
      scope: c.scope,
      loginMethods: c.loginMethods,
      allowedCorsOrigins: c.allowedCorsOrigins,
      skipConsent: c.skipConsent,
      pkce: c.pkce,
      accessTokenTtlSeconds: c.accessTokenTtlSeconds,
      refreshTokenTtlSeconds: c.refreshTokenTtlSeconds,
      backchannelLogoutUri: c.backchannelLogoutUri,
      backchannelLogoutSessionRequired: c.backchannelLogoutSessionRequired,
      tokenExchangeAudiences: c.tokenExchangeAudiences,
      initiateLoginUri: c.initiateLoginUri,
      status: c.status,
    }))
    .sort(byName((c) => c.name));

  const identityProviders: IdentityProviderConfig[] = state.identityProviders
    .map(({ data: p }) => {
      if (p.kind === "saml") throw new Error("SAML connections are not part of the file");
      return {
        name: p.name,
        kind: p.kind,
        ...(p.kind === "oidc" ? { issuer: p.issuer } : {}),
        ...(p.kind === "microsoft" ? { tenantId: tenantOf(p.issuer) ?? p.issuer } : {}),
        clientId: p.clientId,
        ...(p.hasClientSecret ? { clientSecret: { fromEnv: secretVariable(org.slug, p.name) } } : {}),
        scopes: p.scopes,
        claimMapping: p.claimMapping,
        domains: p.domains,
        enabled: p.enabled,
        createAccounts: p.createAccounts,
        trustUpstreamMfa: p.trustUpstreamMfa,
        tokenEndpointAuthMethod: p.tokenEndpointAuthMethod,
        assumeVerifiedEmails: p.assumeVerifiedEmails,
        ...(p.kind === "github" ? { endpoints: p.endpoints } : {}),
        ...(p.kind === "apple" ? { teamId: p.teamId, keyId: p.keyId } : {}),
      };
    })
    .sort(byName((p) => p.name));

  return {
    slug: org.slug,
    name: org.name,
    defaultLoginMethods: org.defaultLoginMethods,
    twoFactorPolicy: org.twoFactorPolicy,
    defaultLocale: org.defaultLocale as OrganizationConfig["defaultLocale"],
    oauth21: org.oauth21,
    botChallenge: org.botChallenge,
    botChallengeCost: org.botChallengeCost,
    branding: { displayName: b.displayName, primaryColor: b.primaryColor, backgroundColor: b.backgroundColor, textColor: b.textColor, footerText: b.footerText },
    permissions: state.permissions.map((p) => ({ name: p.name, description: p.description })).sort(byName((p) => p.name)),
    roles: state.roles
      .map(({ data: r }) => ({ name: r.name, description: r.description, permissions: r.permissions.map((p) => p.name).sort() }))
      .sort(byName((r) => r.name)),
    applications: state.applications
      .map((a) => ({
        name: a.data.name,
        description: a.data.description,
        status: a.data.status,
        claims: a.claims.map((c) => ({ claimName: c.claimName, claimType: c.claimType, scope: c.scope, description: c.description })).sort(byName((c) => c.claimName)),
      }))
      .sort(byName((a) => a.name)),
    clients,
    identityProviders,
    webhooks: state.webhooks
      .map(({ data: w }) => ({ url: w.url, description: w.description, eventTypes: w.eventTypes, enabled: w.enabled }))
      .sort(byName((w) => w.url)),
  };
}

/** The file's text: the schema comment for editors, then the configuration (checked against the schema it claims). */
export function renderConfigYaml(organizations: OrganizationConfig[], schemaUrl?: string): string {
  const config: Config = ConfigSchema.parse({ version: CONFIG_VERSION, organizations });
  const header = schemaUrl ? `# yaml-language-server: $schema=${schemaUrl}\n` : "";
  return `${header}${stringify(config, { lineWidth: 0 })}`;
}
