import { z } from "zod";

/**
 * The file `porta plan` / `porta apply` read and `porta export` writes: organizations and what
 * they hold, each entity named by a natural key (an organization by its slug, a client, role,
 * application, claim, permission or identity provider by its name, a webhook by its URL), never by
 * a database id, so that one file describes the same configuration on any Porta.
 *
 * A field left out of an entity is not managed: plan leaves it as the server has it (a new
 * entity gets the server's default). A kind left out of an organization (no `clients:` key) is
 * not managed either, so `--prune` deletes only within kinds the file lists.
 *
 * Secrets are never in the file: a field that takes one holds `{ fromEnv: NAME }`, read from the
 * environment when the file is loaded. The JSON Schema (docs/porta-config.schema.json) is
 * generated from these schemas, so an editor checks the file by the same rules.
 */

const LOGIN_METHODS = ["password", "magic_link", "passkey", "federated"] as const;
const TWO_FACTOR_POLICIES = ["optional", "required_email", "required_totp", "required_passkey", "required_any"] as const;
const GRANT_TYPES = ["authorization_code", "refresh_token", "client_credentials", "urn:ietf:params:oauth:grant-type:device_code"] as const;

export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A secret's place in the file: the name of the environment variable that holds it. */
export const FromEnvSchema = z
  .object({ fromEnv: z.string().regex(ENV_NAME, "must be an environment variable's name (letters, digits, _)").describe("The environment variable that holds the secret") })
  .strict()
  .describe("A secret, read from an environment variable when the file is loaded (never written in the file)");
export type FromEnv = z.infer<typeof FromEnvSchema>;

/** Names that must be unique within a list, so each entity has one natural key. */
function uniqueBy<T>(key: (item: T) => string, what: string) {
  return (items: T[] | undefined, ctx: z.RefinementCtx) => {
    const seen = new Set<string>();
    for (const [i, item] of (items ?? []).entries()) {
      const k = key(item);
      if (seen.has(k)) ctx.addIssue({ code: "custom", path: [i], message: `${what} "${k}" appears twice` });
      seen.add(k);
    }
  };
}

const name = z.string().min(1).max(200);
const description = z.string().max(1000).nullable();
const status = z.enum(["active", "inactive"]);

export const PermissionSchema = z.object({ name, description: description.optional() }).strict();

export const RoleSchema = z
  .object({
    name,
    description: description.optional(),
    permissions: z.array(z.string().min(1)).optional().describe("Names of permissions of the organization"),
  })
  .strict();

export const ClaimSchema = z
  .object({
    claimName: z.string().min(1).max(100),
    claimType: z.enum(["string", "number", "boolean", "json"]),
    scope: z.string().min(1),
    description: description.optional(),
  })
  .strict();

export const ApplicationSchema = z
  .object({
    name,
    description: description.optional(),
    status: status.optional(),
    claims: z
      .array(ClaimSchema)
      .superRefine(uniqueBy((c) => c.claimName, "claim"))
      .optional()
      .describe("Custom claim definitions, by claimName"),
  })
  .strict();

const ecKey = z
  .object({ kty: z.literal("EC"), crv: z.literal("P-256"), x: z.string(), y: z.string(), kid: z.string().optional(), use: z.literal("sig").optional(), alg: z.literal("ES256").optional() })
  .strict();

export const ClientSchema = z
  .object({
    name,
    application: z.string().min(1).nullable().optional().describe("The name of the organization's application the client belongs to"),
    clientType: z.enum(["confidential", "public"]).describe("Fixed at creation"),
    applicationType: z.enum(["web", "native"]).optional(),
    tokenEndpointAuthMethod: z.enum(["client_secret_basic", "client_secret_post", "private_key_jwt"]).optional().describe("Confidential clients only"),
    jwks: z.object({ keys: z.array(ecKey) }).strict().nullable().optional(),
    jwksUri: z.string().nullable().optional(),
    redirectUris: z.array(z.string()).optional(),
    postLogoutRedirectUris: z.array(z.string()).optional(),
    grantTypes: z.array(z.enum(GRANT_TYPES)).optional(),
    scope: z.string().optional(),
    loginMethods: z.array(z.enum(LOGIN_METHODS)).nullable().optional().describe("The client's own login methods; null follows the organization's"),
    allowedCorsOrigins: z.array(z.string()).optional(),
    skipConsent: z.boolean().optional(),
    pkce: z.enum(["inherit", "required", "not_required"]).optional(),
    accessTokenTtlSeconds: z.number().int().nullable().optional(),
    refreshTokenTtlSeconds: z.number().int().nullable().optional(),
    backchannelLogoutUri: z.string().nullable().optional(),
    backchannelLogoutSessionRequired: z.boolean().optional(),
    tokenExchangeAudiences: z.array(z.string()).optional(),
    initiateLoginUri: z.string().nullable().optional(),
    status: status.optional(),
  })
  .strict();

const claimMapping = z
  .object({ email: z.string(), emailVerified: z.string(), givenName: z.string(), familyName: z.string(), groups: z.string() })
  .partial()
  .strict();

