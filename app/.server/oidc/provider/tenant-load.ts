import type { Organization } from "~/generated/prisma/client";
import type { Database } from "../../db/client";
import { PUBLISHED, type PublishedKeyRow } from "./keys";

/** A published key as discovery and JWKS need it: nothing secret. */
export type PublicKeyRow = Omit<PublishedKeyRow, "privateJwkEncrypted"> & { publicJwk: unknown };

/** What an organization's public documents are made of, read together. */
export interface PublicTenantInput {
  organization: Organization;
  /** Published keys, newest first (keys.ts orders them for signing). */
  keys: PublicKeyRow[];
  /** Custom claim definitions of the organization's applications. */
  customClaims: Array<{ id: string; claimName: string; scope: string }>;
}

/**
 * An active API resource of the organization as its provider needs it (decision 077): the
 * scopes it defines, its token lifetime and, per client id, the scopes that client was granted.
 */
export interface TenantApiResource {
  identifier: string;
  scopes: string[];
  accessTokenTtlSeconds: number | null;
  /** False: the client's grant is enough, the person is not asked for these scopes. */
  consentRequired: boolean;
  /** Clients registered at the registration endpoint may ask for any of its scopes without a grant. */
  openToDynamicClients: boolean;
  grants: Record<string, string[]>;
}

/** What a provider is built from: the public input, the sealed private keys and the API resources. */
export interface TenantInput extends PublicTenantInput {
  keys: Array<PublicKeyRow & Pick<PublishedKeyRow, "privateJwkEncrypted">>;
  apiResources: TenantApiResource[];
}

type Sql = Pick<Database, "query">;

type Row = Organization & {
  _keys: Array<Omit<PublicKeyRow, "retireAfter"> & { retireAfter: string | null; privateJwkEncrypted?: string }>;
  _claims: PublicTenantInput["customClaims"];
  /** Only in a provider's build (the private variant): public documents do not name them. */
  _resources?: TenantApiResource[];
};

/**
 * The organization, its published signing keys and its custom claim definitions in ONE round
 * trip (decision 034), as plain SQL through the driver (decision 057: Prisma's query building
 * cost more than the statement). Providers are built and documents described on every pool
 * miss. The organization's own columns come back as Prisma reads them (test/oidc/tenant-load.test.ts
 * compares them with findUnique); the two lists come as JSON, so their timestamps are turned
 * back into Dates here. A provider's build (`privateKeys`) also reads the active API resources
 * with their client grants (decision 077): the Admin API drops the provider when they change.
 * `where` is one of the fixed clauses below, never caller text.
 */
const RESOURCES_COLUMN = `,
      COALESCE((
        SELECT json_agg(json_build_object(
          'identifier', r."identifier", 'scopes', r."scopes", 'accessTokenTtlSeconds', r."accessTokenTtlSeconds", 'consentRequired', r."consentRequired", 'openToDynamicClients', r."openToDynamicClients",
          'grants', COALESCE((SELECT json_object_agg(g."clientId", g."scopes") FROM "ClientResourceGrant" g WHERE g."resourceId" = r."id"), '{}'::json)
        ) ORDER BY r."identifier")
        FROM "ApiResource" r
        WHERE r."organizationId" = o."id" AND r."status" = 'active'
      ), '[]'::json) AS "_resources"`;

function tenantsSql(where: string, privateKeys: boolean): string {
  return `SELECT o.*,
      COALESCE((
        SELECT json_agg(json_build_object(
          'id', k."id", 'organizationId', k."organizationId", 'status', k."status",
          'retireAfter', k."retireAfter", 'publicJwk', k."publicJwk"${privateKeys ? `, 'privateJwkEncrypted', k."privateJwkEncrypted"` : ""}
        ) ORDER BY k."createdAt" DESC)
        FROM "SigningKey" k
        WHERE (k."organizationId" = o."id" AND k."status" = ANY($1::text[]))
           OR (k."organizationId" IS NULL AND k."status" = 'retiring')
      ), '[]'::json) AS "_keys",
      COALESCE((
        SELECT json_agg(json_build_object('id', c."id", 'claimName', c."claimName", 'scope', c."scope") ORDER BY c."id")
        FROM "CustomClaimDefinition" c JOIN "Application" a ON a."id" = c."applicationId"
        WHERE a."organizationId" = o."id"
      ), '[]'::json) AS "_claims"${privateKeys ? RESOURCES_COLUMN : ""}
    FROM "Organization" o
    ${where}`;
}

const BY_SLUG = `WHERE o."slug" = $2`;
/** Keyset pages of the active organizations, in slug order. */
const ACTIVE_AFTER = `WHERE o."status" = 'active' AND o."slug" > $2 ORDER BY o."slug" LIMIT $3`;
const BY_SLUGS = `WHERE o."slug" = ANY($2::text[]::citext[])`;

const SINGLE_WITH_PRIVATE = tenantsSql(BY_SLUG, true);
const SINGLE_PUBLIC = tenantsSql(BY_SLUG, false);
const PAGE_PUBLIC = tenantsSql(ACTIVE_AFTER, false);
const MANY_PUBLIC = tenantsSql(BY_SLUGS, false);

function toInput<Input extends PublicTenantInput>(row: Row): Input {
  const { _keys, _claims, _resources, ...organization } = row;
  return {
    organization,
    keys: _keys.map((key) => ({ ...key, retireAfter: key.retireAfter === null ? null : new Date(key.retireAfter) })),
    customClaims: _claims,
    ...(_resources ? { apiResources: _resources } : {}),
  } as Input;
}

/** What a provider is built from, for one organization (any status); undefined when the slug is unknown. */
export async function loadTenant(sql: Sql, slug: string): Promise<TenantInput | undefined> {
  const [row] = await sql.query<Row>(SINGLE_WITH_PRIVATE, [PUBLISHED, slug.toLowerCase()]);
  return row && toInput<TenantInput>(row);
}

/** What one organization's public documents are made of (any status); undefined when the slug is unknown. */
export async function loadPublicTenant(sql: Sql, slug: string): Promise<PublicTenantInput | undefined> {
  const [row] = await sql.query<Row>(SINGLE_PUBLIC, [PUBLISHED, slug.toLowerCase()]);
  return row && toInput<PublicTenantInput>(row);
}

/** Up to `limit` active organizations whose slug sorts after `afterSlug` ("" for the first page), in slug order. */
export async function loadActiveTenantsAfter(sql: Sql, afterSlug: string, limit: number): Promise<PublicTenantInput[]> {
  const rows = await sql.query<Row>(PAGE_PUBLIC, [PUBLISHED, afterSlug, limit]);
  return rows.map((row) => toInput<PublicTenantInput>(row));
}

/** The organizations of these (lower-case) slugs that exist, any status, in no particular order. */
export async function loadPublicTenants(sql: Sql, slugs: string[]): Promise<PublicTenantInput[]> {
  if (slugs.length === 0) return [];
  const rows = await sql.query<Row>(MANY_PUBLIC, [PUBLISHED, slugs]);
  return rows.map((row) => toInput<PublicTenantInput>(row));
}
