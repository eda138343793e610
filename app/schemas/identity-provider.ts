import { z } from "zod";
import { UuidSchema } from "~/schemas/uuid";

/**
 * Upstream identity providers of an organization (decision 046): the Admin API's
 * shapes, the OpenAPI document, the console and the CLI read these. The client secret is
 * write-only: a body may carry it, an answer only says whether one is set.
 */
export const IDENTITY_PROVIDER_KINDS = ["oidc", "google", "microsoft", "github", "apple", "saml"] as const;
export type IdentityProviderKind = (typeof IDENTITY_PROVIDER_KINDS)[number];

/** Whether an upstream sign-in stands in for the organization's second factor. */
export const UPSTREAM_MFA_TRUST = ["when_asserted", "always", "never"] as const;
export type UpstreamMfaTrust = (typeof UPSTREAM_MFA_TRUST)[number];

/**
 * How Porta authenticates at an OpenID connection's token endpoint (decision 082). `auto` (stored
 * as null) chooses from the upstream's `token_endpoint_auth_methods_supported` at each discovery
 * (see `chooseTokenEndpointAuthMethod`); `private_key_jwt` signs with the connection's own ES256
 * key, whose public half Porta publishes; `none` is a public client (PKCE, no secret).
 */
export const TOKEN_ENDPOINT_AUTH_METHODS = ["auto", "client_secret_basic", "client_secret_post", "private_key_jwt", "none"] as const;
export type TokenEndpointAuthMethod = (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number];
/** The kinds whose token-endpoint authentication can be chosen (GitHub and Apple have their own; SAML has no token endpoint). */
export const AUTH_METHOD_KINDS: readonly IdentityProviderKind[] = ["oidc", "google", "microsoft"];
const AuthMethodSchema = z.enum(TOKEN_ENDPOINT_AUTH_METHODS);

/** Fixed issuers of the presets; Microsoft Entra ID's names the directory (tenant). */
export const GOOGLE_ISSUER = "https://accounts.google.com";
export const microsoftIssuer = (tenantId: string) => `https://login.microsoftonline.com/${tenantId}/v2.0`;
/** GitHub speaks OAuth 2.0 without OpenID Connect (decision 055): this names it, nothing is discovered there. */
export const GITHUB_ISSUER = "https://github.com";
export const APPLE_ISSUER = "https://appleid.apple.com";
/** Apple's team id and key id: ten upper-case letters or digits each. */
const AppleIdSchema = z.string().trim().regex(/^[A-Z0-9]{10}$/, "must be ten upper-case letters or digits");

const NameSchema = z.string().trim().min(1, "must not be empty").max(100, "must have at most 100 characters");
export const IssuerSchema = z
  .url({ message: "must be an absolute http(s) URL", protocol: /^https?$/ })
  .max(500, "must have at most 500 characters")
  .refine((u) => !u.includes("?") && !u.includes("#"), "must not have a query or fragment");
const ClientIdSchema = z.string().trim().min(1, "must not be empty").max(500, "must have at most 500 characters");
const SecretSchema = z.string().min(1, "must not be empty").max(2000, "must have at most 2000 characters");
const ScopeSchema = z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]{1,100}$/, "must be one scope token");
/** OpenID Connect providers need `openid` among them; GitHub's are OAuth scopes (checked with the kind). */
const ScopesSchema = z.array(ScopeSchema).min(1, "must not be empty").max(20, "must have at most 20 scopes");
export const scopesLackOpenid = (kind: IdentityProviderKind, scopes: string[] | undefined) => kind !== "github" && scopes !== undefined && !scopes.includes("openid");

const EndpointSchema = z.url({ message: "must be an absolute http(s) URL", protocol: /^https?$/ }).max(500, "must have at most 500 characters");
/** A GitHub provider's endpoints (github.com's by default; GitHub Enterprise Server has its own). */
export const OAuthEndpointsSchema = z
  .object({ authorization: EndpointSchema, token: EndpointSchema, user: EndpointSchema, emails: EndpointSchema })
  .strict()
  .meta({ description: "OAuth 2.0 endpoints of a github provider: authorization, token, user (GET /user) and emails (GET /user/emails)" });
