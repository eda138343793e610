import { z } from "zod";
import { UuidSchema } from "~/schemas/uuid";
import { LOGIN_METHODS } from "./login-methods";
import { LoginMethodsSchema } from "./organization";

/** Client shapes shared by the Admin API, its OpenAPI document and the console. */
export const CLIENT_TYPE_VALUES = ["confidential", "public"] as const;
export const CLIENT_APPLICATION_TYPE_VALUES = ["web", "native"] as const;
/** RFC 8628: a client on a device without a browser (a CLI, a TV) asks the person to enter a code elsewhere. */
export const DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
/**
 * RFC 8693 token exchange. Not one of a client's grant types to choose: a confidential client
 * that has token exchange audiences (`tokenExchangeAudiences`) has it (decision 053).
 */
export const TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
export const CLIENT_GRANT_TYPE_VALUES = ["authorization_code", "refresh_token", "client_credentials", DEVICE_CODE_GRANT] as const;
export const CLIENT_STATUS_VALUES = ["active", "inactive"] as const;
/**
 * Whether the client must send PKCE (S256) with an authorization request (decision 073):
 * `inherit` follows the organization's OAuth 2.1 mode, `required` always, `not_required` never
 * for a confidential client. A public client always sends it, whatever this says.
 */
export const CLIENT_PKCE_VALUES = ["inherit", "required", "not_required"] as const;
export type ClientPkce = (typeof CLIENT_PKCE_VALUES)[number];
export const SECRET_STATUS_VALUES = ["active", "revoked"] as const;

export type ClientType = (typeof CLIENT_TYPE_VALUES)[number];
/** How a confidential client proves itself at the token endpoint; a public client uses `none`. */
export const CONFIDENTIAL_AUTH_METHOD_VALUES = ["client_secret_basic", "client_secret_post", "private_key_jwt"] as const;
export type ConfidentialAuthMethod = (typeof CONFIDENTIAL_AUTH_METHOD_VALUES)[number];

/** The client's token endpoint authentication follows from its type, unless a confidential client names one. */
export const authMethodOf = (type: ClientType, chosen?: ConfidentialAuthMethod) => (type === "confidential" ? (chosen ?? "client_secret_basic") : "none");
/** Whether the method presents one of the client's secrets (the others sign with a key, or nothing). */
export const usesSecret = (tokenEndpointAuthMethod: string) => tokenEndpointAuthMethod === "client_secret_basic" || tokenEndpointAuthMethod === "client_secret_post";
export const clientTypeOf = (tokenEndpointAuthMethod: string): ClientType => (tokenEndpointAuthMethod === "none" ? "public" : "confidential");

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);
const FORBIDDEN_SCHEMES = new Set(["javascript:", "vbscript:", "data:", "blob:", "file:", "about:"]);
const MAX_URIS = 20;

const UriSchema = z
  .string()
  .max(2000, "must have at most 2000 characters")
  .refine((value) => URL.canParse(value), "must be an absolute URL")
  .refine((value) => !value.includes("#"), "must not contain a fragment")
  .refine((value) => !URL.canParse(value) || !FORBIDDEN_SCHEMES.has(new URL(value).protocol), "uses a forbidden URL scheme");

export const UrisSchema = z
  .array(UriSchema)
  .max(MAX_URIS, `must have at most ${MAX_URIS} entries`)
  .refine((a) => new Set(a).size === a.length, "must not repeat a URI");

const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]{1,100}$/;

/** One scope token (RFC 6749 §3.3: printable ASCII without space, `"` and `\`), at most 100 characters. */
export const isScopeToken = (value: string) => SCOPE_TOKEN.test(value);

/** Space-separated scope tokens (RFC 6749 §3.3), normalized to single spaces, without repeats. */
export const ScopeSchema = z
  .string()
  .max(1000, "must have at most 1000 characters")
  .transform((value) => value.trim().split(/\s+/).filter(Boolean))
  .refine((tokens) => tokens.length > 0, "must name at least one scope")
  .refine((tokens) => tokens.every((t) => SCOPE_TOKEN.test(t)), "must be space-separated scope tokens")
  .refine((tokens) => new Set(tokens).size === tokens.length, "must not repeat a scope")
  .transform((tokens) => tokens.join(" "));

export const GrantTypesSchema = z
  .array(z.enum(CLIENT_GRANT_TYPE_VALUES))
  .min(1, "needs at least one grant type")
  .max(CLIENT_GRANT_TYPE_VALUES.length)
  .refine((a) => new Set(a).size === a.length, "must not repeat a grant type");

