import { z } from "zod";
import { BotChallengeCostSchema, BotChallengePolicySchema } from "./bot-challenge";
import { Argon2HashSchema } from "./argon2-hash";
import { LegacyPasswordSchema } from "./legacy-password";
import { APPLICATION_STATUS_VALUES, DescriptionSchema, NameSchema } from "./application";
import { ASSET_CONTENT_TYPES, ASSET_KINDS, ASSET_MAX_BYTES } from "./branding";
import { CLAIM_TYPE_VALUES, ClaimNameSchema, ClaimScopeSchema, MAX_CLAIM_VALUE_BYTES } from "./claim";
import {
  CLIENT_PKCE_VALUES,
  AccessTokenTtlSchema,
  BackchannelLogoutUriSchema,
  InitiateLoginUriSchema,
  TokenExchangeAudiencesSchema,
  CLIENT_APPLICATION_TYPE_VALUES,
  CLIENT_STATUS_VALUES,
  ClientNameSchema,
  CorsOriginsSchema,
  GrantTypesSchema,
  JwksSchema,
  JwksUriSchema,
  RefreshTokenTtlSchema,
  ScopeSchema,
  SECRET_STATUS_VALUES,
  UrisSchema,
} from "./client";
import { API_RESOURCE_STATUS_VALUES, ApiResourceIdentifierSchema, ApiResourceNameSchema, ApiResourceScopeDescriptionsSchema, ApiResourceScopesSchema } from "./api-resource";
import { LOGIN_METHODS } from "./login-methods";
import { LoginMethodsSchema, SlugSchema } from "./organization";
import { TWO_FACTOR_POLICIES } from "./two-factor-policy";
import { RbacDescriptionSchema, RbacNameSchema, RoleNameSchema } from "./rbac";
import { EmailSchema } from "./email";
import { PortableIdentityProviderSchema } from "./identity-provider";
import { USER_STATUS_VALUES, UserLocaleSchema } from "./user";

/**
 * Export packages: one organization's configuration and users as a versioned, signed JSON
 * document. Password hashes, recovery-code hashes and client-secret hashes travel as they are
 * stored; TOTP secrets travel sealed (AES-256-GCM); no plaintext secret is ever in a package.
 */
export const EXPORT_FORMAT = "porta.organization-export";
export const EXPORT_VERSION = 1;
/** Imports read the whole package as JSON; this bounds what one request may send. */
export const MAX_IMPORT_BYTES = 64 * 1024 * 1024;

const Nullable = <T extends z.ZodType>(schema: T) => schema.nullable();
const DateTime = z.iso.datetime({ offset: true, message: "must be an ISO 8601 date-time" });
const ClientId = z.string().min(1).max(200).regex(/^[A-Za-z0-9._~-]+$/, "must be a client id");
const Sealed = z.string().max(1024).regex(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/, "must be a sealed value of this package");
const unique = <T>(key: (item: T) => string, what: string) => (items: T[], ctx: z.RefinementCtx) => {
  const seen = new Set<string>();
  items.forEach((item, index) => {
    const k = key(item);
    if (seen.has(k)) ctx.addIssue({ code: "custom", path: [index], message: `repeats the ${what} ${key(item)}` });
    seen.add(k);
  });
};

export const PackageModuleSchema = z.object({ name: NameSchema, description: Nullable(DescriptionSchema), status: z.enum(APPLICATION_STATUS_VALUES) }).strict();
export const PackageClaimSchema = z
  .object({ claimName: ClaimNameSchema, claimType: z.enum(CLAIM_TYPE_VALUES), scope: ClaimScopeSchema, description: Nullable(DescriptionSchema) })
  .strict();
export const PackageApplicationSchema = z
  .object({
    name: NameSchema,
    description: Nullable(DescriptionSchema),
    status: z.enum(APPLICATION_STATUS_VALUES),
    modules: z.array(PackageModuleSchema).max(1000).superRefine(unique((m) => m.name, "module")),
    claims: z.array(PackageClaimSchema).max(1000).superRefine(unique((c) => c.claimName, "claim")),
  })
  .strict();
export const PackagePermissionSchema = z.object({ name: RbacNameSchema, description: Nullable(RbacDescriptionSchema) }).strict();
export const PackageRoleSchema = z
  .object({ name: RoleNameSchema, description: Nullable(RbacDescriptionSchema), permissions: z.array(RbacNameSchema).max(1000) })
  .strict();
