import { randomBytes } from "node:crypto";
import type { z } from "zod";
import type { Client as ClientRow } from "~/generated/prisma/client";
import { CLIENT_GRANT_TYPE_VALUES, ClientCreateSchema, ClientUpdateSchema, type ClientCreate, type ClientUpdate } from "~/schemas/client";
import {
  ClientMetadataSchema,
  REGISTRATION_AUTH_METHOD_VALUES,
  registrationPolicyOf,
  type ClientMetadata,
  type RegistrationPolicy,
} from "~/schemas/registration";
import { findUnrepresentable } from "~/schemas/text";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "~/schemas/json-depth";
import { createClient, deleteClient, requireClient, updateClient } from "../admin/clients/service";
import type { Context, StagedContext } from "../context";
import { hashClientSecret } from "../directory/clients";
import { AppError } from "../errors";

/**
 * The registration endpoint of an organization (RFC 7591) and its client configuration endpoint
 * (RFC 7592), decision 054. Porta's own endpoint, not oidc-provider's registration feature: a
 * registered client is made by the same clients service as the Admin API's (so it meets the same
 * rules and is an ordinary client of the console), with its audit entry in the same transaction.
 */

type RegistrationErrorCode = "invalid_client_metadata" | "invalid_redirect_uri" | "invalid_software_statement" | "invalid_token" | "not_found";

/** An RFC 7591 §3.2.2 / RFC 6750 §3.1 error, as the wire shows it: `error` is the code, `error_description` the message. */
export class RegistrationError extends AppError {
  declare readonly status: 400 | 401 | 404 | 413;
  declare readonly code: RegistrationErrorCode;

  constructor(status: 400 | 401 | 404 | 413, error: RegistrationErrorCode, description: string, headers?: Record<string, string>) {
    super(status, error, description, undefined, headers);
    this.name = "RegistrationError";
  }

  get error(): RegistrationErrorCode {
    return this.code;
  }

  get description(): string {
    return this.message;
  }
}

const notEnabled = () => new RegistrationError(404, "not_found", "This organization does not offer client registration.");
const invalidToken = (description: string) => new RegistrationError(401, "invalid_token", description);
const invalidMetadata = (description: string) => new RegistrationError(400, "invalid_client_metadata", description);
const invalidRedirect = (description: string) => new RegistrationError(400, "invalid_redirect_uri", description);

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const DEFAULT_CLIENT_NAME = "Registered client";

/** The wire names of the Admin API's client fields, for error descriptions a registering client understands. */
const WIRE_NAMES: Record<string, string> = {
  name: "client_name",
  redirectUris: "redirect_uris",
  postLogoutRedirectUris: "post_logout_redirect_uris",
  grantTypes: "grant_types",
  scope: "scope",
  tokenEndpointAuthMethod: "token_endpoint_auth_method",
  jwks: "jwks",
  jwksUri: "jwks_uri",
  applicationType: "application_type",
};

/** A problem the clients service found, as RFC 7591 §3.2.2 names it. */
function errorOfProblem(field: string, message: string): RegistrationError {
  const [head, ...rest] = field.split(".");
  const wire = [WIRE_NAMES[head ?? ""] ?? head, ...rest].join(".");
  return head === "redirectUris" ? invalidRedirect(`${wire} ${message}`) : invalidMetadata(`${wire} ${message}`);
}

function errorOfIssues(issues: z.core.$ZodIssue[]): RegistrationError {
  const issue = issues[0]!;
  return errorOfProblem(issue.path.map(String).join("."), issue.message);
}

/**
 * The policy's redirect URI rules, stricter than an administrator's: https, or http at a loopback
 * host for native apps and agents on the user's machine (RFC 8252 §7.3); no wildcard, no
 * fragment, no custom scheme.
 */
function redirectUriProblem(uri: string): string | undefined {
  if (!URL.canParse(uri)) return "must be an absolute URL";
  if (uri.includes("#")) return "must not contain a fragment";
  if (uri.includes("*")) return "must not contain a wildcard";
  const { protocol, hostname } = new URL(uri);
  if (protocol === "https:") return undefined;
  if (protocol === "http:" && LOOPBACK_HOSTS.has(hostname)) return undefined;
  return "must use https (http only for localhost, 127.0.0.1 or [::1])";
}