/**
 * A browser origin allowed to call the token endpoints (CORS): scheme, host and port, nothing
 * more, as a browser sends it in the Origin header; https, or http for a loopback host.
 */
const OriginSchema = z
  .string()
  .max(2000, "must have at most 2000 characters")
  .refine((value) => URL.canParse(value) && ["https:", "http:"].includes(new URL(value).protocol) && new URL(value).origin === value, "must be an origin such as https://app.example.com (no path, no trailing slash)")
  .refine((value) => !URL.canParse(value) || new URL(value).protocol === "https:" || LOOPBACK_HOSTS.has(new URL(value).hostname), "must use https (http only for localhost)");

export const CorsOriginsSchema = z
  .array(OriginSchema)
  .max(MAX_URIS, `must have at most ${MAX_URIS} entries`)
  .refine((a) => new Set(a).size === a.length, "must not repeat an origin");

/**
 * A client's own token lifetimes (decision 036), in seconds. The access token's bounds are the
 * organization setting's; a refresh token cannot outlive the grant it belongs to (14 days).
 */
export const ACCESS_TOKEN_TTL_BOUNDS = { min: 60, max: 86_400 } as const;
export const REFRESH_TOKEN_TTL_BOUNDS = { min: 60, max: 14 * 24 * 3600 } as const;

const lifetime = (bounds: { min: number; max: number }) =>
  z
    .number({ message: "must be a number of seconds" })
    .int("must be a whole number of seconds")
    .min(bounds.min, `must be at least ${bounds.min} seconds`)
    .max(bounds.max, `must be at most ${bounds.max} seconds`);

export const AccessTokenTtlSchema = lifetime(ACCESS_TOKEN_TTL_BOUNDS);
export const RefreshTokenTtlSchema = lifetime(REFRESH_TOKEN_TTL_BOUNDS);

/**
 * A client's public signing keys (decision 045): for `private_key_jwt` and signed request objects.
 * ES256 is the product's one algorithm, so each key is a P-256 EC public key; a private part is
 * refused, never stored.
 */
const B64URL_COORDINATE = /^[A-Za-z0-9_-]{43}$/;
export const MAX_CLIENT_KEYS = 5;

const PublicJwkSchema = z
  .object({
    kty: z.literal("EC", { message: "must be EC (P-256 keys for ES256)" }),
    crv: z.literal("P-256", { message: "must be P-256 (ES256)" }),
    x: z.string().regex(B64URL_COORDINATE, "must be the 32-byte x coordinate in base64url"),
    y: z.string().regex(B64URL_COORDINATE, "must be the 32-byte y coordinate in base64url"),
    kid: z.string().min(1, "must not be empty").max(100, "must have at most 100 characters").optional(),
    use: z.literal("sig", { message: "must be sig" }).optional(),
    alg: z.literal("ES256", { message: "must be ES256" }).optional(),
    d: z.never({ message: "must not be sent: register the public key only (this one holds its private part)" }).optional(),
  })
  .strict();

export const JwksSchema = z
  .object({ keys: z.array(PublicJwkSchema).min(1, "needs at least one key").max(MAX_CLIENT_KEYS, `must have at most ${MAX_CLIENT_KEYS} keys`) })
  .strict()
  .refine((jwks) => new Set(jwks.keys.map((k) => k.kid ?? `${k.x}.${k.y}`)).size === jwks.keys.length, "must not repeat a key or a kid");

/** Where the client publishes its keys: fetched by Porta with a timeout, a size limit and no private addresses. */
export const JwksUriSchema = z
  .string()
  .max(2000, "must have at most 2000 characters")
  .refine((value) => URL.canParse(value) && ["https:", "http:"].includes(new URL(value).protocol), "must be an absolute https URL")
  .refine((value) => !URL.canParse(value) || new URL(value).protocol === "https:" || LOOPBACK_HOSTS.has(new URL(value).hostname), "must use https (http only for localhost)")
  .refine((value) => !value.includes("#"), "must not contain a fragment");

export type Jwks = z.infer<typeof JwksSchema>;

/**
 * Where Porta POSTs logout tokens for the client (OpenID Back-Channel Logout 1.0 §2.2): an
 * absolute https URL (http only for localhost), no fragment. Reached through the outbound guard
 * (no private addresses unless an operator allows them).
 */