export type OAuthEndpoints = z.infer<typeof OAuthEndpointsSchema>;
export const GITHUB_ENDPOINTS: OAuthEndpoints = {
  authorization: "https://github.com/login/oauth/authorize",
  token: "https://github.com/login/oauth/access_token",
  user: "https://api.github.com/user",
  emails: "https://api.github.com/user/emails",
};
/** An email domain: lower-case labels, at least one dot. */
export const EmailDomainSchema = z
  .string()
  .trim()
  .toLowerCase()
  .max(253, "must have at most 253 characters")
  .regex(/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, "must be a domain name such as example.com");
const DomainsSchema = z.array(EmailDomainSchema).max(50, "must have at most 50 domains");
const ClaimNameSchema = z.string().trim().min(1, "must not be empty").max(100, "must have at most 100 characters");
const TenantSchema = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9.-]{1,100}$/, "must be the directory (tenant) ID or domain")
  .refine((t) => !["common", "organizations", "consumers"].includes(t.toLowerCase()), "must name one directory, not common, organizations or consumers");

/**
 * Upstream claim names (defaults: email, email_verified, given_name, family_name); for a SAML
 * connection, attribute names (defaults in SAML_DEFAULT_ATTRIBUTES), `groups` among them.
 */
export const ClaimMappingSchema = z
  .object({
    email: ClaimNameSchema.optional(),
    emailVerified: ClaimNameSchema.optional(),
    givenName: ClaimNameSchema.optional(),
    familyName: ClaimNameSchema.optional(),
    groups: ClaimNameSchema.optional(),
  })
  .strict();
export type ClaimMapping = z.infer<typeof ClaimMappingSchema>;

// ---------------------------------------------------------------------------------------------
// SAML 2.0 connections (decision 081): an identity provider of kind "saml" whose `issuer` is the
// IdP's entity ID and whose SAML settings sit in one JSON column, parsed by SamlSettingsSchema.

/**
 * NameID formats a connection may ask for. Transient is left out: it changes at every sign-in,
 * so the link between the IdP's account and Porta's could never be found again.
 */
export const SAML_NAME_ID_FORMATS = [
  "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified",
  "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
  "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
] as const;
export type SamlNameIdFormat = (typeof SAML_NAME_ID_FORMATS)[number];

/** The attribute names most IdPs send when no mapping names others (Entra ID's claim URIs are mapped per connection). */
export const SAML_DEFAULT_ATTRIBUTES = { email: "email", givenName: "firstName", familyName: "lastName", groups: "groups" } as const;

/** An entity ID: a URI (URL or URN) of at most 1024 characters, without spaces or control characters. */
export const SamlEntityIdSchema = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(1024, "must have at most 1024 characters")
  .regex(/^[\x21-\x7E]+$/, "must be a URI without spaces");

/** An X.509 certificate as PEM or as the base64 DER metadata carries (parsed when stored). */
export const SamlCertificateSchema = z.string().trim().min(1, "must not be empty").max(20_000, "must have at most 20000 characters");

/** An IdP group and the organization's roles its members get at each SAML sign-in. */
export const SamlGroupRoleSchema = z
  .object({
    group: z.string().trim().min(1, "must not be empty").max(256, "must have at most 256 characters"),
    roles: z.array(z.string().trim().min(1).max(100)).min(1, "must name at least one role").max(20, "must have at most 20 roles"),
  })
  .strict();

/** A connection's SAML settings as stored in IdentityProvider.saml. */
export const SamlSettingsSchema = z
  .object({
    /** The IdP's single sign-on URL (HTTP-Redirect binding). */
    ssoUrl: EndpointSchema,
    /** The IdP's signing certificates, several at once during a rollover. */
    signingCertificates: z.array(SamlCertificateSchema).min(1, "must have at least one certificate").max(5, "must have at most 5 certificates"),
    /** Where the IdP publishes its metadata, fetched through the outbound guard and refreshed on a schedule; null when entered by hand. */
    metadataUrl: EndpointSchema.nullable(),
    metadataRefreshedAt: z.iso.datetime().nullable(),
    nameIdFormat: z.enum(SAML_NAME_ID_FORMATS),
    /** RSA-SHA1 signatures and SHA-1 digests are refused unless this says otherwise. */
    allowSha1: z.boolean(),
    /** IdP-initiated sign-in: off (null) or the client_id of the organization's client it signs in to. */
    idpInitiatedClientId: z.string().max(200).nullable(),
    groupRoles: z.array(SamlGroupRoleSchema).max(100, "must have at most 100 groups"),
    /** Porta's certificate for the connection's decryption key (published in the SP metadata); null: assertions arrive unencrypted. */
    encryptionCertificate: z.string().nullable(),
  })
  .strict();
