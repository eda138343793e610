import { randomBytes } from "node:crypto";
import type { Prisma, RegistrationToken as TokenRow } from "~/generated/prisma/client";
import {
  registrationPolicyOf,
  type RegistrationPolicy,
  type RegistrationToken,
  type RegistrationTokenCreate,
} from "~/schemas/registration";
import type { Context } from "../../context";
import { hashClientSecret } from "../../directory/clients";
import { compareAndSet } from "../../db/compare-and-set";
import { conflict, notFound } from "../../errors";
import { forgetOrganization } from "../organizations/service";
import { listMode, listPage, type ListQuery, type Page } from "../http/pagination";

/**
 * The administrator's side of dynamic client registration (decision 054): an organization's
 * registration policy and the initial access tokens (RFC 7591 §3) that let someone register.
 * Token values are 256-bit random and shown once; only their SHA-256 is stored.
 */

async function requireLiveOrganization(ctx: Context, id: string) {
  const org = await ctx.db.organization.findUnique({ where: { id } });
  if (!org || org.status === "deleted") throw notFound("organization");
  return org;
}

/** The super-admin organization's clients may call the Admin API: nobody registers one there. */
function assertNotSuperAdmin(ctx: Context<"config">, slug: string) {
  if (slug === ctx.config.superAdminSlug) {
    throw conflict("protected_organization", "Dynamic client registration is not available in the super-admin organization.");
  }
}

export async function requireRegistrationPolicy(ctx: Context, organizationId: string): Promise<{ policy: RegistrationPolicy; version: number }> {
  const org = await requireLiveOrganization(ctx, organizationId);
  return { policy: registrationPolicyOf(org.registrationPolicy), version: org.version };
}

/** Replaces the policy; the cached organization and its providers are dropped, so discovery names the endpoint, or stops naming it. */
export async function setRegistrationPolicy(
  ctx: Context<"cache" | "oidc" | "config">,
  organizationId: string,
  policy: RegistrationPolicy,
  expectedVersion: number | undefined,
): Promise<{ before: RegistrationPolicy; policy: RegistrationPolicy; version: number }> {
  const org = await requireLiveOrganization(ctx, organizationId);
  if (policy.enabled) assertNotSuperAdmin(ctx, org.slug);
  await compareAndSet({ ifMatch: expectedVersion, read: org.version }, (guard) =>
    ctx.db.organization.updateMany({
      where: { id: organizationId, ...guard },
      data: { registrationPolicy: policy as unknown as Prisma.InputJsonValue, version: { increment: 1 } },
    }),
  );
  ctx.afterCommit(() => forgetOrganization(ctx, org));
  return { before: registrationPolicyOf(org.registrationPolicy), policy, version: org.version + 1 };
}

export function registrationTokenStatus(row: TokenRow, now = new Date()): RegistrationToken["status"] {
  if (row.revokedAt) return "revoked";
  if (row.expiresAt <= now) return "expired";
  if (row.maxUses !== null && row.uses >= row.maxUses) return "used_up";
  return "active";
}

export function toRegistrationToken(row: TokenRow): RegistrationToken {
  return {
    id: row.id,
    organizationId: row.organizationId,
    hint: row.hint,
    label: row.label,
    expiresAt: row.expiresAt.toISOString(),
    maxUses: row.maxUses,
    uses: row.uses,
    status: registrationTokenStatus(row),
    createdAt: row.createdAt.toISOString(),
    revokedAt: row.revokedAt?.toISOString() ?? null,
  };
}

export async function listRegistrationTokens(ctx: Context, organizationId: string, query: ListQuery): Promise<Page<RegistrationToken>> {
  await requireLiveOrganization(ctx, organizationId);
  const prisma = ctx.db;
  const where: Prisma.RegistrationTokenWhereInput = { organizationId };
  const order = query.order ?? "desc";
  const page = await listPage(listMode(query), {
    count: () => prisma.registrationToken.count({ where }),
    offset: (skip, take) => prisma.registrationToken.findMany({ where, orderBy: [{ createdAt: order }, { id: order }], skip, take }),
    after: (afterId, take) =>
      prisma.registrationToken.findMany({ where: { ...where, ...(afterId ? { id: order === "asc" ? { gt: afterId } : { lt: afterId } } : {}) }, orderBy: { id: order }, take }),
  });
  return { ...page, data: page.data.map(toRegistrationToken) };
}

export async function createRegistrationToken(ctx: Context<"config">, organizationId: string, input: RegistrationTokenCreate): Promise<{ row: TokenRow; value: string }> {
  const org = await requireLiveOrganization(ctx, organizationId);
  assertNotSuperAdmin(ctx, org.slug);
  const value = randomBytes(32).toString("base64url");
  const row = await ctx.db.registrationToken.create({
    data: {
      organizationId,
      tokenHash: hashClientSecret(value),
      hint: value.slice(-4),
      label: input.label ?? null,
      expiresAt: new Date(Date.now() + input.expiresInSeconds * 1000),
      maxUses: input.maxUses,
    },
  });
  return { row, value };
}

/** Revoking a revoked token changes nothing; clients it registered stay. */
export async function revokeRegistrationToken(ctx: Context, organizationId: string, tokenId: string): Promise<TokenRow> {
  const existing = await ctx.db.registrationToken.findFirst({ where: { id: tokenId, organizationId } });
  if (!existing) throw notFound("registration token");
  if (existing.revokedAt) return existing;
  return ctx.db.registrationToken.update({ where: { id: tokenId }, data: { revokedAt: new Date() } });
}