export const BackchannelLogoutUriSchema = z
  .string()
  .max(2000, "must have at most 2000 characters")
  .refine((value) => URL.canParse(value) && ["https:", "http:"].includes(new URL(value).protocol), "must be an absolute https URL")
  .refine((value) => !URL.canParse(value) || new URL(value).protocol === "https:" || LOOPBACK_HOSTS.has(new URL(value).hostname), "must use https (http only for localhost)")
  .refine((value) => !value.includes("#"), "must not contain a fragment");

/**
 * OpenID Connect third-party initiated login: the application's address that starts its own
 * authorization request (it owns state, nonce and PKCE). The same rule as a logout endpoint.
 */
export const InitiateLoginUriSchema = BackchannelLogoutUriSchema;

/**
 * The audiences a client may exchange a person's access token for (RFC 8693 `audience` or
 * `resource`): absolute URIs naming the services that accept the exchanged token.
 */
export const MAX_TOKEN_EXCHANGE_AUDIENCES = 20;
export const TokenExchangeAudiencesSchema = z
  .array(
    z
      .string()
      .max(2000, "must have at most 2000 characters")
      .refine((value) => URL.canParse(value) && /^[a-z][a-z0-9+.-]*:/i.test(value) && !/\s/.test(value), "must be an absolute URI such as https://api.example.com")
      .refine((value) => !value.includes("#"), "must not contain a fragment"),
  )
  .max(MAX_TOKEN_EXCHANGE_AUDIENCES, `must have at most ${MAX_TOKEN_EXCHANGE_AUDIENCES} entries`)
  .refine((a) => new Set(a).size === a.length, "must not repeat an audience");

/** What a new client may ask for unless it says otherwise. */
export const DEFAULT_CLIENT_SCOPE = "openid profile email offline_access";

export const ClientNameSchema = z.string().trim().min(1, "must not be empty").max(200, "must have at most 200 characters");

