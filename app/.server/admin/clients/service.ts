import { randomBytes } from "node:crypto";
import { Prisma, type Client as ClientRow, type ClientSecret as SecretRow } from "~/generated/prisma/client";
import {
  authMethodOf,
  clientSettingsProblems,
  clientTypeOf,
  type Client,
  type ClientCreate,
  type ClientPkce,
  type ClientSecret,
  type ClientUpdate,
  type Jwks,
  type SecretCreate,
  usesSecret,
} from "~/schemas/client";
import { effectiveLoginMethods } from "~/schemas/login-methods";
import { hashClientSecret, invalidateClient } from "../../directory/clients";
import type { Context } from "../../context";
import { newUuidV7 } from "../../db/ids";
import { ADMIN_API_SCOPES, isAdminApiClient } from "../api-access";
import { requireOrganizationRef } from "../applications/service";
import { requireSupportedScope } from "../claims/scopes";
import { compareAndSet } from "../../db/compare-and-set";
import { conflict, notFound, validation } from "../../errors";
import { listMode, listPage, type ListQuery, type Page } from "../http/pagination";
import { ADMIN_CLIENT_ID } from "../permissions";

/** A client row with the default login methods of its organization (for the effective ones). */
export type ClientWithOrg = ClientRow & { organization: { defaultLoginMethods: string[] } };

const withOrg = { organization: { select: { defaultLoginMethods: true } } } as const;

