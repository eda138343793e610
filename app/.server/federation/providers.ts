import { createHash, generateKeyPairSync, type JsonWebKey } from "node:crypto";
import type { IdentityProvider as IdentityProviderRow, Prisma } from "~/generated/prisma/client";
import {
  APPLE_ISSUER,
  AUTH_METHOD_KINDS,
  ClaimMappingSchema,
  GITHUB_ENDPOINTS,
  GITHUB_ISSUER,
  GOOGLE_ISSUER,
  microsoftIssuer,
  IssuerSchema,
  OAuthEndpointsSchema,
  SamlEntityIdSchema,
  scopesLackOpenid,
  UPSTREAM_MFA_TRUST,
  type ClaimMapping,
  type IdentityProvider,
  type IdentityProviderCreate,
  type IdentityProviderKind,
  type IdentityProviderUpdate,
  type OAuthEndpoints,
  type TokenEndpointAuthMethod,
  type UpstreamMfaTrust,
} from "~/schemas/identity-provider";
import { emailDomainOf } from "~/schemas/domain";
import { isUuid } from "~/schemas/uuid";
import { requireManagedOrganization } from "../admin/users/service";
import type { Context, Db } from "../context";
import type { Encrypter } from "../crypto/encryption";
import { compareAndSet } from "../db/compare-and-set";
import { conflict, notFound, validation } from "../errors";
import { listMode, listPage, type ListQuery, type Page } from "../admin/http/pagination";
import { getOrganizationBySlug } from "../directory/organizations";
import { organizationIssuer } from "../oidc/edge/endpoints";
import { applePrivateKey } from "./apple";
import { resolveSamlCreate, resolveSamlUpdate, samlConnectionOf, type MetadataChange, type RefreshedSettings } from "./saml-connections";

/**
 * An organization's upstream identity providers (decision 046): configuration kept per
 * organization, the client secret encrypted under ENCRYPTION_KEY with the provider's id as
 * associated data (a ciphertext copied to another row does not decrypt), never answered back.
 */
export type ProviderRow = IdentityProviderRow;

const secretAad = (providerId: string) => `identity-provider-secret:${providerId}`;

/** The address to register at the upstream provider: {BASE_URL}/{slug}/federation/callback. */
export const federationCallbackUrl = (baseUrl: string, slug: string) => `${organizationIssuer(baseUrl, slug)}/federation/callback`;

/** Where a private_key_jwt connection's public key is published: beside the callback, under the organization's prefix. */
const jwksUrlBeside = (callbackUrl: string, providerId: string) => `${callbackUrl.replace(/\/callback$/, "")}/providers/${providerId}/jwks`;
export const federationJwksUrl = (baseUrl: string, slug: string, providerId: string) => jwksUrlBeside(federationCallbackUrl(baseUrl, slug), providerId);

const keyAad = (providerId: string) => `identity-provider-client-key:${providerId}`;

/** The stored method; null (auto) reads as "auto". */
export function authMethodOf(row: Pick<ProviderRow, "tokenEndpointAuthMethod">): TokenEndpointAuthMethod {
  const stored = row.tokenEndpointAuthMethod;
  return stored === "client_secret_basic" || stored === "client_secret_post" || stored === "private_key_jwt" || stored === "none" ? stored : "auto";
}

/**
 * `auto` (decision 082): the method for the upstream's `token_endpoint_auth_methods_supported`
 * (absent: client_secret_basic, the default RFC 8414 names). Without a secret, a public client.
 * With one: Basic when offered and both client id and secret read the same form-urlencoded
 * (letters and digits only: the encoding also escapes - . _ ~), because several servers do not
 * decode Basic credentials as RFC 6749 §2.3.1 asks and then refuse every other client id or
 * secret; otherwise client_secret_post when offered,
 * where the body's ordinary form decoding leaves no room for that mistake; otherwise Basic,
 * encoded as the RFC says (the only method left that a secret can use).
 */