export type SamlSettings = z.infer<typeof SamlSettingsSchema>;

/** A certificate as an administrator sees it: whose, by whom, valid when, its SHA-256 fingerprint. */
export const CertificateInfoSchema = z.object({
  subject: z.string(),
  issuer: z.string(),
  notBefore: z.iso.datetime(),
  notAfter: z.iso.datetime(),
  fingerprint: z.string(),
});

/**
 * A SAML connection as the Admin API answers it: its settings (no secret among them; the
 * decryption key stays write-never), Porta's addresses the IdP's administrator registers, and the
 * certificates described.
 */
export const SamlConnectionSchema = SamlSettingsSchema.extend({
  /** Porta's (the service provider's) entity ID for this connection. */
  entityId: z.string(),
  acsUrl: z.string(),
  spMetadataUrl: z.string(),
  /** The signing certificates in the order of `signingCertificates`, described (null: one that no longer parses). */
  certificates: z.array(CertificateInfoSchema.nullable()),
  /** The decryption key's certificate, described; null without encryption. */
  encryption: CertificateInfoSchema.nullable(),
});
export type SamlConnection = z.infer<typeof SamlConnectionSchema>;

/**
 * A SAML connection's settings as an administrator sends them (decision 081). On create, `ssoUrl`
 * and `signingCertificates` are needed unless the metadata gives them; `encryption` makes Porta
 * generate a decryption key pair (true) or drop it (false).
 */
export const SamlSettingsInputSchema = z
  .object({
    ssoUrl: EndpointSchema.optional(),
    signingCertificates: z.array(SamlCertificateSchema).min(1, "must have at least one certificate").max(5, "must have at most 5 certificates").optional(),
    /** Update only: null stops the scheduled refresh (the settings stay as they are). */
    metadataUrl: EndpointSchema.nullable().optional(),
    nameIdFormat: z.enum(SAML_NAME_ID_FORMATS).optional(),
    allowSha1: z.boolean().optional(),
    idpInitiatedClientId: z.string().trim().min(1, "must not be empty").max(200, "must have at most 200 characters").nullable().optional(),
    groupRoles: z.array(SamlGroupRoleSchema).max(100, "must have at most 100 groups").optional(),
    encryption: z.boolean().optional(),
  })
  .strict();
export type SamlSettingsInput = z.infer<typeof SamlSettingsInputSchema>;

/** The IdP's metadata as pasted (checked by federation/saml-metadata.ts, which also caps its size). */
const SamlMetadataXmlSchema = z.string().min(1, "must not be empty").max(2 * 1024 * 1024, "must have at most 1048576 bytes");

/** An issuer for the kind: a URL for OpenID Connect, an entity ID (URL or URN) for SAML. */
function checkIssuerForKind(kind: IdentityProviderKind, issuer: string, ctx: z.RefinementCtx) {
  const parsed = (kind === "saml" ? SamlEntityIdSchema : IssuerSchema).safeParse(issuer);
  if (!parsed.success) for (const issue of parsed.error.issues) ctx.addIssue({ code: "custom", path: ["issuer"], message: issue.message });
}
const LooseIssuerSchema = z.string().max(1024, "must have at most 1024 characters");