export function toClient(row: ClientWithOrg): Client {
  return {
    id: row.id,
    organizationId: row.organizationId,
    applicationId: row.applicationId,
    name: row.name,
    clientType: clientTypeOf(row.tokenEndpointAuthMethod),
    applicationType: row.applicationType as Client["applicationType"],
    tokenEndpointAuthMethod: row.tokenEndpointAuthMethod,
    jwks: (row.jwks as Jwks | null) ?? null,
    jwksUri: row.jwksUri,
    redirectUris: row.redirectUris,
    postLogoutRedirectUris: row.postLogoutRedirectUris,
    grantTypes: row.grantTypes as Client["grantTypes"],
    scope: row.scope,
    loginMethods: row.loginMethods.length > 0 ? (row.loginMethods as NonNullable<Client["loginMethods"]>) : null,
    effectiveLoginMethods: effectiveLoginMethods(row, row.organization),
    adminApiAccess: isAdminApiClient(row),
    allowedCorsOrigins: row.allowedCorsOrigins,
    skipConsent: row.skipConsent,
    pkce: row.pkce as Client["pkce"],
    accessTokenTtlSeconds: row.accessTokenTtlSeconds,
    refreshTokenTtlSeconds: row.refreshTokenTtlSeconds,
    backchannelLogoutUri: row.backchannelLogoutUri,
    backchannelLogoutSessionRequired: row.backchannelLogoutSessionRequired,
    tokenExchangeAudiences: row.tokenExchangeAudiences,
    initiateLoginUri: row.initiateLoginUri,
    status: row.status as Client["status"],
    dynamicallyRegistered: row.registrationAccessTokenHash !== null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function toSecret(row: SecretRow): ClientSecret {
  return {
    id: row.id,
    hint: row.hint,
    label: row.label,
    status: row.status as ClientSecret["status"],
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt?.toISOString() ?? null,
    revokedAt: row.revokedAt?.toISOString() ?? null,
  };
}

/** New client ids are UUIDv7: they sort by creation time, so cursor paging walks clients in creation order. */
export const newClientId = newUuidV7;

export interface ClientListQuery extends ListQuery {
  organizationId?: string | undefined;
  applicationId?: string | undefined;
  status?: "active" | "inactive" | undefined;
  q?: string | undefined;
  sort?: "createdAt" | "name" | undefined;
}

export async function listClients(ctx: Context, query: ClientListQuery): Promise<Page<Client>> {
  const prisma = ctx.db;
  const where: Prisma.ClientWhereInput = {
    organization: { status: { not: "deleted" } },
    ...(query.organizationId ? { organizationId: query.organizationId } : {}),
    ...(query.applicationId ? { applicationId: query.applicationId } : {}),
    ...(query.status ? { status: query.status } : {}),
    ...(query.q ? { name: { contains: query.q, mode: "insensitive" } } : {}),
  };
  const order = query.order ?? "asc";
  const page = await listPage(listMode(query), {
    // Client ids are text (client_id), not UUIDs.
    idPattern: /^[A-Za-z0-9._:-]{1,200}$/,
    count: () => prisma.client.count({ where }),
    offset: (skip, take) => prisma.client.findMany({ where, include: withOrg, orderBy: [{ [query.sort ?? "createdAt"]: order }, { id: order }], skip, take }),
    after: (afterId, take) =>
      prisma.client.findMany({
        where: { ...where, ...(afterId ? { id: order === "asc" ? { gt: afterId } : { lt: afterId } } : {}) },
        include: withOrg,
        orderBy: { id: order },
        take,
      }),
  });
  return { ...page, data: page.data.map(toClient) };
}

/** A client of a live (not deleted) organization, or 404. */
export async function requireClient(ctx: Context, id: string): Promise<ClientWithOrg> {
  const row = await ctx.db.client.findFirst({ where: { id, organization: { status: { not: "deleted" } } }, include: withOrg });
  if (!row) throw notFound("client");
  return row;
}

/** The shared admin client (CLI and console) keeps Porta administrable: the API does not change it. */
function assertChangeable(client: { id: string }) {
  if (client.id === ADMIN_CLIENT_ID) {
    throw conflict("protected_client", "The shared admin client cannot be changed through the Admin API; it is maintained at start-up.");
  }
}

async function requireApplicationRef(ctx: Context, applicationId: string, organizationId: string) {
  const app = await ctx.db.application.findUnique({ where: { id: applicationId }, select: { organizationId: true } });
  if (!app || app.organizationId !== organizationId) {
    throw validation([{ field: "applicationId", message: "does not name an application of the client's organization" }]);
  }
}

function requireSettings(settings: Parameters<typeof clientSettingsProblems>[0]) {
  const problems = clientSettingsProblems(settings);
  if (problems.length > 0) throw validation(problems);
}

/**
 * A client that calls the Admin API signs service-admins in for it (decision 017); one of another
 * organization signs that organization's own administrators in for its door (decision 090). Either
 * uses the code flow and is allowed the admin scope.
 */
function requireAdminApiAccessRules(client: { adminApiAccess: boolean; grantTypes: string[]; scope: string }) {
  if (!client.adminApiAccess) return;
  const problems: Array<{ field: string; message: string }> = [];
  if (!client.grantTypes.includes("authorization_code")) problems.push({ field: "grantTypes", message: "needs authorization_code in a client that calls the Admin API" });
  const scopes = client.scope.split(" ");
  const missing = ADMIN_API_SCOPES.filter((scope) => !scopes.includes(scope));
  if (missing.length > 0) problems.push({ field: "scope", message: `must include ${missing.join(" ")} in a client that calls the Admin API` });
  if (problems.length > 0) throw validation(problems);
}

/** A new random secret (256 bits); only its SHA-256 is stored. */
function mintSecret() {
  const value = randomBytes(32).toString("base64url");
  return { value, hash: hashClientSecret(value), hint: value.slice(-4) };
}

export interface NewSecret {
  id: string;
  value: string;
  hint: string;
}

/** The client and its first secret are one write: neither exists without the other. */
export async function createClient(ctx: Context<"cache" | "config">, input: ClientCreate): Promise<{ client: ClientWithOrg; secret?: NewSecret }> {
  await requireOrganizationRef(ctx, input.organizationId);
  if (input.applicationId) await requireApplicationRef(ctx, input.applicationId, input.organizationId);
  requireSettings({ ...input, ...(input.tokenEndpointAuthMethod ? { tokenEndpointAuthMethod: input.tokenEndpointAuthMethod } : {}), hasJwks: input.jwks !== null, hasJwksUri: input.jwksUri !== null });
  await requireSupportedScope(ctx, input.organizationId, input.scope);
  requireAdminApiAccessRules(input);
  const id = newClientId();
  const tokenEndpointAuthMethod = authMethodOf(input.clientType, input.tokenEndpointAuthMethod);
  // A client that signs with its key has nothing to do with a secret.
  const secret = usesSecret(tokenEndpointAuthMethod) ? mintSecret() : undefined;
  const client = await ctx.db.client.create({
    data: {
      id,
      organizationId: input.organizationId,
      applicationId: input.applicationId ?? null,
      name: input.name,
      applicationType: input.applicationType,
      tokenEndpointAuthMethod,
      jwks: input.jwks ?? Prisma.DbNull,
      jwksUri: input.jwksUri,
      redirectUris: input.redirectUris,
      postLogoutRedirectUris: input.postLogoutRedirectUris,
      grantTypes: input.grantTypes,
      scope: input.scope,
      loginMethods: input.loginMethods ?? [],
      adminApiAccess: input.adminApiAccess,
      allowedCorsOrigins: input.allowedCorsOrigins,
      skipConsent: input.skipConsent,
      pkce: input.pkce,
      accessTokenTtlSeconds: input.accessTokenTtlSeconds,
      refreshTokenTtlSeconds: input.refreshTokenTtlSeconds,
      backchannelLogoutUri: input.backchannelLogoutUri,
      backchannelLogoutSessionRequired: input.backchannelLogoutSessionRequired,
      tokenExchangeAudiences: input.tokenExchangeAudiences,
      initiateLoginUri: input.initiateLoginUri,
    },
    include: withOrg,
  });
  const secretRow = secret ? await ctx.db.clientSecret.create({ data: { clientId: id, secretHash: secret.hash, hint: secret.hint, label: "initial" } }) : undefined;
  // An earlier lookup of this id may have cached "no such client".
  ctx.afterCommit(() => invalidateClient(ctx.cache, id));
  return {
    client,
    ...(secret && secretRow ? { secret: { id: secretRow.id, value: secret.value, hint: secret.hint } } : {}),
  };
}

/** Writes `data` if the client is still at `expectedVersion` (If-Match); the cached client goes once that has committed. */
async function writeClient(ctx: Context<"cache">, current: ClientWithOrg, data: Prisma.ClientUpdateManyMutationInput & { applicationId?: string | null }, expectedVersion: number | undefined) {
  await compareAndSet({ ifMatch: expectedVersion, read: current.version }, (guard) =>
    ctx.db.client.updateMany({ where: { id: current.id, ...guard }, data: { ...data, version: { increment: 1 } } }),
  );
  ctx.afterCommit(() => invalidateClient(ctx.cache, current.id));
  return requireClient(ctx, current.id);
}

export async function updateClient(ctx: Context<"cache" | "config">, id: string, input: ClientUpdate, expectedVersion: number | undefined): Promise<ClientWithOrg> {
  const current = await requireClient(ctx, id);
  assertChangeable(current);
  if (input.applicationId) await requireApplicationRef(ctx, input.applicationId, current.organizationId);
  requireSettings({
    clientType: clientTypeOf(current.tokenEndpointAuthMethod),
    tokenEndpointAuthMethod: input.tokenEndpointAuthMethod ?? current.tokenEndpointAuthMethod,
    hasJwks: input.jwks === undefined ? current.jwks !== null : input.jwks !== null,
    hasJwksUri: input.jwksUri === undefined ? current.jwksUri !== null : input.jwksUri !== null,
    applicationType: (input.applicationType ?? current.applicationType) as "web" | "native",
    redirectUris: input.redirectUris ?? current.redirectUris,
    postLogoutRedirectUris: input.postLogoutRedirectUris ?? current.postLogoutRedirectUris,
    grantTypes: input.grantTypes ?? current.grantTypes,
    scope: input.scope ?? current.scope,
    skipConsent: input.skipConsent ?? current.skipConsent,
    pkce: input.pkce ?? (current.pkce as ClientPkce),
    tokenExchangeAudiences: input.tokenExchangeAudiences ?? current.tokenExchangeAudiences,
  });
  if (input.scope !== undefined) await requireSupportedScope(ctx, current.organizationId, input.scope);
  requireAdminApiAccessRules({
    adminApiAccess: input.adminApiAccess ?? current.adminApiAccess,
    grantTypes: input.grantTypes ?? current.grantTypes,
    scope: input.scope ?? current.scope,
  });
  const { loginMethods, jwks, ...rest } = input;
  return writeClient(
    ctx,
    current,
    { ...rest, ...(loginMethods !== undefined ? { loginMethods: loginMethods ?? [] } : {}), ...(jwks !== undefined ? { jwks: jwks ?? Prisma.DbNull } : {}) },
    expectedVersion,
  );
}

export async function setClientStatus(ctx: Context<"cache">, id: string, status: "active" | "inactive", expectedVersion: number | undefined): Promise<ClientWithOrg> {
  const current = await requireClient(ctx, id);
  assertChangeable(current);
  return writeClient(ctx, current, { status }, expectedVersion);
}

/** The client's login-method override; null clears it (the organization's default applies). */
export async function setClientLoginMethods(ctx: Context<"cache">, id: string, loginMethods: string[] | null, expectedVersion: number | undefined): Promise<ClientWithOrg> {
  const current = await requireClient(ctx, id);
  assertChangeable(current);
  return writeClient(ctx, current, { loginMethods: loginMethods ?? [] }, expectedVersion);
}

export async function deleteClient(ctx: Context<"cache">, id: string, expectedVersion: number | undefined): Promise<ClientWithOrg> {
  const current = await requireClient(ctx, id);
  assertChangeable(current);
  await compareAndSet({ ifMatch: expectedVersion, read: current.version }, (guard) => ctx.db.client.deleteMany({ where: { id, ...guard } }));
  ctx.afterCommit(() => invalidateClient(ctx.cache, id));
  return current;
}

// ---------------------------------------------------------------------------------------------
// Secrets

export async function listSecrets(ctx: Context, clientId: string, query: ListQuery): Promise<Page<ClientSecret>> {
  const prisma = ctx.db;
  await requireClient(ctx, clientId);
  const where: Prisma.ClientSecretWhereInput = { clientId };
  const order = query.order ?? "asc";
  const page = await listPage(listMode(query), {
    count: () => prisma.clientSecret.count({ where }),
    offset: (skip, take) => prisma.clientSecret.findMany({ where, orderBy: [{ createdAt: order }, { id: order }], skip, take }),
    after: (afterId, take) =>
      prisma.clientSecret.findMany({ where: { ...where, ...(afterId ? { id: order === "asc" ? { gt: afterId } : { lt: afterId } } : {}) }, orderBy: { id: order }, take }),
  });
  return { ...page, data: page.data.map(toSecret) };
}

/** A further secret for a confidential client; the ones it already has stay valid until revoked. */
export async function generateSecret(ctx: Context<"cache">, clientId: string, input: SecretCreate): Promise<{ client: ClientWithOrg; row: SecretRow; value: string }> {
  const client = await requireClient(ctx, clientId);
  assertChangeable(client);
  if (clientTypeOf(client.tokenEndpointAuthMethod) === "public") {
    throw conflict("public_client", "A public client authenticates without a secret; it cannot have secrets.");
  }
  const secret = mintSecret();
  const row = await ctx.db.clientSecret.create({
    data: { clientId, secretHash: secret.hash, hint: secret.hint, label: input?.label ?? null, expiresAt: input?.expiresAt ? new Date(input.expiresAt) : null },
  });
  ctx.afterCommit(() => invalidateClient(ctx.cache, clientId));
  return { client, row, value: secret.value };
}

/** Revokes one secret at once (revoking a revoked secret changes nothing). */
export async function revokeSecret(ctx: Context<"cache">, clientId: string, secretId: string): Promise<{ client: ClientWithOrg; row: SecretRow }> {
  const client = await requireClient(ctx, clientId);
  assertChangeable(client);
  const prisma = ctx.db;
  const existing = await prisma.clientSecret.findFirst({ where: { id: secretId, clientId } });
  if (!existing) throw notFound("secret");
  const row = existing.status === "revoked" ? existing : await prisma.clientSecret.update({ where: { id: secretId }, data: { status: "revoked", revokedAt: new Date() } });
  ctx.afterCommit(() => invalidateClient(ctx.cache, clientId));
  return { client, row };
}
