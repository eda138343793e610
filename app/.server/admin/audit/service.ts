import type { Prisma } from "~/generated/prisma/client";
import type { Context } from "../../context";
import { notFound, validation } from "../../errors";
import { listMode, listPage, type ListQuery, type Page } from "../http/pagination";
import { resolveNames, type AuditNames } from "./names";
import { matchSubjects, type SubjectRole } from "./subjects";

export interface AuditQuery extends ListQuery {
  organizationId?: string | undefined;
  eventType?: string | undefined;
  actorId?: string | undefined;
  targetType?: string | undefined;
  targetId?: string | undefined;
  /** An organization by name or slug, an actor or a target by email or name (decision 039). */
  organization?: string | undefined;
  actor?: string | undefined;
  target?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

type AuditRow = Prisma.AuditEntryGetPayload<object>;
export type AuditView = Omit<AuditRow, "createdAt"> & { createdAt: string; names: AuditNames };

const NAME_FILTERS: Record<SubjectRole, { message: string }> = {
  organization: { message: "names no organization (give its name or slug)" },
  actor: { message: "names no user or client (give an email or a client's name)" },
  target: { message: "names nothing with a page (give an email or a name)" },
};

/** The conditions of the name filters: every match counts, and a name that matches nothing is a 422. */
async function nameConditions(ctx: Context, query: AuditQuery): Promise<Prisma.AuditEntryWhereInput[]> {
  const conditions: Prisma.AuditEntryWhereInput[] = [];
  const failed: Array<{ field: string; message: string }> = [];
  const roles = (Object.keys(NAME_FILTERS) as SubjectRole[]).filter((role) => query[role]);
  const matches = await Promise.all(roles.map((role) => matchSubjects(ctx.db, role, query[role]!, role === "organization" ? undefined : query.organizationId)));
  roles.forEach((role, i) => {
    const found = matches[i]!;
    if (found.length === 0) return void failed.push({ field: `query.${role}`, message: NAME_FILTERS[role].message });
    if (role === "organization") conditions.push({ organizationId: { in: found.map((s) => s.id) } });
    else if (role === "actor") conditions.push({ actorId: { in: found.map((s) => s.id) } });
    else conditions.push({ OR: found.map((s) => ({ targetType: s.type, targetId: s.id })) });
  });
  if (failed.length > 0) throw validation(failed);
  return conditions;
}

export async function withNames(ctx: Context, rows: AuditRow[]): Promise<AuditView[]> {
  const names = await resolveNames(ctx.db, rows);
  return rows.map((r, i) => ({ ...r, createdAt: r.createdAt.toISOString(), names: names[i]! }));
}

/**
 * Audit entries newest first (`order=asc`: oldest first), filtered, each with the names of what it
 * names; paged like every other list (`page`/`pageSize`, or `cursor`/`limit` over the time-ordered
 * ids). The log grows while it is read, so every page counts its total afresh.
 */
export async function listAudit(ctx: Context, query: AuditQuery): Promise<Page<AuditView>> {
  const where: Prisma.AuditEntryWhereInput = {
    ...(query.organizationId ? { organizationId: query.organizationId } : {}),
    ...(query.eventType ? (query.eventType.endsWith(".*") ? { eventType: { startsWith: query.eventType.slice(0, -1) } } : { eventType: query.eventType }) : {}),
    ...(query.actorId ? { actorId: query.actorId } : {}),
    ...(query.targetType ? { targetType: query.targetType } : {}),
    ...(query.targetId ? { targetId: query.targetId } : {}),
    ...(query.from || query.to ? { createdAt: { ...(query.from ? { gte: new Date(query.from) } : {}), ...(query.to ? { lt: new Date(query.to) } : {}) } } : {}),
    AND: await nameConditions(ctx, query),
  };
  const order = query.order ?? "desc";
  const prisma = ctx.db;
  const page = await listPage(listMode(query), {
    freshTotal: true,
    count: () => prisma.auditEntry.count({ where }),
    offset: (skip, take) => prisma.auditEntry.findMany({ where, orderBy: { id: order }, skip, take }),
    after: (afterId, take) =>
      prisma.auditEntry.findMany({ where: { ...where, ...(afterId ? { id: order === "asc" ? { gt: afterId } : { lt: afterId } } : {}) }, orderBy: { id: order }, take }),
  });
  return { ...page, data: await withNames(ctx, page.data) };
}

/** One entry with its full data and names: the console's detail view. */
export async function requireAuditEntry(ctx: Context, id: string): Promise<AuditView> {
  const row = await ctx.db.auditEntry.findUnique({ where: { id } });
  if (!row) throw notFound("audit entry");
  return (await withNames(ctx, [row]))[0]!;
}