export const IdentityProviderSchema = z.object({
  id: z.uuid(),
  organizationId: z.uuid(),
  name: z.string(),
  kind: z.enum(IDENTITY_PROVIDER_KINDS),
  issuer: z.string(),
  clientId: z.string(),
  /** A client secret is stored (encrypted); it is never shown again. */
  hasClientSecret: z.boolean(),
  scopes: z.array(z.string()),
  claimMapping: ClaimMappingSchema,
  domains: z.array(z.string()),
  enabled: z.boolean(),
  createAccounts: z.boolean(),
  trustUpstreamMfa: z.enum(UPSTREAM_MFA_TRUST),
  endpoints: OAuthEndpointsSchema.nullable(),
  /** Apple: the team and key id of the private key (set as `clientSecret`, the .p8 file's text). */
  teamId: z.string().nullable(),
  keyId: z.string().nullable(),
  /** Register this as the redirect URI at the upstream provider. */
  callbackUrl: z.string(),
  /** How Porta authenticates at the upstream's token endpoint (`auto`: chosen from its discovery document). */
  tokenEndpointAuthMethod: AuthMethodSchema,
  /** private_key_jwt: register this JWKS URL (or the keys it serves) at the upstream; null for other methods. */
  jwksUrl: z.string().nullable(),
  /**
   * Emails of the provider's `domains` count as verified when the upstream does not say whether
   * they are; they link or create accounts only for a domain the organization verified (decision 086).
   */
  assumeVerifiedEmails: z.boolean(),
  /** A SAML connection's settings and addresses (decision 081); null for other kinds. */
  saml: SamlConnectionSchema.nullable(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});
export type IdentityProvider = z.infer<typeof IdentityProviderSchema>;

const commonFields = {
  name: NameSchema,
  clientId: ClientIdSchema,
  clientSecret: SecretSchema.optional(),
  scopes: ScopesSchema.optional(),
  claimMapping: ClaimMappingSchema.optional(),
  domains: DomainsSchema.optional(),
  enabled: z.boolean().optional(),
  createAccounts: z.boolean().optional(),
  trustUpstreamMfa: z.enum(UPSTREAM_MFA_TRUST).optional(),
  tokenEndpointAuthMethod: AuthMethodSchema.optional(),
  assumeVerifiedEmails: z.boolean().optional(),
};

/**
 * `kind` oidc needs the issuer (its discovery document is at issuer/.well-known/openid-configuration);
 * google has a fixed one; microsoft is built from `tenantId`.
 */
export const IdentityProviderCreateSchema = z
  .object({
    organizationId: UuidSchema,
    kind: z.enum(IDENTITY_PROVIDER_KINDS).optional(),
    /** OpenID Connect: the issuer URL; SAML: the IdP's entity ID (URL or URN). */
    issuer: LooseIssuerSchema.optional(),
    tenantId: TenantSchema.optional(),
    endpoints: OAuthEndpointsSchema.optional(),
    teamId: AppleIdSchema.optional(),
    keyId: AppleIdSchema.optional(),
    ...commonFields,
    /** Required except for SAML, which has none. */
    clientId: ClientIdSchema.optional(),
    // SAML (decision 081): one of the metadata, its URL, or `issuer` with `saml.ssoUrl` and `saml.signingCertificates`.
    samlMetadataXml: SamlMetadataXmlSchema.optional(),
    samlMetadataUrl: EndpointSchema.optional(),
    saml: SamlSettingsInputSchema.optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    const kind = body.kind ?? "oidc";
    if (body.issuer !== undefined) checkIssuerForKind(kind, body.issuer, ctx);
    if (kind !== "saml" && !body.clientId) ctx.addIssue({ code: "custom", path: ["clientId"], message: "is required" });
    if (kind === "saml") refineSamlCreate(body, ctx);
    for (const field of ["samlMetadataXml", "samlMetadataUrl", "saml"] as const) {
      if (kind !== "saml" && body[field] !== undefined) ctx.addIssue({ code: "custom", path: [field], message: "is only for SAML" });
    }
    if (scopesLackOpenid(kind, body.scopes)) ctx.addIssue({ code: "custom", path: ["scopes"], message: "must include openid" });
    if (kind !== "github" && body.endpoints) ctx.addIssue({ code: "custom", path: ["endpoints"], message: "are only for github (OpenID providers are discovered)" });
    for (const field of ["teamId", "keyId", "clientSecret"] as const) {
      if (kind === "apple" && !body[field]) ctx.addIssue({ code: "custom", path: [field], message: "is required for Apple" });
    }
    if (kind !== "apple" && body.teamId) ctx.addIssue({ code: "custom", path: ["teamId"], message: "is only for Apple" });
    if (kind !== "apple" && body.keyId) ctx.addIssue({ code: "custom", path: ["keyId"], message: "is only for Apple" });
    if (kind === "oidc" && !body.issuer) ctx.addIssue({ code: "custom", path: ["issuer"], message: "is required for an OpenID Connect provider" });
    if (kind !== "oidc" && kind !== "saml" && body.issuer) ctx.addIssue({ code: "custom", path: ["issuer"], message: `is fixed for ${kind}` });
    if (kind === "microsoft" && !body.tenantId) ctx.addIssue({ code: "custom", path: ["tenantId"], message: "is required for Microsoft Entra ID" });
    if (kind !== "microsoft" && body.tenantId) ctx.addIssue({ code: "custom", path: ["tenantId"], message: "is only for Microsoft Entra ID" });
    const method = body.tokenEndpointAuthMethod;
    if (method !== undefined && method !== "auto" && !AUTH_METHOD_KINDS.includes(kind)) ctx.addIssue({ code: "custom", path: ["tokenEndpointAuthMethod"], message: `is fixed for ${kind}` });
    if ((method === "client_secret_basic" || method === "client_secret_post") && !body.clientSecret) ctx.addIssue({ code: "custom", path: ["clientSecret"], message: `is required for ${method}` });
    if (method === "none" && body.clientSecret) ctx.addIssue({ code: "custom", path: ["clientSecret"], message: "must not be set for a public client (none)" });
    if (body.assumeVerifiedEmails && (body.domains ?? []).length === 0) ctx.addIssue({ code: "custom", path: ["assumeVerifiedEmails"], message: "needs at least one domain: only emails of the provider's domains are taken as verified" });
  });
export type IdentityProviderCreate = z.infer<typeof IdentityProviderCreateSchema>;

/** A SAML connection's create body: exactly one source of the IdP's settings, and nothing OpenID's. */
function refineSamlCreate(
  body: { issuer?: string | undefined; clientId?: string | undefined; clientSecret?: string | undefined; scopes?: string[] | undefined; samlMetadataXml?: string | undefined; samlMetadataUrl?: string | undefined; saml?: SamlSettingsInput | undefined },
  ctx: z.RefinementCtx,
) {
  const sources = [body.samlMetadataXml !== undefined, body.samlMetadataUrl !== undefined, body.issuer !== undefined].filter(Boolean).length;
  if (sources === 0) ctx.addIssue({ code: "custom", path: ["samlMetadataXml"], message: "or samlMetadataUrl, or issuer with saml.ssoUrl and saml.signingCertificates, is required for SAML" });
  if (sources > 1) ctx.addIssue({ code: "custom", path: ["issuer"], message: "give one of samlMetadataXml, samlMetadataUrl or issuer" });
  if (body.issuer !== undefined) {
    if (!body.saml?.ssoUrl) ctx.addIssue({ code: "custom", path: ["saml", "ssoUrl"], message: "is required with issuer" });
    if (!body.saml?.signingCertificates) ctx.addIssue({ code: "custom", path: ["saml", "signingCertificates"], message: "is required with issuer" });
  }
  if (body.saml?.metadataUrl !== undefined) ctx.addIssue({ code: "custom", path: ["saml", "metadataUrl"], message: "is set on create through samlMetadataUrl" });
  for (const field of ["clientId", "clientSecret", "scopes"] as const) {
    if (body[field] !== undefined && body[field] !== "") ctx.addIssue({ code: "custom", path: [field], message: "is not used by SAML" });
  }
}


/** Every field optional; `clientSecret: null` removes the stored secret (a public client with PKCE). */
export const IdentityProviderUpdateSchema = z
  .object({
    name: NameSchema.optional(),
    /** OpenID Connect: the issuer URL; SAML: the IdP's entity ID (checked with the provider's kind). */
    issuer: LooseIssuerSchema.optional(),
    clientId: ClientIdSchema.optional(),
    clientSecret: SecretSchema.nullable().optional(),
    endpoints: OAuthEndpointsSchema.optional(),
    teamId: AppleIdSchema.optional(),
    keyId: AppleIdSchema.optional(),
    scopes: ScopesSchema.optional(),
    claimMapping: ClaimMappingSchema.optional(),
    domains: DomainsSchema.optional(),
    enabled: z.boolean().optional(),
    createAccounts: z.boolean().optional(),
    trustUpstreamMfa: z.enum(UPSTREAM_MFA_TRUST).optional(),
    /** Changing to private_key_jwt generates the connection's key pair (kept while the method stays). */
    tokenEndpointAuthMethod: AuthMethodSchema.optional(),
    assumeVerifiedEmails: z.boolean().optional(),
    // SAML (decision 081): new metadata replaces the entity ID, SSO URL and certificates.
    samlMetadataXml: SamlMetadataXmlSchema.optional(),
    saml: SamlSettingsInputSchema.optional(),
  })
  .strict();
export type IdentityProviderUpdate = z.infer<typeof IdentityProviderUpdateSchema>;

/**
 * A SAML connection's settings as packages carry them: all but the decryption key, which never
 * leaves the deployment; `hadDecryptionKey` says the connection encrypted, and the import makes
 * a new key pair (whose certificate the IdP must then be given).
 */
export const PortableSamlSettingsSchema = SamlSettingsSchema.omit({ encryptionCertificate: true }).extend({ hadDecryptionKey: z.boolean() }).strict();
export type PortableSamlSettings = z.infer<typeof PortableSamlSettingsSchema>;

/**
 * A provider's configuration as export packages carry it (decision 055): everything but its id
 * and its client secret, which never leaves the deployment; `hadClientSecret` says that one must
 * be set after an import.
 */
export const PortableIdentityProviderSchema = z
  .object({
    name: NameSchema,
    kind: z.enum(IDENTITY_PROVIDER_KINDS),
    /** Checked with the kind: a URL, or a SAML entity ID. */
    issuer: LooseIssuerSchema,
    /** Empty for SAML. */
    clientId: z.string().trim().max(500, "must have at most 500 characters"),
    hadClientSecret: z.boolean(),
    /** Empty for SAML. */
    scopes: z.array(ScopeSchema).max(20, "must have at most 20 scopes"),
    claimMapping: ClaimMappingSchema,
    domains: DomainsSchema,
    enabled: z.boolean(),
    createAccounts: z.boolean(),
    trustUpstreamMfa: z.enum(UPSTREAM_MFA_TRUST),
    /** Absent in packages made before GitHub (decision 055): none. */
    endpoints: OAuthEndpointsSchema.nullable().optional(),
    /** Apple (decision 055); absent in earlier packages: none. */
    teamId: z.string().max(10).nullable().optional(),
    keyId: z.string().max(10).nullable().optional(),
    /** Absent in packages made before decision 082: auto. A private_key_jwt connection gets a new key pair at the import. */
    tokenEndpointAuthMethod: AuthMethodSchema.optional(),
    assumeVerifiedEmails: z.boolean().optional(),
    /** SAML (decision 081); absent in earlier packages and for other kinds. */
    saml: PortableSamlSettingsSchema.nullable().optional(),
  })
  .strict()
  .superRefine((p, ctx) => {
    checkIssuerForKind(p.kind, p.issuer, ctx);
    if (p.kind !== "saml" && p.clientId.length === 0) ctx.addIssue({ code: "custom", path: ["clientId"], message: "must not be empty" });
    if (p.kind !== "saml" && p.scopes.length === 0) ctx.addIssue({ code: "custom", path: ["scopes"], message: "must not be empty" });
    if (p.kind === "saml" && !p.saml) ctx.addIssue({ code: "custom", path: ["saml"], message: "is required for SAML" });
  });

/** A user's link to an upstream account. */
export const FederatedIdentitySchema = z.object({
  id: z.uuid(),
  userId: z.uuid(),
  providerId: z.uuid(),
  providerName: z.string(),
  subject: z.string(),
  email: z.string().nullable(),
  createdAt: z.iso.datetime(),
  lastUsedAt: z.iso.datetime().nullable(),
});
export type FederatedIdentity = z.infer<typeof FederatedIdentitySchema>;
