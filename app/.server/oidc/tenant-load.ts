import type { Organization, PrismaClient } from "~/generated/prisma/client";
import { PUBLISHED, type PublishedKeyRow } from "./keys";

/** What a provider is built from, read together. */
export interface TenantInput {
  organization: Organization;
  /** Published keys, newest first (keys.ts orders them for signing). */
  keys: Array<PublishedKeyRow & { publicJwk: unknown }>;
  /** Custom claim definitions of the organization's applications. */
  customClaims: Array<{ id: string; claimName: string; scope: string }>;
}

interface Row extends Organization {
  _keys: Array<Omit<TenantInput["keys"][number], "retireAfter"> & { retireAfter: string | null }>;
  _claims: TenantInput["customClaims"];
}

/**
 * The organization, its published signing keys and its custom claim definitions in ONE round
 * trip (decision 034): a provider is built on every pool miss, and its three separate reads
 * were most of a build's time. The organization's own columns come back as Prisma reads them
 * (test/oidc/tenant-load.test.ts compares them with findUnique); the two lists come as JSON,
 * so their timestamps are turned back into Dates here.
 */
export async function loadTenant(prisma: PrismaClient, slug: string): Promise<TenantInput | undefined> {
  const rows = await prisma.$queryRaw<Row[]>`
    SELECT o.*,
      COALESCE((
        SELECT json_agg(json_build_object(
          'id', k."id", 'organizationId', k."organizationId", 'status', k."status",
          'retireAfter', k."retireAfter", 'privateJwkEncrypted', k."privateJwkEncrypted",
          'publicJwk', k."publicJwk"
        ) ORDER BY k."createdAt" DESC)
        FROM "SigningKey" k
        WHERE (k."organizationId" = o."id" AND k."status" = ANY(${PUBLISHED}::text[]))
           OR (k."organizationId" IS NULL AND k."status" = 'retiring')
      ), '[]'::json) AS "_keys",
      COALESCE((
        SELECT json_agg(json_build_object('id', c."id", 'claimName', c."claimName", 'scope', c."scope") ORDER BY c."id")
        FROM "CustomClaimDefinition" c JOIN "Application" a ON a."id" = c."applicationId"
        WHERE a."organizationId" = o."id"
      ), '[]'::json) AS "_claims"
    FROM "Organization" o
    WHERE o."slug" = ${slug.toLowerCase()}`;
  const row = rows[0];
  if (!row) return undefined;
  const { _keys, _claims, ...organization } = row;
  return {
    organization,
    keys: _keys.map((key) => ({ ...key, retireAfter: key.retireAfter === null ? null : new Date(key.retireAfter) })),
    customClaims: _claims,
  };
}
