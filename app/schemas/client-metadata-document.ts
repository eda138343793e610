import { z } from "zod";
import { ClientNameSchema, clientSettingsProblems, JwksUriSchema, UrisSchema } from "./client";
import { isRepresentableText } from "./text";

/**
 * Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document, as the MCP
 * authorization specification uses them): a client whose `client_id` is an https URL publishes
 * its metadata there. Porta fetches it (oidc/storage/client-metadata-documents.ts) when the
 * organization allows it, and uses the client as a public client (or private_key_jwt with a
 * `jwks_uri`): never with a secret, since anyone can read the document.
 */
export const MAX_CLIENT_ID_URL_LENGTH = 2000;

/**
 * A client_id that names a metadata document: https, a path other than "/", no fragment, no user
 * information, no dot segments, printable text. Anything else is an ordinary client id.
 */
export function parseMetadataDocumentClientId(clientId: string): URL | null {
  if (clientId.length > MAX_CLIENT_ID_URL_LENGTH || !clientId.startsWith("https://") || !isRepresentableText(clientId)) return null;
  if (!URL.canParse(clientId)) return null;
  const url = new URL(clientId);
  // The document's URL must be the client_id exactly as sent: a URL the parser rewrote is not.
  if (url.href !== clientId) return null;
  if (url.hash || url.username || url.password || url.pathname === "/" || /\/\.\.?(\/|$)/.test(url.pathname)) return null;
  return url;
}

/** The domain list of the organization's policy: lower-case host names; "*.example.com" allows subdomains. */
const DomainSchema = z
  .string()
  .max(253, "must have at most 253 characters")
  .regex(/^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, "must be a lower-case domain name, optionally starting with *.");

export const ClientMetadataDocumentPolicySchema = z
  .object({
    /** Off by default: an https client_id is then an unknown client like any other. */
    enabled: z.boolean().default(false),
    /** Empty: documents from any public host; else only from these domains. */
    allowedDomains: z
      .array(DomainSchema)
      .max(100, "must have at most 100 entries")
      .refine((a) => new Set(a).size === a.length, "must not repeat a domain")
      .default([]),
  })
  .strict();

export type ClientMetadataDocumentPolicy = z.infer<typeof ClientMetadataDocumentPolicySchema>;

export function isAllowedDocumentHost(policy: ClientMetadataDocumentPolicy, hostname: string): boolean {
  if (policy.allowedDomains.length === 0) return true;
  return policy.allowedDomains.some((domain) => (domain.startsWith("*.") ? hostname.endsWith(domain.slice(1)) : hostname === domain));
}

/** What a document may carry for Porta; members it does not understand are ignored. */
const DocumentSchema = z.object({
  client_id: z.string(),
  client_name: ClientNameSchema.optional(),
  client_uri: z.string().max(2000).optional(),
  logo_uri: z.string().max(2000).optional(),
  redirect_uris: UrisSchema.refine((a) => a.length > 0, "needs at least one URI"),
  post_logout_redirect_uris: UrisSchema.optional(),
  grant_types: z
    .array(z.enum(["authorization_code", "refresh_token"]))
    .min(1)
    .max(2)
    .default(["authorization_code"]),
  response_types: z.array(z.literal("code")).max(1).optional(),
  token_endpoint_auth_method: z.enum(["none", "private_key_jwt"]).default("none"),
  jwks_uri: JwksUriSchema.optional(),
  application_type: z.enum(["web", "native"]).default("web"),
  scope: z.string().max(1000).optional(),
});

export interface ClientMetadataDocument {
  clientId: string;
  /** The document's own name, if it gives one. */
  name: string | null;
  /** Where the document came from: what the consent page always shows. */
  domain: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  grantTypes: Array<"authorization_code" | "refresh_token">;
  tokenEndpointAuthMethod: "none" | "private_key_jwt";
  jwksUri: string | null;
  applicationType: "web" | "native";
}

export type DocumentProblem = { ok: false; problem: string };

/** Checks a fetched document against the URL it came from; a problem names the first thing wrong. */
export function readClientMetadataDocument(url: URL, json: unknown): { ok: true; document: ClientMetadataDocument } | DocumentProblem {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return { ok: false, problem: "the document is not a JSON object" };
  // Secrets in a public document are never used, and a document that carries one is refused.
  for (const secret of ["client_secret", "client_secret_expires_at"]) {
    if (Object.hasOwn(json, secret)) return { ok: false, problem: `the document must not carry ${secret}` };
  }
  const parsed = DocumentSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { ok: false, problem: `${issue.path.join(".") || "document"}: ${issue.message}` };
  }
  const doc = parsed.data;
  if (doc.client_id !== url.href) return { ok: false, problem: "client_id differs from the document's URL" };
  if (doc.token_endpoint_auth_method === "private_key_jwt" && !doc.jwks_uri) return { ok: false, problem: "private_key_jwt needs a jwks_uri" };
  const settings = clientSettingsProblems({
    clientType: doc.token_endpoint_auth_method === "none" ? "public" : "confidential",
    tokenEndpointAuthMethod: doc.token_endpoint_auth_method,
    hasJwksUri: Boolean(doc.jwks_uri),
    applicationType: doc.application_type,
    redirectUris: doc.redirect_uris,
    postLogoutRedirectUris: doc.post_logout_redirect_uris ?? [],
    grantTypes: doc.grant_types.includes("authorization_code") ? doc.grant_types : ["authorization_code", ...doc.grant_types],
    scope: "openid",
    skipConsent: false,
  });
  if (settings.length > 0) return { ok: false, problem: `${settings[0]!.field}: ${settings[0]!.message}` };
  return {
    ok: true,
    document: {
      clientId: url.href,
      name: doc.client_name ?? null,
      domain: url.hostname,
      redirectUris: doc.redirect_uris,
      postLogoutRedirectUris: doc.post_logout_redirect_uris ?? [],
      grantTypes: doc.grant_types.includes("authorization_code") ? doc.grant_types : ["authorization_code", ...doc.grant_types],
      tokenEndpointAuthMethod: doc.token_endpoint_auth_method,
      jwksUri: doc.jwks_uri ?? null,
      applicationType: doc.application_type,
    },
  };
}