/** The request's metadata checked against the organization's policy, as the Admin API's client fields. */
function clientFieldsOf(metadata: ClientMetadata, policy: RegistrationPolicy) {
  const grantTypes = metadata.grant_types ?? ["authorization_code"];
  for (const grant of grantTypes) {
    if (!(CLIENT_GRANT_TYPE_VALUES as readonly string[]).includes(grant)) throw invalidMetadata(`grant_types: ${grant} is not supported`);
    if (!(policy.allowedGrantTypes as string[]).includes(grant)) throw invalidMetadata(`grant_types: ${grant} is not allowed for registered clients`);
  }
  const codeFlow = grantTypes.includes("authorization_code");
  const responseTypes = metadata.response_types ?? (codeFlow ? ["code"] : []);
  if (responseTypes.some((type) => type !== "code")) throw invalidMetadata("response_types: only code is supported");
  if (responseTypes.includes("code") !== codeFlow) throw invalidMetadata("response_types must be code exactly when grant_types has authorization_code");
  const authMethod = metadata.token_endpoint_auth_method ?? "client_secret_basic";
  if (!(REGISTRATION_AUTH_METHOD_VALUES as readonly string[]).includes(authMethod)) throw invalidMetadata(`token_endpoint_auth_method: ${authMethod} is not supported`);
  if (!(policy.allowedTokenEndpointAuthMethods as string[]).includes(authMethod)) {
    throw invalidMetadata(`token_endpoint_auth_method: ${authMethod} is not allowed for registered clients`);
  }
  const redirectUris = metadata.redirect_uris ?? [];
  redirectUris.forEach((uri, index) => {
    const problem = redirectUriProblem(uri);
    if (problem) throw invalidRedirect(`redirect_uris.${index} ${problem}`);
  });
  if (codeFlow && redirectUris.length === 0) throw invalidRedirect("redirect_uris is required for authorization_code");
  (metadata.post_logout_redirect_uris ?? []).forEach((uri, index) => {
    const problem = redirectUriProblem(uri);
    if (problem) throw invalidMetadata(`post_logout_redirect_uris.${index} ${problem}`);
  });
  const applicationType = metadata.application_type ?? "web";
  if (applicationType !== "web" && applicationType !== "native") throw invalidMetadata("application_type must be web or native");
  // Accepted unverified and ignored (decision 054): nothing in it is trusted or used.
  if (metadata.software_statement !== undefined && !COMPACT_JWS.test(metadata.software_statement)) {
    throw new RegistrationError(400, "invalid_software_statement", "software_statement must be a signed JWT");
  }
  return {
    name: metadata.client_name?.trim() || DEFAULT_CLIENT_NAME,
    clientType: authMethod === "none" ? ("public" as const) : ("confidential" as const),
    ...(authMethod === "none" ? {} : { tokenEndpointAuthMethod: authMethod }),
    jwks: metadata.jwks ?? null,
    jwksUri: metadata.jwks_uri ?? null,
    applicationType,
    redirectUris,
    postLogoutRedirectUris: metadata.post_logout_redirect_uris ?? [],
    grantTypes,
    ...(metadata.scope !== undefined ? { scope: metadata.scope } : {}),
  };
}

function parseMetadata(body: unknown): ClientMetadata {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw invalidMetadata("The request body must be a JSON object of client metadata.");
  if (nestsDeeperThan(body)) throw invalidMetadata(`The request body nests arrays or objects more than ${MAX_JSON_DEPTH} levels deep.`);
  const bad = findUnrepresentable(body as Record<string, unknown>);
  if (bad !== undefined) throw invalidMetadata(`${bad.split(".")[0]} contains a character that is not allowed`);
  const parsed = ClientMetadataSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw invalidMetadata(`${issue.path.map(String).join(".")} ${issue.message}`.trim());
  }
  return parsed.data;
}

/** Problems the clients service finds (URLs, keys, scopes) become the registration's own errors. */
async function asRegistration<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AppError && error.status === 422 && error.details?.[0]) throw errorOfProblem(error.details[0].field, error.details[0].message);
    throw error;
  }
}

export interface RegistrationTarget {
  organizationId: string;
  issuer: string;
  policy: RegistrationPolicy;
}

/** The organization behind /{slug}/register, when it is active and has registration on. */
async function requireTarget(ctx: Context<"config">, slug: string): Promise<RegistrationTarget> {
  const lower = slug.toLowerCase();
  if (lower === ctx.config.superAdminSlug) throw notEnabled();
  const org = await ctx.db.organization.findUnique({ where: { slug: lower }, select: { id: true, slug: true, status: true, registrationPolicy: true } });
  if (!org || org.status !== "active") throw notEnabled();
  const policy = registrationPolicyOf(org.registrationPolicy);
  if (!policy.enabled) throw notEnabled();
  return { organizationId: org.id, issuer: `${ctx.config.baseUrl}/${org.slug}`, policy };
}

const mintToken = () => randomBytes(32).toString("base64url");