export const ClientSchema = z.object({
  id: z.string(),
  organizationId: z.uuid(),
  applicationId: z.uuid().nullable(),
  name: z.string(),
  clientType: z.enum(CLIENT_TYPE_VALUES),
  applicationType: z.enum(CLIENT_APPLICATION_TYPE_VALUES),
  tokenEndpointAuthMethod: z.string(),
  /** The client's public keys (private_key_jwt, signed request objects); null when it has none here. */
  jwks: JwksSchema.nullable(),
  /** Where the client publishes its keys instead; null when not used. */
  jwksUri: z.string().nullable(),
  redirectUris: z.array(z.string()),
  postLogoutRedirectUris: z.array(z.string()),
  grantTypes: z.array(z.enum(CLIENT_GRANT_TYPE_VALUES)),
  scope: z.string(),
  /** The client's override; null when the client inherits the organization's defaultLoginMethods. */
  loginMethods: z.array(z.enum(LOGIN_METHODS)).nullable(),
  effectiveLoginMethods: z.array(z.enum(LOGIN_METHODS)),
  /** May obtain access tokens for the Admin API (clients of the super-admin organization only). */
  adminApiAccess: z.boolean(),
  /** Browser origins allowed to call the token endpoints, beyond those of the redirect URIs. */
  allowedCorsOrigins: z.array(z.string()),
  /** First party: the provider grants what the client asks for without asking the user. */
  skipConsent: z.boolean(),
  /** PKCE of authorization requests: inherit (the organization's OAuth 2.1 mode), required, or not_required (confidential clients only). */
  pkce: z.enum(CLIENT_PKCE_VALUES),
  /** Seconds; null when the organization's default applies. */
  accessTokenTtlSeconds: z.number().int().nullable(),
  /** Seconds; null when the default (14 days) applies. */
  refreshTokenTtlSeconds: z.number().int().nullable(),
  /** Where Porta POSTs a logout token when one of the client's sessions ends; null: none sent. */
  backchannelLogoutUri: z.string().nullable(),
  /** Each logout token names the session (sid), not only the user. */
  backchannelLogoutSessionRequired: z.boolean(),
  /** Audiences the client may exchange a person's access token for (RFC 8693); empty: none. */
  tokenExchangeAudiences: z.array(z.string()),
  /** Where the application starts its own sign-in (`initiate_login_uri`); null: none known. */
  initiateLoginUri: z.string().nullable(),
  status: z.enum(CLIENT_STATUS_VALUES),
  /** The client registered itself at the organization's registration endpoint (RFC 7591, decision 054). */
  dynamicallyRegistered: z.boolean(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});

/** A newly generated secret: its value appears in this one response and never again. */
export const NewSecretSchema = z.object({ id: z.uuid(), value: z.string(), hint: z.string() });

export const CreatedClientSchema = ClientSchema.extend({ secret: NewSecretSchema.optional() });

export const ClientCreateSchema = z
  .object({
    organizationId: UuidSchema,
    applicationId: UuidSchema.nullable().optional(),
    name: ClientNameSchema,
    clientType: z.enum(CLIENT_TYPE_VALUES),
    /** Confidential clients only; default client_secret_basic. private_key_jwt needs jwks or jwksUri and gets no secret. */
    tokenEndpointAuthMethod: z.enum(CONFIDENTIAL_AUTH_METHOD_VALUES).optional(),
    jwks: JwksSchema.nullable().default(null),
    jwksUri: JwksUriSchema.nullable().default(null),
    applicationType: z.enum(CLIENT_APPLICATION_TYPE_VALUES).default("web"),
    redirectUris: UrisSchema.default([]),
    postLogoutRedirectUris: UrisSchema.default([]),
    grantTypes: GrantTypesSchema.default(["authorization_code", "refresh_token"]),
    scope: ScopeSchema.default(DEFAULT_CLIENT_SCOPE),
    loginMethods: LoginMethodsSchema.optional(),
    adminApiAccess: z.boolean().default(false),
    allowedCorsOrigins: CorsOriginsSchema.default([]),
    skipConsent: z.boolean().default(false),
    /** not_required: confidential clients only. */
    pkce: z.enum(CLIENT_PKCE_VALUES).default("inherit"),
    accessTokenTtlSeconds: AccessTokenTtlSchema.nullable().default(null),
    refreshTokenTtlSeconds: RefreshTokenTtlSchema.nullable().default(null),
    backchannelLogoutUri: BackchannelLogoutUriSchema.nullable().default(null),
    backchannelLogoutSessionRequired: z.boolean().default(false),
    /** Confidential clients only. */
    tokenExchangeAudiences: TokenExchangeAudiencesSchema.default([]),
    initiateLoginUri: InitiateLoginUriSchema.nullable().default(null),
  })
  .strict();

export const ClientUpdateSchema = z
  .object({
    applicationId: UuidSchema.nullable().optional(),
    name: ClientNameSchema.optional(),
    /** Confidential clients only. */
    tokenEndpointAuthMethod: z.enum(CONFIDENTIAL_AUTH_METHOD_VALUES).optional(),
    /** null removes the keys. */
    jwks: JwksSchema.nullable().optional(),
    /** null removes the URI. */
    jwksUri: JwksUriSchema.nullable().optional(),
    applicationType: z.enum(CLIENT_APPLICATION_TYPE_VALUES).optional(),
    redirectUris: UrisSchema.optional(),
    postLogoutRedirectUris: UrisSchema.optional(),
    grantTypes: GrantTypesSchema.optional(),
    scope: ScopeSchema.optional(),
    /** null clears the override (the client inherits the organization's default). */
    loginMethods: LoginMethodsSchema.nullable().optional(),
    adminApiAccess: z.boolean().optional(),
    allowedCorsOrigins: CorsOriginsSchema.optional(),
    skipConsent: z.boolean().optional(),
    /** not_required: confidential clients only. */
    pkce: z.enum(CLIENT_PKCE_VALUES).optional(),
    /** null goes back to the organization's default. */
    accessTokenTtlSeconds: AccessTokenTtlSchema.nullable().optional(),
    /** null goes back to the default. */
    refreshTokenTtlSeconds: RefreshTokenTtlSchema.nullable().optional(),
    /** null stops logout tokens to the client. */
    backchannelLogoutUri: BackchannelLogoutUriSchema.nullable().optional(),
    backchannelLogoutSessionRequired: z.boolean().optional(),
    /** Confidential clients only; [] turns token exchange off. */
    tokenExchangeAudiences: TokenExchangeAudiencesSchema.optional(),
    /** null: the application has no sign-in start Porta may send people to. */
    initiateLoginUri: InitiateLoginUriSchema.nullable().optional(),
  })
  .strict();

export const LoginMethodsBodySchema = z.object({ loginMethods: LoginMethodsSchema }).strict();

export const ClientSecretSchema = z.object({
  id: z.uuid(),
  hint: z.string(),
  label: z.string().nullable(),
  status: z.enum(SECRET_STATUS_VALUES),
  createdAt: z.iso.datetime(),
  expiresAt: z.iso.datetime().nullable(),
  revokedAt: z.iso.datetime().nullable(),
});

export const SecretCreateSchema = z
  .object({
    label: z.string().trim().min(1, "must not be empty").max(100, "must have at most 100 characters").optional(),
    expiresAt: z.iso
      .datetime({ offset: true, message: "must be an ISO 8601 date-time" })
      .refine((value) => Date.parse(value) > Date.now(), "must lie in the future")
      .optional(),
  })
  .strict()
  .optional();

export type Client = z.infer<typeof ClientSchema>;
export type ClientCreate = z.infer<typeof ClientCreateSchema>;
export type ClientUpdate = z.infer<typeof ClientUpdateSchema>;
export type ClientSecret = z.infer<typeof ClientSecretSchema>;
export type SecretCreate = z.infer<typeof SecretCreateSchema>;

/** The settings whose combination must make sense, whatever the request changed. */
export interface ClientSettings {
  clientType: ClientType;
  tokenEndpointAuthMethod?: string | undefined;
  hasJwks?: boolean;
  hasJwksUri?: boolean;
  applicationType: "web" | "native";
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  grantTypes: string[];
  scope: string;
  skipConsent: boolean;
  pkce?: ClientPkce;
  tokenExchangeAudiences?: string[];
}

function uriProblem(uri: string, applicationType: "web" | "native"): string | undefined {
  const { protocol, hostname } = new URL(uri);
  const loopback = LOOPBACK_HOSTS.has(hostname);
  if (applicationType === "web") {
    if (protocol === "https:") return undefined;
    if (protocol === "http:" && loopback) return undefined;
    return "must use https (http only for localhost) in a web client";
  }
  if (protocol === "http:" && !loopback) return "may use http only with a loopback host (localhost, 127.0.0.1, [::1]) in a native client";
  if (protocol === "https:" && loopback) return "must not use https with a loopback host in a native client";
  return undefined;
}

/**
 * The rules that tie a client's fields together (they hold for the stored client after every
 * create and update, so the OIDC layer never meets metadata it would refuse).
 */
export function clientSettingsProblems(client: ClientSettings): Array<{ field: string; message: string }> {
  const problems: Array<{ field: string; message: string }> = [];
  const codeFlow = client.grantTypes.includes("authorization_code");
  for (const field of ["redirectUris", "postLogoutRedirectUris"] as const) {
    client[field].forEach((uri, index) => {
      const problem = uriProblem(uri, client.applicationType);
      if (problem) problems.push({ field: `${field}.${index}`, message: problem });
    });
  }
  if (codeFlow && client.redirectUris.length === 0) problems.push({ field: "redirectUris", message: "needs at least one URI for authorization_code" });
  const deviceFlow = client.grantTypes.includes(DEVICE_CODE_GRANT);
  if (client.grantTypes.includes("refresh_token") && !codeFlow && !deviceFlow) problems.push({ field: "grantTypes", message: "refresh_token needs authorization_code or the device code grant" });
  if (deviceFlow && !client.scope.split(" ").includes("openid")) problems.push({ field: "scope", message: "must include openid for the device code grant" });
  if (client.grantTypes.includes("client_credentials") && client.clientType === "public") {
    problems.push({ field: "grantTypes", message: "client_credentials needs a confidential client" });
  }
  if (client.clientType === "public" && client.tokenEndpointAuthMethod !== undefined && client.tokenEndpointAuthMethod !== "none") {
    problems.push({ field: "tokenEndpointAuthMethod", message: "is for confidential clients; a public client authenticates with none" });
  }
  // A public client has no secret to bind the code to its holder: PKCE is what does (RFC 9700 §2.1.1).
  if (client.pkce === "not_required" && client.clientType === "public") {
    problems.push({ field: "pkce", message: "not_required is only possible for a confidential client: a public client always sends PKCE" });
  }
  if ((client.tokenExchangeAudiences?.length ?? 0) > 0 && client.clientType === "public") {
    problems.push({ field: "tokenExchangeAudiences", message: "token exchange needs a confidential client" });
  }
  if (client.hasJwks && client.hasJwksUri) problems.push({ field: "jwksUri", message: "must not be set together with jwks: use one of them" });
  if (client.tokenEndpointAuthMethod === "private_key_jwt" && !client.hasJwks && !client.hasJwksUri) {
    problems.push({ field: "jwks", message: "needs jwks or jwksUri for private_key_jwt" });
  }
  if (codeFlow && !client.scope.split(" ").includes("openid")) problems.push({ field: "scope", message: "must include openid for authorization_code" });
  // RFC 8252 §8.6: another app on the device can claim a native client's redirect URI, so the
  // provider asks the user at every authorization of a native client (decision 036).
  if (client.skipConsent && client.applicationType === "native") problems.push({ field: "skipConsent", message: "is not possible for a native client: the user is always asked" });
  return problems;
}
