import type { Prisma } from "~/generated/prisma/client";
import type { Context } from "../../context";
import { validation } from "../../errors";
import { DEFAULT_PAGE_SIZE, decodeCursor, encodeCursor, type Page } from "../http/pagination";

export interface AuditQuery {
  organizationId?: string | undefined;
  eventType?: string | undefined;
  actorId?: string | undefined;
  targetType?: string | undefined;
  targetId?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  cursor?: string | undefined;
  limit?: number | undefined;
}

/** Audit entries newest first, filtered, with cursor paging over their time-ordered ids. */
export async function listAudit(ctx: Context, query: AuditQuery): Promise<Page<Record<string, unknown>>> {
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  const before = query.cursor ? decodeCursor(query.cursor)[1] : undefined;
  if (before !== undefined && !/^[0-9a-f-]{36}$/.test(before)) throw validation([{ field: "cursor", message: "is not a cursor returned by Porta" }]);
  const where: Prisma.AuditEntryWhereInput = {
    ...(query.organizationId ? { organizationId: query.organizationId } : {}),
    ...(query.eventType ? (query.eventType.endsWith(".*") ? { eventType: { startsWith: query.eventType.slice(0, -1) } } : { eventType: query.eventType }) : {}),
    ...(query.actorId ? { actorId: query.actorId } : {}),
    ...(query.targetType ? { targetType: query.targetType } : {}),
    ...(query.targetId ? { targetId: query.targetId } : {}),
    ...(query.from || query.to ? { createdAt: { ...(query.from ? { gte: new Date(query.from) } : {}), ...(query.to ? { lt: new Date(query.to) } : {}) } } : {}),
  };
  const prisma = ctx.db;
  const [total, rows] = await Promise.all([
    prisma.auditEntry.count({ where }),
    prisma.auditEntry.findMany({ where: { ...where, ...(before ? { id: { lt: before } } : {}) }, orderBy: { id: "desc" }, take: limit + 1 }),
  ]);
  const data = rows.slice(0, limit).map((r) => ({ ...r, createdAt: r.createdAt.toISOString() }));
  return { data, total, page: 1, pageSize: limit, cursor: rows.length > limit ? encodeCursor([null, data[data.length - 1]!.id]) : undefined };
}