export function chooseTokenEndpointAuthMethod(supported: unknown, clientId: string, secret: string | null): "client_secret_basic" | "client_secret_post" | "none" {
  if (secret === null) return "none";
  const offered = Array.isArray(supported) ? supported.filter((m): m is string => typeof m === "string") : ["client_secret_basic"];
  const basic = offered.includes("client_secret_basic");
  const unencoded = (text: string) => /^[A-Za-z0-9]+$/.test(text);
  if (basic && unencoded(clientId) && unencoded(secret)) return "client_secret_basic";
  if (offered.includes("client_secret_post")) return "client_secret_post";
  return "client_secret_basic";
}

/** A new ES256 key pair for private_key_jwt: the private JWK (to encrypt) with its RFC 7638 thumbprint as kid. */
export function generateClientKey(): JsonWebKey & { kid: string } {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const jwk = privateKey.export({ format: "jwk" });
  const kid = createHash("sha256").update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y })).digest("base64url");
  return { ...jwk, kid };
}

/** The connection's private key for private_key_jwt, or null when it has none. */
export function clientKeyOf(encrypter: Encrypter, row: Pick<ProviderRow, "id" | "clientKeyEncrypted">): (JsonWebKey & { kid: string }) | null {
  if (row.clientKeyEncrypted === null) return null;
  return JSON.parse(encrypter.decrypt(row.clientKeyEncrypted, keyAad(row.id))) as JsonWebKey & { kid: string };
}

/** The public JWKS the upstream verifies the connection's client assertions with; null without a key. */
export function publicJwksOf(encrypter: Encrypter, row: Pick<ProviderRow, "id" | "clientKeyEncrypted">): { keys: Array<Record<string, string>> } | null {
  const key = clientKeyOf(encrypter, row);
  if (!key) return null;
  return { keys: [{ kty: String(key.kty), crv: String(key.crv), x: String(key.x), y: String(key.y), kid: key.kid, alg: "ES256", use: "sig" }] };
}

const encryptedNewKey = (encrypter: Encrypter, providerId: string) => encrypter.encrypt(JSON.stringify(generateClientKey()), keyAad(providerId));

/**
 * Whether the email the upstream gave counts as verified on the connection's word (the one rule
 * for OpenID and SAML connections): what the upstream asserted, when it said anything; when it
 * said nothing (`asserted` null: no email_verified claim, or a SAML assertion), true only when
 * the connection assumes verified emails and the email's domain is one of the connection's own
 * `domains` (never another domain: that is how accounts elsewhere would be taken over). An
 * explicit "not verified" is never overridden. This is not yet enough to link or create an
 * account: `emailTrust` adds what the organization proved (decision 086).
 */
export function emailCountsVerified(row: Pick<ProviderRow, "assumeVerifiedEmails" | "domains">, email: string | null, asserted: boolean | null): boolean {
  if (asserted !== null) return asserted;
  if (!row.assumeVerifiedEmails || !email) return false;
  const at = email.lastIndexOf("@");
  const domain = at < 0 ? "" : email.slice(at + 1).trim().toLowerCase();
  return domain !== "" && row.domains.includes(domain);
}

/** What the organization says of an email's domain: proved by its DNS record, and which of its connections claim it. */
export interface DomainStanding {
  verified: boolean;
  /** Ids of the organization's connections whose `domains` hold it. */
  claimedBy: string[];
}

export type EmailTrust = { linkable: true } | { linkable: false; why: "email_not_verified" | "domain_not_verified" | "domain_claimed_by_another_connection" };

/**
 * Whether an upstream person's email may link an existing account of the organization or make a
 * new one (decision 086), given what `emailCountsVerified` said and the domain's standing:
 * - never an email that does not count as verified;
 * - a domain the organization verified and one of its connections claims belongs to those
 *   connections: another connection's email of it links nothing, even one its upstream asserts
 *   verified (a consumer account with a company address would otherwise take the employee's);
 * - an email the upstream itself asserted verified (`asserted`) links as it always did;
 * - an email verified only on the connection's word (assumeVerifiedEmails) links only when the
 *   organization verified its domain.
 */
export function emailTrust(row: Pick<ProviderRow, "id">, person: { emailVerified: boolean; emailAsserted?: boolean | undefined }, standing: DomainStanding | null): EmailTrust {
  if (!person.emailVerified) return { linkable: false, why: "email_not_verified" };
  if (standing?.verified && standing.claimedBy.length > 0 && !standing.claimedBy.includes(row.id)) return { linkable: false, why: "domain_claimed_by_another_connection" };
  if (person.emailAsserted === true) return { linkable: true };
  return standing?.verified ? { linkable: true } : { linkable: false, why: "domain_not_verified" };
}

