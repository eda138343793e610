import type { Organization as OrganizationRow, Prisma } from "~/generated/prisma/client";
import type { Organization, OrganizationCreate, OrganizationUpdate } from "~/schemas/organization";
import { NEW_ORGANIZATION_DEFAULTS, SlugSchema } from "~/schemas/organization";
import { invalidateOrganization } from "../../directory/organizations";
import type { Context } from "../../context";
import { compareAndSet } from "../../db/compare-and-set";
import { conflict, notFound } from "../../errors";
import { ensureOrganizationRoles } from "../organization-roles";
import { listMode, listPage, type ListQuery, type Page } from "../http/pagination";

export function toOrganization(row: OrganizationRow): Organization {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    status: row.status as Organization["status"],
    defaultLoginMethods: row.defaultLoginMethods as Organization["defaultLoginMethods"],
    twoFactorPolicy: row.twoFactorPolicy as Organization["twoFactorPolicy"],
    defaultLocale: row.defaultLocale,
    oauth21: row.oauth21,
    botChallenge: row.botChallenge as Organization["botChallenge"],
    botChallengeCost: row.botChallengeCost,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export interface OrganizationListQuery extends ListQuery {
  q?: string | undefined;
  status?: "active" | "suspended" | "deleted" | undefined;
  sort?: "createdAt" | "name" | "slug" | undefined;
}

export async function listOrganizations(ctx: Context, query: OrganizationListQuery): Promise<Page<Organization>> {
  const prisma = ctx.db;
  const where: Prisma.OrganizationWhereInput = {
    ...(query.status ? { status: query.status } : { status: { not: "deleted" } }),
    ...(query.q ? { OR: [{ name: { contains: query.q, mode: "insensitive" } }, { slug: { contains: query.q.toLowerCase() } }] } : {}),
  };
  const order = query.order ?? "asc";
  const page = await listPage(listMode(query), {
    count: () => prisma.organization.count({ where }),
    offset: (skip, take) => prisma.organization.findMany({ where, orderBy: [{ [query.sort ?? "createdAt"]: order }, { id: order }], skip, take }),
    after: (afterId, take) =>
      prisma.organization.findMany({ where: { ...where, ...(afterId ? { id: order === "asc" ? { gt: afterId } : { lt: afterId } } : {}) }, orderBy: { id: order }, take }),
  });
  return { ...page, data: page.data.map(toOrganization) };
}

export async function requireOrganization(ctx: Context, id: string): Promise<OrganizationRow> {
  const row = await ctx.db.organization.findUnique({ where: { id } });
  if (!row) throw notFound("organization");
  return row;
}

/** Creates an organization together with its first signing key and its administration roles (one transaction: never one without the others). */
export async function createOrganization(ctx: Context<"keys" | "oidc">, input: OrganizationCreate): Promise<OrganizationRow> {
  const row = await ctx.db.organization.create({
    data: {
      name: input.name,
      slug: input.slug,
      defaultLoginMethods: [...(input.defaultLoginMethods ?? NEW_ORGANIZATION_DEFAULTS.defaultLoginMethods)],
      twoFactorPolicy: input.twoFactorPolicy ?? NEW_ORGANIZATION_DEFAULTS.twoFactorPolicy,
      defaultLocale: input.defaultLocale ?? NEW_ORGANIZATION_DEFAULTS.defaultLocale,
      oauth21: input.oauth21 ?? NEW_ORGANIZATION_DEFAULTS.oauth21,
      botChallenge: input.botChallenge ?? NEW_ORGANIZATION_DEFAULTS.botChallenge,
      botChallengeCost: input.botChallengeCost ?? NEW_ORGANIZATION_DEFAULTS.botChallengeCost,
    },
  });
  await ctx.keys.ensureActiveKeyIn(ctx.db, row.id);
  await ensureOrganizationRoles(ctx.db, row.id);
  // A slug that was unknown a moment ago may sit in the registry's negative cache.
  ctx.afterCommit(() => ctx.oidc.invalidate(row.id));
  return row;
}

/** Updates with optimistic concurrency: `expectedVersion` (from If-Match) must still be current. */
export async function updateOrganization(ctx: Context<"cache" | "oidc">, id: string, input: OrganizationUpdate, expectedVersion: number | undefined): Promise<OrganizationRow> {
  const prisma = ctx.db;
  const current = await requireOrganization(ctx, id);
  if (current.status === "deleted") throw notFound("organization");
  await compareAndSet({ ifMatch: expectedVersion, read: current.version }, (guard) =>
    prisma.organization.updateMany({ where: { id, ...guard }, data: { ...input, version: { increment: 1 } } }),
  );
  const row = await requireOrganization(ctx, id);
  ctx.afterCommit(() => forgetOrganization(ctx, row));
  return row;
}

/**
 * Suspending or deleting ends the organization's protocol routes (404) and its sessions and
 * tokens at once. The super-admin organization can be neither.
 */
export async function setOrganizationStatus(ctx: Context<"cache" | "oidc" | "config">, id: string, status: "active" | "suspended" | "deleted"): Promise<OrganizationRow> {
  const prisma = ctx.db;
  const current = await requireOrganization(ctx, id);
  if (current.status === "deleted") throw notFound("organization");
  if (current.slug === ctx.config.superAdminSlug && status !== "active") {
    throw conflict("protected_organization", "The super-admin organization cannot be suspended or deleted.");
  }
  const row = await prisma.organization.update({ where: { id }, data: { status, version: { increment: 1 } } });
  if (status !== "active") await prisma.oidcPayload.deleteMany({ where: { organizationId: id } });
  ctx.afterCommit(() => forgetOrganization(ctx, row));
  return row;
}

/** After a committed change: the cached organization and its provider are gone everywhere. */
export async function forgetOrganization(ctx: Context<"cache" | "oidc">, row: OrganizationRow) {
  await invalidateOrganization(ctx.cache, row);
  await ctx.oidc.invalidate(row.id);
}

export async function validateSlug(ctx: Context, slug: string) {
  const parsed = SlugSchema.safeParse(slug);
  if (!parsed.success) return { slug, valid: false, available: false, message: parsed.error.issues[0]!.message };
  const taken = await ctx.db.organization.findUnique({ where: { slug: parsed.data }, select: { id: true } });
  return { slug: parsed.data, valid: true, available: !taken, ...(taken ? { message: "is already taken" } : {}) };
}