/** RFC 7591 §3.2.1 / RFC 7592 §3: the client's registered metadata. */
function clientInformation(row: ClientRow, issuer: string, extra: { clientSecret?: string; registrationAccessToken?: string } = {}) {
  return {
    client_id: row.id,
    client_id_issued_at: Math.floor(row.createdAt.getTime() / 1000),
    ...(extra.clientSecret ? { client_secret: extra.clientSecret, client_secret_expires_at: 0 } : {}),
    client_name: row.name,
    redirect_uris: row.redirectUris,
    post_logout_redirect_uris: row.postLogoutRedirectUris,
    grant_types: row.grantTypes,
    response_types: row.grantTypes.includes("authorization_code") ? ["code"] : [],
    token_endpoint_auth_method: row.tokenEndpointAuthMethod,
    application_type: row.applicationType,
    scope: row.scope,
    ...(row.jwks ? { jwks: row.jwks } : {}),
    ...(row.jwksUri ? { jwks_uri: row.jwksUri } : {}),
    ...(extra.registrationAccessToken ? { registration_access_token: extra.registrationAccessToken } : {}),
    registration_client_uri: `${issuer}/register/${encodeURIComponent(row.id)}`,
  };
}

export type ClientInformation = ReturnType<typeof clientInformation>;

/** A refusal is on the record too: probing with stolen or guessed tokens shows in the audit log. */
async function auditRefusal(staged: StagedContext, organizationId: string, error: RegistrationError, data: Record<string, unknown> = {}) {
  await staged.transaction(async (ctx) => {
    ctx.audit({ eventType: "client.registration_refused", organizationId, data: { error: error.error, description: error.description, ...data } });
  });
}

/**
 * Takes one use of an initial access token of the organization in the write's transaction: a
 * registration that fails afterwards gives it back (rollback), and two registrations racing for
 * the last use cannot both have it (the UPDATE's own condition).
 */
async function useInitialToken(ctx: Context, organizationId: string, token: string): Promise<string> {
  const row = await ctx.db.registrationToken.findUnique({ where: { tokenHash: hashClientSecret(token) } });
  if (!row || row.organizationId !== organizationId) throw invalidToken("The initial access token is not valid.");
  if (row.revokedAt) throw invalidToken("The initial access token was revoked.");
  if (row.expiresAt <= new Date()) throw invalidToken("The initial access token has expired.");
  const taken = await ctx.db.$executeRaw`
    UPDATE "RegistrationToken" SET "uses" = "uses" + 1
    WHERE "id" = ${row.id}::uuid AND "revokedAt" IS NULL AND "expiresAt" > now() AND ("maxUses" IS NULL OR "uses" < "maxUses")`;
  if (taken !== 1) throw invalidToken("The initial access token has been used up.");
  return row.id;
}

/**
 * The requested scope without the scopes of the organization's API resources open to dynamically
 * registered clients. MCP clients register with the scopes they will ask a resource for; those
 * are granted per resource when a token is asked for (oidc/features/api-resources.ts), not kept
 * in the client's own scope, which names the organization's scopes only. RFC 7591 §3.2.1 lets
 * the answer carry another scope than the request. Nothing left: the default scope.
 */
async function withoutOpenResourceScopes<T extends { scope?: string }>(staged: RegistrationContext, organizationId: string, fields: T): Promise<T> {
  if (fields.scope === undefined) return fields;
  const resources = await staged.db.apiResource.findMany({ where: { organizationId, status: "active", openToDynamicClients: true }, select: { scopes: true } });
  if (resources.length === 0) return fields;
  const granted = new Set(resources.flatMap((resource) => resource.scopes));
  const kept = fields.scope.split(" ").filter((scope) => scope.length > 0 && !granted.has(scope));
  const { scope: _scope, ...rest } = fields;
  return (kept.length > 0 ? { ...rest, scope: kept.join(" ") } : rest) as T;
}

/** RFC 7591 §3: registers a client; the answer carries its secret and registration access token, once. */
/**
 * The collaborators of a registration: those of the clients service's writes. The door builds the
 * context as the registering stranger (anonymous) or, for the client configuration endpoint, as
 * the client the path names; checks run outside a transaction, the write in one.
 */
export type RegistrationContext = StagedContext<"cache" | "config">;