/** The standing of an email's domain in the organization (null for an email without a valid domain). */
export async function domainStandingOf(db: Db, organizationId: string, email: string): Promise<DomainStanding | null> {
  const domain = emailDomainOf(email);
  if (!domain) return null;
  const verified = await db.organizationDomain.findFirst({ where: { organizationId, domain, status: "verified" }, select: { id: true } });
  const claims = await db.identityProvider.findMany({ where: { organizationId, domains: { has: domain } }, select: { id: true } });
  return { verified: verified !== null, claimedBy: claims.map((c) => c.id) };
}

const PRESET_SCOPES: Record<IdentityProviderKind, string[]> = {
  oidc: ["openid", "email", "profile"],
  google: ["openid", "email", "profile"],
  microsoft: ["openid", "email", "profile"],
  // The profile and the addresses with their verification (GET /user/emails).
  github: ["read:user", "user:email"],
  // Apple knows only these two; it sends the name once, on the first sign-in.
  apple: ["openid", "email", "name"],
  // SAML asks for no scopes: the IdP's attributes come with the assertion.
  saml: [],
};

/** A GitHub provider's endpoints as stored (the preset's when none are). */
export function endpointsOf(row: Pick<ProviderRow, "endpoints">): OAuthEndpoints {
  const parsed = OAuthEndpointsSchema.safeParse(row.endpoints);
  return parsed.success ? parsed.data : GITHUB_ENDPOINTS;
}

export function claimMappingOf(row: Pick<ProviderRow, "claimMapping">): ClaimMapping {
  const parsed = ClaimMappingSchema.safeParse(row.claimMapping);
  return parsed.success ? parsed.data : {};
}

export const trustOf = (row: Pick<ProviderRow, "trustUpstreamMfa">): UpstreamMfaTrust =>
  (UPSTREAM_MFA_TRUST as readonly string[]).includes(row.trustUpstreamMfa) ? (row.trustUpstreamMfa as UpstreamMfaTrust) : "when_asserted";

/** Where the organization lives, for a SAML connection's addresses. */
export interface ProviderOrigin {
  baseUrl: string;
  slug: string;
}

