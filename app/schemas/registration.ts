import { z } from "zod";
import { CLIENT_GRANT_TYPE_VALUES } from "./client";
import { ClientMetadataDocumentPolicySchema } from "./client-metadata-document";

/**
 * Dynamic client registration (RFC 7591 / RFC 7592) per organization, decision 054: the
 * organization's policy, the initial access tokens administrators issue, and the client
 * metadata a registration request may carry.
 */
export const REGISTRATION_AUTH_METHOD_VALUES = ["none", "client_secret_basic", "client_secret_post", "private_key_jwt"] as const;
export type RegistrationAuthMethod = (typeof REGISTRATION_AUTH_METHOD_VALUES)[number];

const distinct = <T>(a: T[]) => new Set(a).size === a.length;

/** What an organization allows at its registration endpoint; every field has the safe default. */
export const RegistrationPolicySchema = z
  .object({
    /** Off by default: the endpoint answers 404 and discovery does not name it. */
    enabled: z.boolean().default(false),
    /** Open registration (false) lets anyone on the network create clients; only the rate limit bounds it. */
    requireInitialAccessToken: z.boolean().default(true),
    allowedGrantTypes: z
      .array(z.enum(CLIENT_GRANT_TYPE_VALUES))
      .min(1, "needs at least one grant type")
      .refine(distinct, "must not repeat a grant type")
      .default(["authorization_code", "refresh_token"]),
    allowedTokenEndpointAuthMethods: z
      .array(z.enum(REGISTRATION_AUTH_METHOD_VALUES))
      .min(1, "needs at least one method")
      .refine(distinct, "must not repeat a method")
      .default(["none", "client_secret_basic", "private_key_jwt"]),
    /** Clients whose client_id is the https URL of their metadata document; independent of `enabled`. */
    clientIdMetadataDocuments: ClientMetadataDocumentPolicySchema.default({ enabled: false, allowedDomains: [] }),
  })
  .strict();

export type RegistrationPolicy = z.infer<typeof RegistrationPolicySchema>;

/** The stored policy (an organization column); anything unreadable counts as registration off. */
export function registrationPolicyOf(stored: unknown): RegistrationPolicy {
  const parsed = RegistrationPolicySchema.safeParse(stored ?? {});
  return parsed.success ? parsed.data : RegistrationPolicySchema.parse({});
}

export const RegistrationTokenSchema = z.object({
  id: z.uuid(),
  organizationId: z.uuid(),
  hint: z.string(),
  label: z.string().nullable(),
  expiresAt: z.iso.datetime(),
  /** null: any number of registrations until it expires. */
  maxUses: z.number().int().nullable(),
  uses: z.number().int(),
  /** active, or why the token no longer registers clients. */
  status: z.enum(["active", "expired", "used_up", "revoked"]),
  createdAt: z.iso.datetime(),
  revokedAt: z.iso.datetime().nullable(),
});

/** The token's value is in this one response and never again (only its SHA-256 is kept). */
export const CreatedRegistrationTokenSchema = RegistrationTokenSchema.extend({ token: z.string() });

export const MAX_REGISTRATION_TOKEN_DAYS = 90;

export const RegistrationTokenCreateSchema = z
  .object({
    label: z.string().trim().min(1, "must not be empty").max(100, "must have at most 100 characters").optional(),
    /** Default one day; at most 90 days. */
    expiresInSeconds: z
      .number()
      .int("must be a whole number of seconds")
      .min(60, "must be at least 60 seconds")
      .max(MAX_REGISTRATION_TOKEN_DAYS * 86_400, `must be at most ${MAX_REGISTRATION_TOKEN_DAYS} days`)
      .default(86_400),
    maxUses: z.number().int("must be a whole number").min(1, "must be at least 1").max(100_000, "must be at most 100000").nullable().default(null),
  })
  .strict();

export type RegistrationToken = z.infer<typeof RegistrationTokenSchema>;
export type RegistrationTokenCreate = z.infer<typeof RegistrationTokenCreateSchema>;

const text = (max: number) => z.string().max(max, `must have at most ${max} characters`);
const list = (max: number, item: z.ZodString) => z.array(item).max(max, `must have at most ${max} entries`);

/**
 * The RFC 7591 §2 metadata Porta understands, as sent on the wire. Members it does not
 * understand are dropped (RFC 7591 §2: "MUST ignore"); the values' own rules (URLs, keys,
 * scopes) are the Admin API's client rules, applied when the request becomes a client.
 */
export const ClientMetadataSchema = z.object({
  redirect_uris: list(20, text(2000)).optional(),
  post_logout_redirect_uris: list(20, text(2000)).optional(),
  token_endpoint_auth_method: text(100).optional(),
  grant_types: list(10, text(200)).optional(),
  response_types: list(10, text(100)).optional(),
  client_name: text(200).optional(),
  scope: text(1000).optional(),
  application_type: text(20).optional(),
  jwks: z.unknown().optional(),
  jwks_uri: text(2000).optional(),
  software_statement: text(16_000).optional(),
  /** RFC 7592 §2.2: an update names the client it updates. */
  client_id: text(200).optional(),
});

export type ClientMetadata = z.infer<typeof ClientMetadataSchema>;