export async function registerClient(staged: RegistrationContext, slug: string, bearer: string | undefined, body: unknown): Promise<ClientInformation> {
  const target = await requireTarget(staged, slug);
  try {
    if (target.policy.requireInitialAccessToken && !bearer) throw invalidToken("An initial access token is required.");
    const fields = await withoutOpenResourceScopes(staged, target.organizationId, clientFieldsOf(parseMetadata(body), target.policy));
    const parsed = ClientCreateSchema.safeParse({ organizationId: target.organizationId, ...fields });
    if (!parsed.success) throw errorOfIssues(parsed.error.issues);
    const input: ClientCreate = parsed.data;
    return await staged.transaction(async (ctx) => {
      const initialTokenId = target.policy.requireInitialAccessToken ? await useInitialToken(ctx, target.organizationId, bearer!) : null;
      const { client, secret } = await asRegistration(() => createClient(ctx, input));
      const registrationAccessToken = mintToken();
      const row = await ctx.db.client.update({ where: { id: client.id }, data: { registrationAccessTokenHash: hashClientSecret(registrationAccessToken) } });
      ctx.audit({
        eventType: "client.registered",
        organizationId: target.organizationId,
        targetType: "client",
        targetId: client.id,
        data: { initialAccessTokenId: initialTokenId, change: { ...input, organizationId: undefined }, ...(secret ? { secretId: secret.id } : {}) },
      });
      return clientInformation(row, target.issuer, { ...(secret ? { clientSecret: secret.value } : {}), registrationAccessToken });
    });
  } catch (error) {
    if (error instanceof RegistrationError) await auditRefusal(staged, target.organizationId, error);
    throw error;
  }
}

/** RFC 7592 §2: the registration access token names the client; another client's id, or none, is 401. */
async function requireRegisteredClient(ctx: Context, target: RegistrationTarget, clientId: string, bearer: string | undefined): Promise<ClientRow> {
  if (!bearer) throw invalidToken("A registration access token is required.");
  const row = await ctx.db.client.findUnique({ where: { registrationAccessTokenHash: hashClientSecret(bearer) } });
  if (!row || row.id !== clientId || row.organizationId !== target.organizationId) throw invalidToken("The registration access token is not valid for this client.");
  return row;
}

/** RFC 7592 §2.1. The token is not in the answer: Porta keeps only its hash, and it stays valid. */
export async function readRegisteredClient(ctx: Context<"config">, slug: string, clientId: string, bearer: string | undefined): Promise<ClientInformation> {
  const target = await requireTarget(ctx, slug);
  return clientInformation(await requireRegisteredClient(ctx, target, clientId, bearer), target.issuer);
}

/**
 * RFC 7592 §2.2: the request replaces the client's metadata (members left out take their
 * defaults). The authentication method cannot change (a secret or key would go missing); the
 * answer carries a new registration access token, and the old one stops working.
 */
export async function updateRegisteredClient(staged: RegistrationContext, slug: string, clientId: string, bearer: string | undefined, body: unknown): Promise<ClientInformation> {
  const target = await requireTarget(staged, slug);
  const current = await requireRegisteredClient(staged, target, clientId, bearer);
  const metadata = parseMetadata(body);
  if (metadata.client_id !== clientId) throw invalidMetadata("client_id must be the id of the client being updated");
  const fields = await withoutOpenResourceScopes(staged, target.organizationId, clientFieldsOf(metadata, target.policy));
  if ((fields.tokenEndpointAuthMethod ?? "none") !== current.tokenEndpointAuthMethod) throw invalidMetadata("token_endpoint_auth_method cannot change; register a new client instead");
  const { clientType: _type, tokenEndpointAuthMethod: _method, ...changeable } = fields;
  const parsed = ClientUpdateSchema.safeParse(changeable);
  if (!parsed.success) throw errorOfIssues(parsed.error.issues);
  const input: ClientUpdate = parsed.data;
  return staged.transaction(async (ctx) => {
    const before = await requireClient(ctx, clientId);
    await asRegistration(() => updateClient(ctx, clientId, input, undefined));
    const registrationAccessToken = mintToken();
    const row = await ctx.db.client.update({ where: { id: clientId }, data: { registrationAccessTokenHash: hashClientSecret(registrationAccessToken) } });
    ctx.audit({
      eventType: "client.registration_updated",
      organizationId: target.organizationId,
      targetType: "client",
      targetId: clientId,
      data: { change: input },
      changes: { before: pick(before, Object.keys(input)), after: pick(row, Object.keys(input)) },
    });
    return clientInformation(row, target.issuer, { registrationAccessToken });
  });
}

function pick(row: object, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((key) => [key, (row as Record<string, unknown>)[key]]));
}

/** RFC 7592 §2.3: the client is gone, with its secrets, grants' client and registration access token. */
export async function deleteRegisteredClient(staged: RegistrationContext, slug: string, clientId: string, bearer: string | undefined): Promise<void> {
  const target = await requireTarget(staged, slug);
  await requireRegisteredClient(staged, target, clientId, bearer);
  await staged.transaction(async (ctx) => {
    const row = await deleteClient(ctx, clientId, undefined);
    ctx.audit({ eventType: "client.registration_deleted", organizationId: target.organizationId, targetType: "client", targetId: clientId, data: { name: row.name } });
  });
}