export function toIdentityProvider(row: ProviderRow, callbackUrl: string, origin?: ProviderOrigin): IdentityProvider {
  return {
    id: row.id,
    organizationId: row.organizationId,
    name: row.name,
    kind: row.kind as IdentityProviderKind,
    issuer: row.issuer,
    clientId: row.clientId,
    hasClientSecret: row.clientSecretEncrypted !== null,
    scopes: row.scopes,
    claimMapping: claimMappingOf(row),
    domains: row.domains,
    enabled: row.enabled,
    createAccounts: row.createAccounts,
    trustUpstreamMfa: trustOf(row),
    endpoints: row.kind === "github" ? endpointsOf(row) : null,
    teamId: row.teamId,
    keyId: row.keyId,
    callbackUrl,
    tokenEndpointAuthMethod: authMethodOf(row),
    jwksUrl: row.clientKeyEncrypted !== null && authMethodOf(row) === "private_key_jwt" ? jwksUrlBeside(callbackUrl, row.id) : null,
    assumeVerifiedEmails: row.assumeVerifiedEmails,
    saml: origin ? samlConnectionOf(row, origin.baseUrl, origin.slug) : null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** A secret (a client secret, a SAML connection's decryption key) as the row stores it, bound to the provider's id. */
export function encryptProviderSecret(encrypter: Encrypter, providerId: string, secret: string): string {
  return encrypter.encrypt(secret, secretAad(providerId));
}

/** The stored secret in clear, for the token request; null for a public client. */
export function clientSecretOf(encrypter: Encrypter, row: ProviderRow): string | null {
  return row.clientSecretEncrypted === null ? null : encrypter.decrypt(row.clientSecretEncrypted, secretAad(row.id));
}

type AdminContext = Context<"config" | "encrypter">;

/** What every answer of the organization's providers needs: the callback URL and, for SAML, the organization's addresses. */
async function answerFor(ctx: AdminContext, organizationId: string) {
  const org = await requireManagedOrganization(ctx, organizationId);
  const origin: ProviderOrigin = { baseUrl: ctx.config.baseUrl, slug: org.slug };
  const callbackUrl = federationCallbackUrl(ctx.config.baseUrl, org.slug);
  return { callbackUrl, origin, answer: (row: ProviderRow) => toIdentityProvider(row, callbackUrl, origin) };
}

export async function listIdentityProviders(ctx: AdminContext, query: ListQuery & { organizationId: string }): Promise<Page<IdentityProvider>> {
  const { answer } = await answerFor(ctx, query.organizationId);
  const where: Prisma.IdentityProviderWhereInput = { organizationId: query.organizationId };
  const order = query.order ?? "asc";
  const page = await listPage(listMode(query), {
    count: () => ctx.db.identityProvider.count({ where }),
    offset: (skip, take) => ctx.db.identityProvider.findMany({ where, orderBy: [{ name: order }, { id: order }], skip, take }),
    after: (afterId, take) => ctx.db.identityProvider.findMany({ where: { ...where, ...(afterId ? { id: order === "asc" ? { gt: afterId } : { lt: afterId } } : {}) }, orderBy: { id: order }, take }),
  });
  return { ...page, data: page.data.map(answer) };
}

export async function requireIdentityProvider(ctx: AdminContext, id: string): Promise<{ row: ProviderRow; body: IdentityProvider }> {
  const row = await ctx.db.identityProvider.findUnique({ where: { id } });
  if (!row) throw notFound("identity provider");
  return { row, body: (await answerFor(ctx, row.organizationId)).answer(row) };
}

/** Domains claimed by another provider of the organization: home-realm discovery must point to one. */
async function refuseTakenDomains(db: Db, organizationId: string, domains: string[], exceptId?: string) {
  if (domains.length === 0) return;
  const taken = await db.identityProvider.findFirst({
    where: { organizationId, domains: { hasSome: domains }, ...(exceptId ? { id: { not: exceptId } } : {}) },
    select: { name: true, domains: true },
  });
  if (taken) {
    const domain = domains.find((d) => taken.domains.includes(d));
    throw conflict("domain_taken", `The domain ${domain} is already claimed by the identity provider ${taken.name}.`, [
      { field: "domains", message: `${domain} is already claimed by ${taken.name}` },
    ]);
  }
}

async function refuseTakenName(db: Db, organizationId: string, name: string, exceptId?: string) {
  const taken = await db.identityProvider.findFirst({ where: { organizationId, name, ...(exceptId ? { id: { not: exceptId } } : {}) }, select: { id: true } });
  if (taken) throw conflict("name_taken", `An identity provider named ${name} exists in this organization.`, [{ field: "name", message: "is already used by another identity provider" }]);
}

const unique = (values: string[]) => [...new Set(values)];

/** Apple's "secret" is the .p8 private key its client-secret JWTs are signed with. */
function refuseBadAppleKey(kind: string, secret: string | null | undefined) {
  if (kind === "apple" && secret && !applePrivateKey(secret)) {
    throw validation([{ field: "clientSecret", message: "must be the text of Apple's .p8 private key (PKCS#8, P-256)" }]);
  }
}

/**
 * The stored method and key: private_key_jwt keeps the key the connection has (the upstream has it
 * registered) or gets a new one; any other method drops it, so that going back to private_key_jwt
 * publishes a fresh key.
 */
export function storedAuthMethod(encrypter: Encrypter, providerId: string, method: TokenEndpointAuthMethod | undefined, currentKey: string | null) {
  const chosen = method === undefined || method === "auto" ? null : method;
  return { tokenEndpointAuthMethod: chosen, clientKeyEncrypted: chosen === "private_key_jwt" ? (currentKey ?? encryptedNewKey(encrypter, providerId)) : null };
}

/** Combinations a sign-in could never use: a method for a kind that has its own, a secret method without a secret, a public client with one. */
function refuseBadAuthMethod(current: ProviderRow, input: IdentityProviderUpdate) {
  const method = input.tokenEndpointAuthMethod ?? authMethodOf(current);
  if (input.tokenEndpointAuthMethod !== undefined && input.tokenEndpointAuthMethod !== "auto" && !AUTH_METHOD_KINDS.includes(current.kind as IdentityProviderKind)) {
    throw validation([{ field: "tokenEndpointAuthMethod", message: `is fixed for ${current.kind}` }]);
  }
  const hasSecret = input.clientSecret === undefined ? current.clientSecretEncrypted !== null : input.clientSecret !== null;
  if ((method === "client_secret_basic" || method === "client_secret_post") && !hasSecret) {
    throw validation([{ field: "clientSecret", message: `is required for ${method}` }]);
  }
  if (method === "none" && hasSecret) throw validation([{ field: "clientSecret", message: "must not be set for a public client (none): set it to null" }]);
}

export async function createIdentityProvider(ctx: AdminContext & { metadataTexts?: ReadonlyMap<string, string> | undefined }, input: IdentityProviderCreate): Promise<{ row: ProviderRow; body: IdentityProvider }> {
  const { answer } = await answerFor(ctx, input.organizationId);
  const kind = input.kind ?? "oidc";
  // SAML (decision 081): the entity ID, SSO URL and certificates from the metadata or the body.
  const saml = kind === "saml" ? await resolveSamlCreate(ctx, input) : null;
  const issuer = saml
    ? saml.issuer
    :
    kind === "google"
      ? GOOGLE_ISSUER
      : kind === "microsoft"
        ? microsoftIssuer(input.tenantId!)
        : kind === "github"
          ? GITHUB_ISSUER
          : kind === "apple"
            ? APPLE_ISSUER
            : input.issuer!.replace(/\/$/, "");
  refuseBadAppleKey(kind, input.clientSecret);
  const domains = unique(input.domains ?? []);
  await refuseTakenName(ctx.db, input.organizationId, input.name);
  await refuseTakenDomains(ctx.db, input.organizationId, domains);
  // The id is chosen here so the secret's associated data can name it in the one INSERT.
  const id = crypto.randomUUID();
  const secret = saml ? saml.decryptionKeyPem : input.clientSecret;
  const row = await ctx.db.identityProvider.create({
    data: {
      id,
      organizationId: input.organizationId,
      name: input.name,
      kind,
      issuer,
      clientId: input.clientId ?? "",
      // For SAML, the connection's decryption key (PEM), under the same associated data.
      clientSecretEncrypted: secret ? ctx.encrypter.encrypt(secret, secretAad(id)) : null,
      scopes: unique(input.scopes ?? PRESET_SCOPES[kind]),
      claimMapping: input.claimMapping ?? {},
      domains,
      enabled: input.enabled ?? true,
      createAccounts: input.createAccounts ?? false,
      trustUpstreamMfa: input.trustUpstreamMfa ?? "when_asserted",
      ...(kind === "github" ? { endpoints: input.endpoints ?? GITHUB_ENDPOINTS } : {}),
      ...(kind === "apple" ? { teamId: input.teamId!, keyId: input.keyId! } : {}),
      ...storedAuthMethod(ctx.encrypter, id, input.tokenEndpointAuthMethod, null),
      assumeVerifiedEmails: input.assumeVerifiedEmails ?? false,
      ...(saml ? { saml: saml.settings } : {}),
    },
  });
  return { row, body: answer(row) };
}

export async function updateIdentityProvider(
  ctx: AdminContext,
  id: string,
  input: IdentityProviderUpdate,
  expectedVersion: number | undefined,
): Promise<{ before: IdentityProvider; row: ProviderRow; body: IdentityProvider }> {
  const { row: current, body: before } = await requireIdentityProvider(ctx, id);
  const samlUpdate = await samlChanges(ctx, current, input);
  if (input.issuer !== undefined && current.kind !== "oidc" && current.kind !== "saml") {
    throw conflict("preset_issuer", `The issuer of a ${current.kind} provider is fixed.`, [{ field: "issuer", message: `is fixed for ${current.kind}` }]);
  }
  if (scopesLackOpenid(current.kind as IdentityProviderKind, input.scopes)) throw validation([{ field: "scopes", message: "must include openid" }]);
  if (input.endpoints !== undefined && current.kind !== "github") throw validation([{ field: "endpoints", message: "are only for github (OpenID providers are discovered)" }]);
  if ((input.teamId !== undefined || input.keyId !== undefined) && current.kind !== "apple") {
    throw validation([{ field: input.teamId !== undefined ? "teamId" : "keyId", message: "is only for Apple" }]);
  }
  if (current.kind === "apple" && input.clientSecret === null) throw validation([{ field: "clientSecret", message: "is required for Apple" }]);
  refuseBadAppleKey(current.kind, input.clientSecret);
  refuseBadAuthMethod(current, input);
  if (input.assumeVerifiedEmails ?? current.assumeVerifiedEmails) {
    if ((input.domains ?? current.domains).length === 0) {
      throw validation([{ field: input.domains !== undefined ? "domains" : "assumeVerifiedEmails", message: "needs at least one domain: only emails of the provider's domains are taken as verified" }]);
    }
  }
  if (input.name !== undefined) await refuseTakenName(ctx.db, current.organizationId, input.name, id);
  const domains = input.domains === undefined ? undefined : unique(input.domains);
  if (domains) await refuseTakenDomains(ctx.db, current.organizationId, domains, id);
  await compareAndSet({ ifMatch: expectedVersion }, (guard) => ctx.db.identityProvider.updateMany({
    where: { id, ...guard },
    data: {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.issuer !== undefined && current.kind === "oidc" ? { issuer: input.issuer.replace(/\/$/, "") } : {}),
      ...(input.clientId !== undefined ? { clientId: input.clientId } : {}),
      ...(input.clientSecret !== undefined ? { clientSecretEncrypted: input.clientSecret === null ? null : ctx.encrypter.encrypt(input.clientSecret, secretAad(id)) } : {}),
      ...(input.scopes !== undefined ? { scopes: unique(input.scopes) } : {}),
      ...(input.claimMapping !== undefined ? { claimMapping: input.claimMapping } : {}),
      ...(domains !== undefined ? { domains } : {}),
      ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
      ...(input.createAccounts !== undefined ? { createAccounts: input.createAccounts } : {}),
      ...(input.trustUpstreamMfa !== undefined ? { trustUpstreamMfa: input.trustUpstreamMfa } : {}),
      ...(input.endpoints !== undefined ? { endpoints: input.endpoints } : {}),
      ...(input.teamId !== undefined ? { teamId: input.teamId } : {}),
      ...(input.keyId !== undefined ? { keyId: input.keyId } : {}),
      ...(input.tokenEndpointAuthMethod !== undefined ? storedAuthMethod(ctx.encrypter, id, input.tokenEndpointAuthMethod, current.clientKeyEncrypted) : {}),
      ...(input.assumeVerifiedEmails !== undefined ? { assumeVerifiedEmails: input.assumeVerifiedEmails } : {}),
      ...samlUpdate,
      version: { increment: 1 },
    },
  }));
  const { row, body } = await requireIdentityProvider(ctx, id);
  return { before, row, body };
}

/** The columns a SAML connection's update writes (none for other kinds, which refuse SAML fields). */
async function samlChanges(ctx: AdminContext, current: ProviderRow, input: IdentityProviderUpdate): Promise<Prisma.IdentityProviderUpdateManyMutationInput> {
  if (current.kind !== "saml") {
    for (const field of ["samlMetadataXml", "saml"] as const) if (input[field] !== undefined) throw validation([{ field, message: "is only for SAML" }]);
    if (input.issuer !== undefined && current.kind === "oidc") {
      const parsed = IssuerSchema.safeParse(input.issuer);
      if (!parsed.success) throw validation(parsed.error.issues.map((issue) => ({ field: "issuer", message: issue.message })));
    }
    return {};
  }
  for (const field of ["clientId", "clientSecret", "scopes"] as const) if (input[field] !== undefined) throw validation([{ field, message: "is not used by SAML" }]);
  if (input.issuer !== undefined) {
    const parsed = SamlEntityIdSchema.safeParse(input.issuer);
    if (!parsed.success) throw validation(parsed.error.issues.map((issue) => ({ field: "issuer", message: issue.message })));
  }
  if (input.samlMetadataXml === undefined && input.saml === undefined && input.issuer === undefined) return {};
  const next = await resolveSamlUpdate(ctx, current, input);
  return {
    saml: next.settings,
    ...(next.issuer !== undefined ? { issuer: next.issuer } : {}),
    ...(next.decryptionKeyPem !== undefined ? { clientSecretEncrypted: next.decryptionKeyPem === null ? null : ctx.encrypter.encrypt(next.decryptionKeyPem, secretAad(current.id)) } : {}),
  };
}

/**
 * Stores what a metadata fetch found (`refreshedSettings`, which runs before any transaction so
 * that a slow IdP holds no database connection), only over the version that was read: an
 * administrator's change made during the fetch is not overwritten (the refresh fails as stale and
 * the next run starts from it). The version moves only when the IdP changed something; a refresh
 * that finds the same keeps the ETag.
 */
export async function storeRefreshedSamlMetadata(
  ctx: Context,
  row: ProviderRow,
  next: RefreshedSettings,
): Promise<{ row: ProviderRow; change: MetadataChange | null }> {
  await compareAndSet({ ifMatch: undefined, read: row.version }, (guard) =>
    ctx.db.identityProvider.updateMany({
      where: { id: row.id, ...guard },
      data: { saml: next.settings, issuer: next.issuer, ...(next.change ? { version: { increment: 1 } } : {}) },
    }),
  );
  const updated = await ctx.db.identityProvider.findUniqueOrThrow({ where: { id: row.id } });
  return { row: updated, change: next.change };
}

/** Deletes the provider and every user's link to it (the accounts stay). */
export async function deleteIdentityProvider(ctx: AdminContext, id: string, expectedVersion: number | undefined): Promise<{ row: ProviderRow; body: IdentityProvider }> {
  const found = await requireIdentityProvider(ctx, id);
  await compareAndSet({ ifMatch: expectedVersion }, (guard) => ctx.db.identityProvider.deleteMany({ where: { id, ...guard } }));
  return found;
}

// ---------------------------------------------------------------------------------------------
// For the sign-in pages

export interface LoginButton {
  id: string;
  name: string;
}

/** The enabled providers of an organization, as the login page lists them. */
export async function enabledProviders(db: Db, organizationId: string): Promise<Array<LoginButton & { domains: string[] }>> {
  return db.identityProvider.findMany({ where: { organizationId, enabled: true }, select: { id: true, name: true, domains: true }, orderBy: [{ name: "asc" }, { id: "asc" }] });
}

/**
 * Home-realm discovery: the enabled provider that claims the email's domain, if one does (the
 * domain compared in its IDNA ASCII form). A domain is claimed by one connection of an
 * organization at most (refuseTakenDomains), so whether the organization verified it (decision
 * 086) chooses nothing here: an unverified claim still sends the person to the connection the
 * organization chose, and the console marks the claim unverified. What verification changes is
 * which accounts the connection may link (`emailTrust`).
 */
export async function providerForEmail(db: Db, organizationId: string, email: string): Promise<LoginButton | null> {
  const at = email.lastIndexOf("@");
  if (at < 0) return null;
  const domain = emailDomainOf(email) ?? email.slice(at + 1).trim().toLowerCase();
  if (!domain) return null;
  return db.identityProvider.findFirst({ where: { organizationId, enabled: true, domains: { has: domain } }, select: { id: true, name: true }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
}

/**
 * GET {BASE_URL}/{slug}/federation/providers/{id}/jwks: the public key of a private_key_jwt
 * connection of that organization (decision 082), for the upstream to verify Porta's client
 * assertions. Null (404) for another organization's connection, one with another method, or a
 * malformed id: the URL tells nothing about connections that are not published.
 */
export async function publishedClientJwks(ctx: Context<"cache" | "encrypter">, slug: string, providerId: string): Promise<{ keys: Array<Record<string, string>> } | null> {
  if (!isUuid(providerId)) return null;
  const organization = await getOrganizationBySlug(ctx.db, ctx.cache, slug);
  if (!organization || organization.status !== "active") return null;
  const row = await ctx.db.identityProvider.findFirst({ where: { id: providerId, organizationId: organization.id }, select: { id: true, clientKeyEncrypted: true, tokenEndpointAuthMethod: true } });
  if (!row || authMethodOf(row) !== "private_key_jwt") return null;
  return publicJwksOf(ctx.encrypter, row);
}