export const PackageSecretSchema = z
  .object({
    secretHash: z.string().regex(/^[0-9a-f]{64}$/, "must be a SHA-256 hex digest"),
    hint: z.string().max(16),
    label: Nullable(z.string().max(200)),
    status: z.enum(SECRET_STATUS_VALUES),
    expiresAt: Nullable(DateTime),
    revokedAt: Nullable(DateTime),
    createdAt: DateTime,
  })
  .strict();
export const PackageClientSchema = z
  .object({
    id: ClientId,
    application: Nullable(NameSchema),
    name: ClientNameSchema,
    applicationType: z.enum(CLIENT_APPLICATION_TYPE_VALUES),
    tokenEndpointAuthMethod: z.enum(["client_secret_basic", "client_secret_post", "private_key_jwt", "none"]),
    // Public keys only (decision 045); packages made before clients had keys carry none.
    jwks: Nullable(JwksSchema).default(null),
    jwksUri: Nullable(JwksUriSchema).default(null),
    redirectUris: UrisSchema,
    postLogoutRedirectUris: UrisSchema,
    grantTypes: GrantTypesSchema,
    scope: ScopeSchema,
    loginMethods: z.array(z.enum(LOGIN_METHODS)).max(LOGIN_METHODS.length),
    // Packages made before these settings existed carry none: the defaults apply.
    allowedCorsOrigins: CorsOriginsSchema.default([]),
    skipConsent: z.boolean().default(false),
    // Per-client PKCE (decision 073); packages made before it carry none: inherit.
    pkce: z.enum(CLIENT_PKCE_VALUES).default("inherit"),
    accessTokenTtlSeconds: Nullable(AccessTokenTtlSchema).default(null),
    refreshTokenTtlSeconds: Nullable(RefreshTokenTtlSchema).default(null),
    // Back-channel logout (decision 048); packages made before it carry none.
    backchannelLogoutUri: Nullable(BackchannelLogoutUriSchema).default(null),
    backchannelLogoutSessionRequired: z.boolean().default(false),
    // Token exchange (decision 053); packages made before it carry none.
    tokenExchangeAudiences: TokenExchangeAudiencesSchema.default([]),
    // Third-party initiated login (decision 083); packages made before it carry none.
    initiateLoginUri: Nullable(InitiateLoginUriSchema).default(null),
    status: z.enum(CLIENT_STATUS_VALUES),
    secrets: z.array(PackageSecretSchema).max(100),
  })
  .strict()
  // The Admin API's rule (clientSettingsProblems): a public client always sends PKCE.
  .refine((c) => !(c.pkce === "not_required" && c.tokenEndpointAuthMethod === "none"), { path: ["pkce"], message: "not_required is only possible for a confidential client" });
const Base64Url = z.string().regex(/^[A-Za-z0-9_-]+$/, "must be base64url");
/** A user's passkey: the public key and what the checks need, never a secret (decision 041). */
export const PackagePasskeySchema = z
  .object({
    credentialId: Base64Url.max(1400),
    userHandle: Base64Url.max(128),
    publicKey: Base64Url.max(2048),
    counter: z.number().int().min(0).max(0xffffffff),
    transports: z.array(z.string().max(32)).max(8),
    deviceType: z.enum(["singleDevice", "multiDevice"]),
    backedUp: z.boolean(),
    aaguid: Nullable(z.string().max(36)),
    name: z.string().min(1).max(64),
    createdAt: DateTime,
    lastUsedAt: Nullable(DateTime),
  })
  .strict();