export const IdentityProviderSchema = z
  .object({
    name,
    kind: z.enum(["oidc", "google", "microsoft", "github", "apple"]).describe("Fixed at creation (SAML connections are not managed by this file)"),
    issuer: z.string().optional().describe("oidc only: the upstream issuer"),
    tenantId: z.string().optional().describe("microsoft only: the Entra ID tenant"),
    clientId: z.string().optional(),
    clientSecret: FromEnvSchema.nullable().optional().describe("Set when the provider is created or has none; null removes it"),
    scopes: z.array(z.string()).optional(),
    claimMapping: claimMapping.optional(),
    domains: z.array(z.string()).optional(),
    enabled: z.boolean().optional(),
    createAccounts: z.boolean().optional(),
    trustUpstreamMfa: z.enum(["when_asserted", "always", "never"]).optional(),
    tokenEndpointAuthMethod: z.enum(["auto", "client_secret_basic", "client_secret_post", "private_key_jwt", "none"]).optional(),
    assumeVerifiedEmails: z.boolean().optional(),
    endpoints: z.object({ authorization: z.string(), token: z.string(), user: z.string(), emails: z.string() }).strict().nullable().optional().describe("github only"),
    teamId: z.string().nullable().optional().describe("apple only"),
    keyId: z.string().nullable().optional().describe("apple only"),
  })
  .strict();

export const WebhookSchema = z
  .object({
    url: z.string().min(1).describe("Names the webhook: one webhook per URL"),
    description: z.string().optional(),
    eventTypes: z.array(z.string()).optional(),
    enabled: z.boolean().optional(),
  })
  .strict();

export const BrandingSchema = z
  .object({
    displayName: z.string().nullable(),
    primaryColor: z.string().nullable(),
    backgroundColor: z.string().nullable(),
    textColor: z.string().nullable(),
    footerText: z.string().nullable(),
  })
  .partial()
  .strict()
  .describe("Branding settings (logo and favicon files are not managed by this file)");

export const OrganizationSchema = z
  .object({
    slug: z.string().min(1).describe("Names the organization"),
    name: z.string().min(1).optional(),
    defaultLoginMethods: z.array(z.enum(LOGIN_METHODS)).optional(),
    twoFactorPolicy: z.enum(TWO_FACTOR_POLICIES).optional(),
    defaultLocale: z.enum(["en", "de"]).optional(),
    oauth21: z.boolean().optional(),
    botChallenge: z.enum(["off", "suspicion", "always"]).optional().describe("Proof-of-work bot protection on the sign-in forms"),
    botChallengeCost: z.number().int().min(1_000).max(1_000_000).optional().describe("The proof of work's maxnumber: SHA-256 hashes a browser computes at most"),
    branding: BrandingSchema.optional(),
    permissions: z.array(PermissionSchema).superRefine(uniqueBy((p) => p.name, "permission")).optional(),
    roles: z.array(RoleSchema).superRefine(uniqueBy((r) => r.name, "role")).optional(),
    applications: z.array(ApplicationSchema).superRefine(uniqueBy((a) => a.name, "application")).optional(),
    clients: z.array(ClientSchema).superRefine(uniqueBy((c) => c.name, "client")).optional(),
    identityProviders: z.array(IdentityProviderSchema).superRefine(uniqueBy((p) => p.name, "identity provider")).optional(),
    webhooks: z.array(WebhookSchema).superRefine(uniqueBy((w) => w.url, "webhook URL")).optional(),
  })
  .strict();

export const CONFIG_VERSION = 1;

export const ConfigSchema = z
  .object({
    $schema: z.string().optional().describe("Where editors find this schema (ignored by porta)"),
    version: z.literal(CONFIG_VERSION).describe("The format's version"),
    organizations: z.array(OrganizationSchema).superRefine(uniqueBy((o) => o.slug, "organization")),
  })
  .strict()
  .describe("Porta configuration as code: `porta plan -f FILE`, `porta apply -f FILE [--prune]`, `porta export --org SLUG --format yaml`");

export type Config = z.infer<typeof ConfigSchema>;
export type OrganizationConfig = z.infer<typeof OrganizationSchema>;
export type PermissionConfig = z.infer<typeof PermissionSchema>;
export type RoleConfig = z.infer<typeof RoleSchema>;
export type ApplicationConfig = z.infer<typeof ApplicationSchema>;
export type ClaimConfig = z.infer<typeof ClaimSchema>;
export type ClientConfig = z.infer<typeof ClientSchema>;
export type IdentityProviderConfig = z.infer<typeof IdentityProviderSchema>;
export type WebhookConfig = z.infer<typeof WebhookSchema>;
export type BrandingConfig = z.infer<typeof BrandingSchema>;

/** The JSON Schema of the file, for editors (`# yaml-language-server: $schema=…`); committed as docs/porta-config.schema.json. */
export function configJsonSchema(): Record<string, unknown> {
  // Draft 7: the draft every YAML and JSON editor plugin reads (the schema needs nothing newer).
  const schema = z.toJSONSchema(ConfigSchema, { target: "draft-7", io: "input" }) as Record<string, unknown>;
  return { $schema: schema.$schema, title: "Porta configuration", ...schema };
}

/** The committed file's exact text. */
export const configJsonSchemaText = () => `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
