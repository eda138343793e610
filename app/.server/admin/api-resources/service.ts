import type { Prisma, ApiResource as ApiResourceRow } from "~/generated/prisma/client";
import type { ApiResource, ApiResourceCreate, ApiResourceUpdate, ClientResourceGrant } from "~/schemas/api-resource";
import type { Context } from "../../context";
import { compareAndSet } from "../../db/compare-and-set";
import { conflict, notFound, validation } from "../../errors";
import { adminApiResource } from "../api-access";
import { requireClient, type ClientWithOrg } from "../clients/service";
import { listMode, listPage, type ListQuery, type Page } from "../http/pagination";

/**
 * An organization's API resources and the clients granted them (decision 077). Every write drops
 * the organization's provider once it has committed: the provider is built with its active
 * resources and their grants (oidc/provider/tenant-load.ts), so the next token request sees the
 * change.
 */
export function toApiResource(row: ApiResourceRow): ApiResource {
  return {
    id: row.id,
    organizationId: row.organizationId,
    identifier: row.identifier,
    name: row.name,
    scopes: row.scopes,
    scopeDescriptions: scopeDescriptionsOf(row),
    accessTokenTtlSeconds: row.accessTokenTtlSeconds,
    consentRequired: row.consentRequired,
    openToDynamicClients: row.openToDynamicClients,
    status: row.status as ApiResource["status"],
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** The stored descriptions as a plain record of strings (the column is JSON). */
export function scopeDescriptionsOf(row: { scopeDescriptions: unknown }): Record<string, string> {
  const value = row.scopeDescriptions;
  if (!value || typeof value !== "object" || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
}

/** Descriptions may only describe scopes the resource defines: 422 naming each other key. */
function assertDescribedScopes(descriptions: Record<string, string>, scopes: readonly string[]) {
  const defined = new Set(scopes);
  const stray = Object.keys(descriptions).filter((scope) => !defined.has(scope));
  if (stray.length > 0) throw validation(stray.map((scope) => ({ field: `scopeDescriptions.${scope}`, message: "describes a scope the API resource does not define" })));
}

type GrantRow = Prisma.ClientResourceGrantGetPayload<{ include: { resource: { select: { identifier: true } } } }>;

export function toClientResourceGrant(row: GrantRow): ClientResourceGrant {
  return {
    clientId: row.clientId,
    resourceId: row.resourceId,
    identifier: row.resource.identifier,
    scopes: row.scopes,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

const dropProvider = (ctx: Context<"oidc">, organizationId: string) => ctx.afterCommit(() => ctx.oidc.invalidate(organizationId));

async function requireOrganization(ctx: Context, organizationId: string): Promise<{ slug: string }> {
  const row = await ctx.db.organization.findUnique({ where: { id: organizationId }, select: { status: true, slug: true } });
  if (!row || row.status === "deleted") throw notFound("organization");
  return row;
}

/**
 * The organization's issuer and the Admin API are resources already (features/api-resources.ts
 * answers for them first): a registered resource of the same name would never be used.
 */
async function assertNotReserved(ctx: Context<"config">, organizationId: string, identifier: string) {
  const { slug } = await requireOrganization(ctx, organizationId);
  const reserved = [`${ctx.config.baseUrl}/${slug}`, adminApiResource(ctx.config.baseUrl)].map((value) => value.toLowerCase());
  if (reserved.includes(identifier.toLowerCase())) {
    throw validation([{ field: "identifier", message: "is the organization's issuer or the Admin API, which are resources already" }]);
  }
}

export async function listApiResources(ctx: Context, organizationId: string, query: ListQuery): Promise<Page<ApiResource>> {
  await requireOrganization(ctx, organizationId);
  const where: Prisma.ApiResourceWhereInput = { organizationId };
  const order = query.order ?? "asc";
  const page = await listPage(listMode(query), {
    count: () => ctx.db.apiResource.count({ where }),
    offset: (skip, take) => ctx.db.apiResource.findMany({ where, orderBy: [{ createdAt: order }, { id: order }], skip, take }),
    after: (afterId, take) =>
      ctx.db.apiResource.findMany({ where: { ...where, ...(afterId ? { id: order === "asc" ? { gt: afterId } : { lt: afterId } } : {}) }, orderBy: { id: order }, take }),
  });
  return { ...page, data: page.data.map(toApiResource) };
}

/** An API resource of a live (not deleted) organization, or 404. */
export async function requireApiResource(ctx: Context, id: string): Promise<ApiResourceRow> {
  const row = await ctx.db.apiResource.findFirst({ where: { id, organization: { status: { not: "deleted" } } } });
  if (!row) throw notFound("API resource");
  return row;
}

const identifierTaken = () => conflict("identifier_taken", "The organization already has an API resource with this identifier.", [{ field: "identifier", message: "is already used in this organization" }]);

async function assertIdentifierFree(ctx: Context, organizationId: string, identifier: string, exceptId?: string) {
  const existing = await ctx.db.apiResource.findUnique({ where: { organizationId_identifier: { organizationId, identifier } }, select: { id: true } });
  if (existing && existing.id !== exceptId) throw identifierTaken();
}

/**
 * A client that registered itself is nobody's choice: a resource open to such clients always asks
 * the person (features/api-resources.ts), so it cannot also skip consent.
 */
function assertConsentForDynamicClients(resource: { openToDynamicClients: boolean; consentRequired: boolean }) {
  if (resource.openToDynamicClients && !resource.consentRequired) {
    throw validation([{ field: "openToDynamicClients", message: "needs consentRequired: dynamically registered clients always ask the person" }]);
  }
}

export async function createApiResource(ctx: Context<"oidc" | "config">, organizationId: string, input: ApiResourceCreate): Promise<ApiResourceRow> {
  assertConsentForDynamicClients(input);
  await assertNotReserved(ctx, organizationId, input.identifier);
  await assertIdentifierFree(ctx, organizationId, input.identifier);
  assertDescribedScopes(input.scopeDescriptions, input.scopes);
  const row = await ctx.db.apiResource.create({ data: { organizationId, ...input } });
  dropProvider(ctx, organizationId);
  return row;
}

/**
 * Writes `input` if the resource is still at `expectedVersion` (If-Match). Scopes the resource no
 * longer defines leave its grants in the same write, so that a grant never names a scope its
 * resource lacks.
 */
export async function updateApiResource(
  ctx: Context<"oidc" | "config">,
  id: string,
  input: ApiResourceUpdate,
  expectedVersion: number | undefined,
): Promise<{ row: ApiResourceRow; narrowed: Array<{ clientId: string; scopes: string[] }> }> {
  const current = await requireApiResource(ctx, id);
  assertConsentForDynamicClients({
    openToDynamicClients: input.openToDynamicClients ?? current.openToDynamicClients,
    consentRequired: input.consentRequired ?? current.consentRequired,
  });
  if (input.identifier !== undefined && input.identifier !== current.identifier) {
    await assertNotReserved(ctx, current.organizationId, input.identifier);
    await assertIdentifierFree(ctx, current.organizationId, input.identifier, id);
  }
  const scopes = input.scopes ?? current.scopes;
  let scopeDescriptions = input.scopeDescriptions;
  if (scopeDescriptions) assertDescribedScopes(scopeDescriptions, scopes);
  else if (input.scopes !== undefined) {
    // Descriptions of the scopes this update drops go with them.
    const kept = new Set(scopes);
    scopeDescriptions = Object.fromEntries(Object.entries(scopeDescriptionsOf(current)).filter(([scope]) => kept.has(scope)));
  }
  const data = { ...input, ...(scopeDescriptions ? { scopeDescriptions } : {}), version: { increment: 1 } };
  await compareAndSet({ ifMatch: expectedVersion, read: current.version }, (guard) => ctx.db.apiResource.updateMany({ where: { id, ...guard }, data }));
  const narrowed: Array<{ clientId: string; scopes: string[] }> = [];
  if (input.scopes !== undefined) {
    const kept = new Set(input.scopes);
    const grants = await ctx.db.clientResourceGrant.findMany({ where: { resourceId: id }, orderBy: { clientId: "asc" } });
    for (const grant of grants.filter((g) => g.scopes.some((s) => !kept.has(s)))) {
      const scopes = grant.scopes.filter((s) => kept.has(s));
      await ctx.db.clientResourceGrant.update({ where: { clientId_resourceId: { clientId: grant.clientId, resourceId: id } }, data: { scopes } });
      narrowed.push({ clientId: grant.clientId, scopes });
    }
  }
  dropProvider(ctx, current.organizationId);
  return { row: await requireApiResource(ctx, id), narrowed };
}

/** Deletes the resource with its grants (the clients that had one are returned); tokens already issued for it live out their time. */
export async function deleteApiResource(ctx: Context<"oidc">, id: string, expectedVersion: number | undefined): Promise<{ row: ApiResourceRow; grantedClients: string[] }> {
  const current = await requireApiResource(ctx, id);
  const grants = await ctx.db.clientResourceGrant.findMany({ where: { resourceId: id }, select: { clientId: true }, orderBy: { clientId: "asc" } });
  await compareAndSet({ ifMatch: expectedVersion, read: current.version }, (guard) => ctx.db.apiResource.deleteMany({ where: { id, ...guard } }));
  dropProvider(ctx, current.organizationId);
  return { row: current, grantedClients: grants.map((g) => g.clientId) };
}

// ---------------------------------------------------------------------------------------------
// Which client may ask for which resource

const withIdentifier = { resource: { select: { identifier: true } } } as const;

/** A resource of the client's own organization, or 404: another organization's is not there for it. */
async function resourceOfClient(ctx: Context, client: ClientWithOrg, resourceId: string): Promise<ApiResourceRow> {
  const resource = await ctx.db.apiResource.findFirst({ where: { id: resourceId, organizationId: client.organizationId } });
  if (!resource) throw notFound("API resource");
  return resource;
}

export async function listClientResourceGrants(ctx: Context, clientId: string): Promise<ClientResourceGrant[]> {
  await requireClient(ctx, clientId);
  const rows = await ctx.db.clientResourceGrant.findMany({ where: { clientId }, include: withIdentifier, orderBy: { createdAt: "asc" } });
  return rows.map(toClientResourceGrant);
}

/** Grants (or regrants with other scopes) the client the resource; the scopes must be the resource's. */
export async function grantClientResource(
  ctx: Context<"oidc">,
  clientId: string,
  resourceId: string,
  scopes: string[],
): Promise<{ client: ClientWithOrg; resource: ApiResourceRow; grant: ClientResourceGrant }> {
  const client = await requireClient(ctx, clientId);
  const resource = await resourceOfClient(ctx, client, resourceId);
  const defined = new Set(resource.scopes);
  const unknown = scopes.filter((s) => !defined.has(s));
  if (unknown.length > 0) throw validation([{ field: "scopes", message: `names scopes the API resource does not define: ${unknown.join(" ")}` }]);
  const row = await ctx.db.clientResourceGrant.upsert({
    where: { clientId_resourceId: { clientId, resourceId } },
    create: { clientId, resourceId, scopes },
    update: { scopes },
    include: withIdentifier,
  });
  dropProvider(ctx, client.organizationId);
  return { client, resource, grant: toClientResourceGrant(row) };
}

export async function revokeClientResource(ctx: Context<"oidc">, clientId: string, resourceId: string): Promise<{ client: ClientWithOrg; resource: ApiResourceRow }> {
  const client = await requireClient(ctx, clientId);
  const resource = await resourceOfClient(ctx, client, resourceId);
  const deleted = await ctx.db.clientResourceGrant.deleteMany({ where: { clientId, resourceId } });
  if (deleted.count !== 1) throw notFound("grant");
  dropProvider(ctx, client.organizationId);
  return { client, resource };
}