export const PackageUserSchema = z
  .object({
    email: EmailSchema,
    emailVerified: z.boolean(),
    givenName: Nullable(z.string().max(200)),
    familyName: Nullable(z.string().max(200)),
    locale: Nullable(UserLocaleSchema),
    passwordHash: Nullable(Argon2HashSchema),
    status: z.enum(USER_STATUS_VALUES),
    emailOtpEnabled: z.boolean(),
    createdAt: DateTime,
    roles: z.array(RoleNameSchema).max(1000),
    claims: z
      .array(
        z
          .object({
            application: NameSchema,
            claimName: ClaimNameSchema,
            value: z.json().refine((v) => JSON.stringify(v).length <= MAX_CLAIM_VALUE_BYTES, "is too large"),
          })
          .strict(),
      )
      .max(1000),
    totp: Nullable(
      z
        .object({ secret: Sealed, status: z.enum(["pending", "enrolled"]), enrolledAt: Nullable(DateTime), lastUsedStep: z.number().int().min(0) })
        .strict(),
    ),
    recoveryCodes: z.array(z.object({ codeHash: Argon2HashSchema, usedAt: Nullable(DateTime) }).strict()).max(50),
    /**
     * Public credentials only (decision 041). Absent in packages of earlier versions of Porta (no
     * default: the signature covers the package as exported), and an import then leaves them alone.
     */
    passkeys: z.array(PackagePasskeySchema).max(50).optional(),
    /**
     * An imported password not yet used to sign in (decision 085): its old algorithm's parameters,
     * which `passwordHash` wraps; null for everyone else, absent in packages of earlier versions.
     */
    legacyPassword: Nullable(LegacyPasswordSchema).optional(),
  })
  .strict()
  .refine((u) => u.legacyPassword === undefined || u.legacyPassword === null || u.passwordHash !== null, { path: ["legacyPassword"], message: "needs the passwordHash that wraps it" });

/** A client's grant of an API resource, the client named by its id in the package (decision 077). */
export const PackageApiResourceGrantSchema = z.object({ client: ClientId, scopes: ApiResourceScopesSchema }).strict();
/** An API resource (decision 077) with the clients granted it; the identifier is its key. */
export const PackageApiResourceSchema = z
  .object({
    identifier: ApiResourceIdentifierSchema,
    name: ApiResourceNameSchema,
    scopes: ApiResourceScopesSchema,
    scopeDescriptions: ApiResourceScopeDescriptionsSchema,
    accessTokenTtlSeconds: Nullable(AccessTokenTtlSchema),
    consentRequired: z.boolean(),
    openToDynamicClients: z.boolean(),
    status: z.enum(API_RESOURCE_STATUS_VALUES),
    grants: z.array(PackageApiResourceGrantSchema).max(10_000).superRefine(unique((g) => g.client, "client")),
  })
  .strict()
  // The Admin API's rule: a resource open to self-registered clients always asks the person.
  .refine((r) => !(r.openToDynamicClients && !r.consentRequired), { path: ["openToDynamicClients"], message: "needs consentRequired: a resource open to clients that registered themselves always asks the person" });

/** An upstream identity provider (decision 046) without its client secret (decision 055). */
export const PackageIdentityProviderSchema = PortableIdentityProviderSchema;

/** An uploaded logo or favicon the branding refers to (by sha256), its bytes in base64. */
export const PackageAssetSchema = z
  .object({
    kind: z.enum(ASSET_KINDS),
    contentType: z.enum(ASSET_CONTENT_TYPES),
    sha256: z.string().regex(/^[0-9a-f]{64}$/, "must be a SHA-256 hex digest"),
    data: z.base64({ message: "must be base64" }).max(Math.ceil((ASSET_MAX_BYTES.logo * 4) / 3) + 4),
  })
  .strict();

export const PackageContentSchema = z
  .object({
    organization: z
      .object({
        slug: SlugSchema,
        name: NameSchema,
        defaultLoginMethods: LoginMethodsSchema,
        twoFactorPolicy: z.enum(TWO_FACTOR_POLICIES),
        defaultLocale: UserLocaleSchema,
        /** OAuth 2.1 mode (decision 052); absent in packages made before it: an organization without the mode. */
        oauth21: z.boolean().optional(),
        /** Bot protection (decision 091); absent in packages made before it: off, at the default cost. */
        botChallenge: BotChallengePolicySchema.optional(),
        botChallengeCost: BotChallengeCostSchema.optional(),
        branding: z.record(z.string().max(100), z.json()).refine((b) => JSON.stringify(b).length <= 20_000, "is too large"),
        assets: z.array(PackageAssetSchema).max(ASSET_KINDS.length),
      })
      .strict(),
    applications: z.array(PackageApplicationSchema).max(10_000).superRefine(unique((a) => a.name, "application")),
    permissions: z.array(PackagePermissionSchema).max(10_000).superRefine(unique((p) => p.name, "permission")),
    roles: z.array(PackageRoleSchema).max(10_000).superRefine(unique((r) => r.name, "role")),
    clients: z.array(PackageClientSchema).max(10_000).superRefine(unique((c) => c.id, "client id")),
    users: z.array(PackageUserSchema).max(1_000_000).superRefine(unique((u) => u.email, "email")),
    /** Absent in packages made before decision 055 (no default: the signature covers the package as exported); an import then leaves providers alone. */
    identityProviders: z.array(PackageIdentityProviderSchema).max(100).superRefine(unique((p) => p.name, "identity provider")).optional(),
    /** Absent in packages made before API resources travelled (no default, as above); an import then leaves them alone. */
    apiResources: z.array(PackageApiResourceSchema).max(10_000).superRefine(unique((r) => r.identifier, "identifier")).optional(),
  })
  .strict();

