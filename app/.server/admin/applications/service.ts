import type { Application as ApplicationRow, ApplicationModule as ModuleRow, Prisma } from "~/generated/prisma/client";
import type { Application, ApplicationCreate, ApplicationModule, ApplicationUpdate, ModuleCreate, ModuleUpdate } from "~/schemas/application";
import { invalidateClient } from "../../directory/clients";
import type { Context } from "../../context";
import { assertScopesStayUsable } from "../claims/scopes";
import { compareAndSet } from "../../db/compare-and-set";
import { conflict, notFound, validation } from "../../errors";
import { listMode, listPage, type ListQuery, type Page } from "../http/pagination";

export function toApplication(row: ApplicationRow): Application {
  return {
    id: row.id,
    organizationId: row.organizationId,
    name: row.name,
    description: row.description,
    status: row.status as Application["status"],
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function toModule(row: ModuleRow): ApplicationModule {
  return {
    id: row.id,
    applicationId: row.applicationId,
    name: row.name,
    description: row.description,
    status: row.status as ApplicationModule["status"],
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export interface ApplicationListQuery extends ListQuery {
  organizationId?: string | undefined;
  status?: "active" | "inactive" | undefined;
  q?: string | undefined;
  sort?: "createdAt" | "name" | undefined;
}

export async function listApplications(ctx: Context, query: ApplicationListQuery): Promise<Page<Application>> {
  const prisma = ctx.db;
  const where: Prisma.ApplicationWhereInput = {
    organization: { status: { not: "deleted" } },
    ...(query.organizationId ? { organizationId: query.organizationId } : {}),
    ...(query.status ? { status: query.status } : {}),
    ...(query.q ? { name: { contains: query.q, mode: "insensitive" } } : {}),
  };
  const order = query.order ?? "asc";
  const page = await listPage(listMode(query), {
    count: () => prisma.application.count({ where }),
    offset: (skip, take) => prisma.application.findMany({ where, orderBy: [{ [query.sort ?? "createdAt"]: order }, { id: order }], skip, take }),
    after: (afterId, take) =>
      prisma.application.findMany({ where: { ...where, ...(afterId ? { id: order === "asc" ? { gt: afterId } : { lt: afterId } } : {}) }, orderBy: { id: order }, take }),
  });
  return { ...page, data: page.data.map(toApplication) };
}

/** An application of a live (not deleted) organization, or 404. */
export async function requireApplication(ctx: Context, id: string): Promise<ApplicationRow> {
  const row = await ctx.db.application.findFirst({ where: { id, organization: { status: { not: "deleted" } } } });
  if (!row) throw notFound("application");
  return row;
}

/** The organization a new resource names in its body: it must exist and not be deleted (422 otherwise). */
export async function requireOrganizationRef(ctx: Context, organizationId: string) {
  const org = await ctx.db.organization.findUnique({ where: { id: organizationId } });
  if (!org || org.status === "deleted") throw validation([{ field: "organizationId", message: "does not name an existing organization" }]);
  return org;
}

export async function createApplication(ctx: Context, input: ApplicationCreate): Promise<ApplicationRow> {
  await requireOrganizationRef(ctx, input.organizationId);
  return ctx.db.application.create({
    data: { organizationId: input.organizationId, name: input.name, description: input.description ?? null },
  });
}

/** Updates with optimistic concurrency: `expectedVersion` (from If-Match) must still be current. */
export async function updateApplication(ctx: Context, id: string, input: ApplicationUpdate, expectedVersion: number | undefined): Promise<ApplicationRow> {
  const current = await requireApplication(ctx, id);
  await compareAndSet({ ifMatch: expectedVersion, read: current.version }, (guard) =>
    ctx.db.application.updateMany({ where: { id, ...guard }, data: { ...input, version: { increment: 1 } } }),
  );
  return requireApplication(ctx, id);
}

/** The clients of an application read the application's status through the client cache. */
async function invalidateApplicationClients(ctx: Context<"cache">, applicationId: string) {
  const clients = await ctx.db.client.findMany({ where: { applicationId }, select: { id: true } });
  ctx.afterCommit(async () => {
    for (const client of clients) await invalidateClient(ctx.cache, client.id);
  });
}

/** Deactivating an application stops all of its clients at once; activating lets them work again. */
export async function setApplicationStatus(ctx: Context<"cache">, id: string, status: "active" | "inactive", expectedVersion: number | undefined): Promise<ApplicationRow> {
  const current = await requireApplication(ctx, id);
  await compareAndSet({ ifMatch: expectedVersion, read: current.version }, (guard) =>
    ctx.db.application.updateMany({ where: { id, ...guard }, data: { status, version: { increment: 1 } } }),
  );
  await invalidateApplicationClients(ctx, id);
  return requireApplication(ctx, id);
}

/**
 * Deletes an application with its modules, claim definitions and claim values. An application
 * that still has clients is not deleted (409): its clients would otherwise outlive it without the
 * application's gate. Delete them or move them to another application first. Nor is one whose
 * claims alone support a scope that other clients of the organization still name (409).
 */
export async function deleteApplication(ctx: Context<"oidc">, id: string, expectedVersion: number | undefined): Promise<ApplicationRow> {
  const prisma = ctx.db;
  const current = await requireApplication(ctx, id);
  const clients = await prisma.client.count({ where: { applicationId: id } });
  if (clients > 0) {
    throw conflict("application_has_clients", `The application still has ${clients} client(s). Delete them or move them to another application first.`, [
      { field: "clients", message: `${clients} client(s) belong to this application` },
    ]);
  }
  const claims = await prisma.customClaimDefinition.findMany({ where: { applicationId: id }, select: { id: true } });
  await assertScopesStayUsable(ctx, current.organizationId, claims.map((c) => c.id));
  await compareAndSet({ ifMatch: expectedVersion, read: current.version }, (guard) => prisma.application.deleteMany({ where: { id, ...guard } }));
  // Its claim definitions are gone: the organization's provider no longer advertises them.
  ctx.afterCommit(() => ctx.oidc.invalidate(current.organizationId));
  return current;
}

// ---------------------------------------------------------------------------------------------
// Modules

export async function listModules(ctx: Context, applicationId: string, query: ListQuery): Promise<Page<ApplicationModule>> {
  const prisma = ctx.db;
  await requireApplication(ctx, applicationId);
  const where: Prisma.ApplicationModuleWhereInput = { applicationId };
  const order = query.order ?? "asc";
  const page = await listPage(listMode(query), {
    count: () => prisma.applicationModule.count({ where }),
    offset: (skip, take) => prisma.applicationModule.findMany({ where, orderBy: [{ createdAt: order }, { id: order }], skip, take }),
    after: (afterId, take) =>
      prisma.applicationModule.findMany({ where: { ...where, ...(afterId ? { id: order === "asc" ? { gt: afterId } : { lt: afterId } } : {}) }, orderBy: { id: order }, take }),
  });
  return { ...page, data: page.data.map(toModule) };
}

/** A module with its application (whose organization its audit records name). */
export interface ModuleOf {
  app: ApplicationRow;
  module: ModuleRow;
}

export async function requireModule(ctx: Context, applicationId: string, moduleId: string): Promise<ModuleOf> {
  const app = await requireApplication(ctx, applicationId);
  const module = await ctx.db.applicationModule.findFirst({ where: { id: moduleId, applicationId } });
  if (!module) throw notFound("module");
  return { app, module };
}

export async function addModule(ctx: Context, applicationId: string, input: ModuleCreate): Promise<ModuleOf> {
  const app = await requireApplication(ctx, applicationId);
  const module = await ctx.db.applicationModule.create({ data: { applicationId, name: input.name, description: input.description ?? null } });
  return { app, module };
}

export async function updateModule(ctx: Context, applicationId: string, moduleId: string, input: ModuleUpdate): Promise<ModuleOf> {
  const { app } = await requireModule(ctx, applicationId, moduleId);
  const module = await ctx.db.applicationModule.update({ where: { id: moduleId }, data: input });
  return { app, module };
}

export async function deleteModule(ctx: Context, applicationId: string, moduleId: string): Promise<ModuleOf> {
  const found = await requireModule(ctx, applicationId, moduleId);
  await ctx.db.applicationModule.delete({ where: { id: moduleId } });
  return found;
}
