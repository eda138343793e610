import { createHash, randomBytes } from "node:crypto";
import type { Prisma, ScimToken as TokenRow } from "~/generated/prisma/client";
import {
  SCIM_TOKEN_PREFIX,
  type ScimToken,
  type ScimTokenCreate,
} from "~/schemas/scim-token";
import type { Context, Db } from "../context";
import { conflict, notFound } from "../errors";
import {
  listMode,
  listPage,
  type ListQuery,
  type Page,
} from "../admin/http/pagination";

/**
 * The bearer tokens of an organization's SCIM endpoint (decision 084). A value is
 * `porta_scim_` and 32 random bytes in base64url, shown once; only its SHA-256 is stored, and a
 * presented token is found by that hash (a lookup by a hash of 256 random bits leaks nothing
 * through timing). Several may be active at once, so a provisioning client can be moved to a new
 * token before the old one is revoked.
 */

export const hashScimToken = (value: string): string =>
  createHash("sha256").update(value, "utf8").digest("hex");

/** How often a token's last use is written: a busy provisioning client does not write a row per request. */
const LAST_USED_RESOLUTION_MS = 60_000;

export function scimTokenStatus(
  row: TokenRow,
  now = new Date()
): ScimToken["status"] {
  if (row.revokedAt) return "revoked";
  if (row.expiresAt <= now) return "expired";
  return "active";
}

export function toScimToken(row: TokenRow): ScimToken {
  return {
    id: row.id,
    organizationId: row.organizationId,
    name: row.name,
    prefix: row.prefix,
    status: scimTokenStatus(row),
    expiresAt: row.expiresAt.toISOString(),
    revokedAt: row.revokedAt?.toISOString() ?? null,
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
  };
}

async function requireLiveOrganization(ctx: Context, id: string) {
  const org = await ctx.db.organization.findUnique({
    where: { id },
    select: { id: true, slug: true, status: true },
  });
  if (!org || org.status === "deleted") throw notFound("organization");
  return org;
}

export async function listScimTokens(
  ctx: Context,
  organizationId: string,
  query: ListQuery
): Promise<Page<ScimToken>> {
  await requireLiveOrganization(ctx, organizationId);
  const prisma = ctx.db;
  const where: Prisma.ScimTokenWhereInput = { organizationId };
  const order = query.order ?? "desc";
  const page = await listPage(listMode(query), {
    count: () => prisma.scimToken.count({ where }),
    offset: (skip, take) =>
      prisma.scimToken.findMany({
        where,
        orderBy: [{ createdAt: order }, { id: order }],
        skip,
        take,
      }),
    after: (afterId, take) =>
      prisma.scimToken.findMany({
        where: {
          ...where,
          ...(afterId
            ? { id: order === "asc" ? { gt: afterId } : { lt: afterId } }
            : {}),
        },
        orderBy: { id: order },
        take,
      }),
  });
  return { ...page, data: page.data.map(toScimToken) };
}

/**
 * Issues a token. The super-admin organization has none: its users hold the Admin API's roles,
 * and a provisioning client must not be able to hand out `service-admin` through a group.
 */
export async function createScimToken(
  ctx: Context<"config">,
  organizationId: string,
  input: ScimTokenCreate,
  createdBy: string | null
): Promise<{ row: TokenRow; value: string }> {
  const org = await requireLiveOrganization(ctx, organizationId);
  if (org.slug === ctx.config.superAdminSlug) {
    throw conflict(
      "protected_organization",
      "SCIM provisioning is not available in the super-admin organization."
    );
  }
  const value = `${SCIM_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
  const row = await ctx.db.scimToken.create({
    data: {
      organizationId,
      name: input.name,
      tokenHash: hashScimToken(value),
      prefix: value.slice(0, SCIM_TOKEN_PREFIX.length + 4),
      expiresAt: new Date(Date.now() + input.expiresInDays * 86_400_000),
      createdBy,
    },
  });
  return { row, value };
}

export async function requireScimToken(
  ctx: Context,
  id: string
): Promise<TokenRow> {
  const row = await ctx.db.scimToken.findUnique({
    where: { id },
    include: { organization: { select: { status: true } } },
  });
  if (!row || row.organization.status === "deleted")
    throw notFound("SCIM token");
  const { organization: _org, ...token } = row;
  return token;
}

/** Revoking a revoked token changes nothing; what it provisioned stays. */
export async function revokeScimToken(
  ctx: Context,
  id: string
): Promise<{ row: TokenRow; revoked: boolean }> {
  const existing = await requireScimToken(ctx, id);
  if (existing.revokedAt) return { row: existing, revoked: false };
  return {
    row: await ctx.db.scimToken.update({
      where: { id },
      data: { revokedAt: new Date() },
    }),
    revoked: true,
  };
}

/**
 * The active token of `organizationId` the presented value is, or null: unknown, another
 * organization's, revoked or expired all look alike to the caller. The last use is written
 * at most once a minute.
 */
export async function findActiveScimToken(
  db: Db,
  organizationId: string,
  presented: string,
  now = new Date()
): Promise<TokenRow | null> {
  if (!presented.startsWith(SCIM_TOKEN_PREFIX) || presented.length > 200)
    return null;
  const row = await db.scimToken.findUnique({
    where: { tokenHash: hashScimToken(presented) },
  });
  if (
    !row ||
    row.organizationId !== organizationId ||
    scimTokenStatus(row, now) !== "active"
  )
    return null;
  if (
    !row.lastUsedAt ||
    now.getTime() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS
  ) {
    await db.scimToken.updateMany({
      where: { id: row.id },
      data: { lastUsedAt: now },
    });
  }
  return row;
}