export const PackageCountsSchema = z.object({
  applications: z.number().int(),
  modules: z.number().int(),
  claims: z.number().int(),
  permissions: z.number().int(),
  roles: z.number().int(),
  clients: z.number().int(),
  clientSecrets: z.number().int(),
  users: z.number().int(),
  usersWithPassword: z.number().int(),
  usersWithTotp: z.number().int(),
  recoveryCodes: z.number().int(),
  claimValues: z.number().int(),
  identityProviders: z.number().int().optional(),
  apiResources: z.number().int().optional(),
  clientResourceGrants: z.number().int().optional(),
});

export const PackageSourceSchema = z.object({ issuer: z.string().max(2000), organizationId: z.uuid() }).strict();

export const ExportPackageSchema = z
  .object({
    format: z.literal(EXPORT_FORMAT, { message: `must be "${EXPORT_FORMAT}"` }),
    version: z.literal(EXPORT_VERSION, { message: `must be ${EXPORT_VERSION}: this Porta reads version ${EXPORT_VERSION} packages` }),
    exportedAt: DateTime,
    source: PackageSourceSchema,
    counts: PackageCountsSchema,
    content: PackageContentSchema,
    signature: z.object({ alg: z.literal("HS256"), keyId: z.string().max(64), value: z.string().max(128) }).strict(),
  })
  .strict();

export const ExportManifestSchema = z.object({
  format: z.literal(EXPORT_FORMAT),
  version: z.literal(EXPORT_VERSION),
  generatedAt: DateTime,
  source: PackageSourceSchema,
  organization: z.object({ slug: z.string(), name: z.string() }),
  counts: PackageCountsSchema,
  keyId: z.string().meta({ description: "Fingerprint of the signing key: packages verify only where ENCRYPTION_KEY is the same" }),
});

export const ImportRequestSchema = z
  .object({
    package: ExportPackageSchema,
    slug: SlugSchema.optional().meta({ description: "Import into this organization slug instead of the package's own" }),
    copy: z
      .boolean()
      .optional()
      .meta({ description: "Import as a copy (clone an organization on the same deployment): clients get new ids of their own and no secrets; create a secret per client afterwards" }),
  })
  .strict();

export const IMPORT_ACTIONS = ["create", "update", "unchanged"] as const;
export const ImportChangeSchema = z.object({
  type: z.enum(["organization", "application", "module", "claim", "permission", "role", "client", "clientSecret", "user", "identityProvider", "apiResource"]),
  key: z.string(),
  action: z.enum(["create", "update"]),
  fields: z.array(z.string()).optional(),
});
export const ImportPlanSchema = z.object({
  organization: z.object({ slug: z.string(), id: z.uuid().nullable(), action: z.enum(IMPORT_ACTIONS) }),
  summary: z.object({ create: z.number().int(), update: z.number().int(), unchanged: z.number().int() }),
  changes: z.array(ImportChangeSchema).meta({ description: "Every create and update; unchanged items are only counted" }),
  applied: z.boolean(),
});

export type ExportPackage = z.infer<typeof ExportPackageSchema>;
export type PackageContent = z.infer<typeof PackageContentSchema>;
export type PackageCounts = z.infer<typeof PackageCountsSchema>;
export type PackageUser = z.infer<typeof PackageUserSchema>;
export type PackageClient = z.infer<typeof PackageClientSchema>;
export type PackageIdentityProvider = z.infer<typeof PackageIdentityProviderSchema>;
export type PackageApiResource = z.infer<typeof PackageApiResourceSchema>;
export type ImportChange = z.infer<typeof ImportChangeSchema>;
export type ImportPlan = z.infer<typeof ImportPlanSchema>;
