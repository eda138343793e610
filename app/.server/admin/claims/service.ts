import type { Application as ApplicationRow, CustomClaimDefinition as ClaimRow, Prisma, User as UserRow } from "~/generated/prisma/client";
import { claimValueProblem, type ClaimType, type ClaimValue, type CustomClaim, type CustomClaimCreate, type CustomClaimUpdate } from "~/schemas/claim";
import type { Context } from "../../context";
import { requireApplication } from "../applications/service";
import { conflict, notFound, validation } from "../../errors";
import { listMode, listPage, type ListQuery, type Page } from "../http/pagination";
import { assertScopesStayUsable } from "./scopes";

export function toClaim(row: ClaimRow): CustomClaim {
  return {
    id: row.id,
    applicationId: row.applicationId,
    claimName: row.claimName,
    claimType: row.claimType as ClaimType,
    scope: row.scope,
    description: row.description,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

type ValueRow = Prisma.CustomClaimValueGetPayload<{ include: { claim: true } }>;

export function toClaimValue(row: ValueRow): ClaimValue {
  return {
    claimId: row.claimId,
    userId: row.userId,
    applicationId: row.claim.applicationId,
    claimName: row.claim.claimName,
    claimType: row.claim.claimType as ClaimType,
    scope: row.claim.scope,
    value: row.value as ClaimValue["value"],
    updatedAt: row.updatedAt.toISOString(),
  };
}

export async function listClaims(ctx: Context, applicationId: string, query: ListQuery): Promise<Page<CustomClaim>> {
  const prisma = ctx.db;
  await requireApplication(ctx, applicationId);
  const where: Prisma.CustomClaimDefinitionWhereInput = { applicationId };
  const order = query.order ?? "asc";
  const page = await listPage(listMode(query), {
    count: () => prisma.customClaimDefinition.count({ where }),
    offset: (skip, take) => prisma.customClaimDefinition.findMany({ where, orderBy: [{ createdAt: order }, { id: order }], skip, take }),
    after: (afterId, take) =>
      prisma.customClaimDefinition.findMany({ where: { ...where, ...(afterId ? { id: order === "asc" ? { gt: afterId } : { lt: afterId } } : {}) }, orderBy: { id: order }, take }),
  });
  return { ...page, data: page.data.map(toClaim) };
}

export interface ClaimOf {
  app: ApplicationRow;
  claim: ClaimRow;
}

export async function requireClaim(ctx: Context, applicationId: string, claimId: string): Promise<ClaimOf> {
  const app = await requireApplication(ctx, applicationId);
  const claim = await ctx.db.customClaimDefinition.findFirst({ where: { id: claimId, applicationId } });
  if (!claim) throw notFound("claim");
  return { app, claim };
}

/**
 * One claim name means one thing across an organization: userinfo and ID tokens are per
 * organization, so two applications defining `department` would overwrite each other's values.
 */
async function assertNameFree(ctx: Context, organizationId: string, claimName: string, exceptId?: string) {
  const taken = await ctx.db.customClaimDefinition.findFirst({
    where: {
      claimName: { equals: claimName, mode: "insensitive" },
      application: { organizationId },
      ...(exceptId ? { id: { not: exceptId } } : {}),
    },
    select: { id: true },
  });
  if (taken) throw conflict("duplicate", "A custom claim with this claimName already exists in the organization.", [{ field: "claimName", message: "already taken" }]);
}

export async function createClaim(ctx: Context<"oidc">, applicationId: string, input: CustomClaimCreate): Promise<ClaimOf> {
  const app = await requireApplication(ctx, applicationId);
  await assertNameFree(ctx, app.organizationId, input.claimName);
  const claim = await ctx.db.customClaimDefinition.create({
    data: { applicationId, claimName: input.claimName, claimType: input.claimType, scope: input.scope, description: input.description ?? null },
  });
  // The organization's provider advertises and releases claims by scope: rebuild it once committed.
  ctx.afterCommit(() => ctx.oidc.invalidate(app.organizationId));
  return { app, claim };
}

export async function updateClaim(ctx: Context<"oidc">, applicationId: string, claimId: string, input: CustomClaimUpdate): Promise<ClaimOf> {
  const { app, claim: current } = await requireClaim(ctx, applicationId, claimId);
  const prisma = ctx.db;
  if (input.claimName !== undefined && input.claimName !== current.claimName) await assertNameFree(ctx, app.organizationId, input.claimName, claimId);
  if (input.claimType !== undefined && input.claimType !== current.claimType) {
    const values = await prisma.customClaimValue.count({ where: { claimId } });
    if (values > 0) {
      throw conflict("claim_has_values", `The claim type cannot change while ${values} user value(s) exist. Delete them first.`, [
        { field: "claimType", message: "cannot change while values exist" },
      ]);
    }
  }
  if (input.scope !== undefined && input.scope !== current.scope) await assertScopesStayUsable(ctx, app.organizationId, [claimId]);
  const claim = await prisma.customClaimDefinition.update({ where: { id: claimId }, data: input });
  ctx.afterCommit(() => ctx.oidc.invalidate(app.organizationId));
  return { app, claim };
}

export async function deleteClaim(ctx: Context<"oidc">, applicationId: string, claimId: string): Promise<ClaimOf> {
  const found = await requireClaim(ctx, applicationId, claimId);
  await assertScopesStayUsable(ctx, found.app.organizationId, [claimId]);
  // Its values go with it (cascade).
  await ctx.db.customClaimDefinition.delete({ where: { id: claimId } });
  ctx.afterCommit(() => ctx.oidc.invalidate(found.app.organizationId));
  return found;
}

// ---------------------------------------------------------------------------------------------
// Values: resolved by claim id plus user id; the application segment of the path is not a filter.

async function claimWithOrg(ctx: Context, claimId: string) {
  const claim = await ctx.db.customClaimDefinition.findFirst({
    where: { id: claimId, application: { organization: { status: { not: "deleted" } } } },
    include: { application: { select: { organizationId: true } } },
  });
  if (!claim) throw notFound("claim");
  return claim;
}

async function findUser(ctx: Context, userId: string): Promise<UserRow> {
  const user = await ctx.db.user.findFirst({ where: { id: userId, organization: { status: { not: "deleted" } } } });
  if (!user) throw notFound("user");
  return user;
}

export async function requireClaimValue(ctx: Context, claimId: string, userId: string): Promise<ClaimValue> {
  await claimWithOrg(ctx, claimId);
  await findUser(ctx, userId);
  const row = await ctx.db.customClaimValue.findUnique({ where: { claimId_userId: { claimId, userId } }, include: { claim: true } });
  if (!row) throw notFound("claim value");
  return toClaimValue(row);
}

export interface ValueChange {
  value: ClaimValue;
  organizationId: string;
}

export async function setClaimValue(ctx: Context, claimId: string, userId: string, value: unknown): Promise<ValueChange> {
  const claim = await claimWithOrg(ctx, claimId);
  const user = await findUser(ctx, userId);
  if (user.organizationId !== claim.application.organizationId) {
    throw validation([{ field: "userId", message: "is not a user of the organization the claim's application belongs to" }]);
  }
  const problem = claimValueProblem(claim.claimType as ClaimType, value);
  if (problem) throw validation([{ field: "value", message: `${problem} (the claim's type is ${claim.claimType})` }]);
  const json = value as Prisma.InputJsonValue;
  const row = await ctx.db.customClaimValue.upsert({
    where: { claimId_userId: { claimId, userId } },
    create: { claimId, userId, value: json },
    update: { value: json },
    include: { claim: true },
  });
  return { value: toClaimValue(row), organizationId: user.organizationId };
}

export async function deleteClaimValue(ctx: Context, claimId: string, userId: string): Promise<ValueChange> {
  const value = await requireClaimValue(ctx, claimId, userId);
  await ctx.db.customClaimValue.delete({ where: { claimId_userId: { claimId, userId } } });
  const user = await findUser(ctx, userId);
  return { value, organizationId: user.organizationId };
}

/** All of a user's values, across the applications of the user's organization. */
export async function listUserClaimValues(ctx: Context, userId: string, query: ListQuery): Promise<Page<ClaimValue>> {
  const prisma = ctx.db;
  await findUser(ctx, userId);
  const where: Prisma.CustomClaimValueWhereInput = { userId };
  const order = query.order ?? "asc";
  // Values are keyed by claim: the claim id (a UUIDv7) orders and pages them.
  const withId = (rows: ValueRow[]) => rows.map((row) => ({ ...row, id: row.claimId }));
  const page = await listPage(listMode(query), {
    count: () => prisma.customClaimValue.count({ where }),
    offset: async (skip, take) => withId(await prisma.customClaimValue.findMany({ where, include: { claim: true }, orderBy: { claimId: order }, skip, take })),
    after: async (afterId, take) =>
      withId(
        await prisma.customClaimValue.findMany({
          where: { ...where, ...(afterId ? { claimId: order === "asc" ? { gt: afterId } : { lt: afterId } } : {}) },
          include: { claim: true },
          orderBy: { claimId: order },
          take,
        }),
      ),
  });
  return { ...page, data: page.data.map(toClaimValue) };
}
