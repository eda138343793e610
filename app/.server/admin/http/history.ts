import type { Db } from "../../context";
import { isUuid } from "~/schemas/uuid";
import { validation } from "../../errors";
import { resolveNames, type AuditNames } from "../audit/names";
import { DEFAULT_PAGE_SIZE, decodeCursor, encodeCursor, type HistoryPage, type HistoryQuery } from "./pagination";


export interface HistoryEntry {
  id: string;
  eventType: string;
  createdAt: Date;
  actorType: string;
  actorId: string | null;
  data: unknown;
  /** Who acted and what the entry names, by name (decision 039). */
  names: AuditNames;
}

/**
 * The history of one entity: its audit entries, newest first, in the history envelope.
 * Audit ids are UUIDv7 (time-ordered), so the cursor is the last id seen.
 */
export async function auditHistory(prisma: Db, target: { targetType: string; targetId: string }, query: HistoryQuery): Promise<HistoryPage<HistoryEntry>> {
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  const after = query.after ? decodeCursor(query.after, "after")[1] : undefined;
  if (after !== undefined && !isUuid(after)) throw validation([{ field: "after", message: "is not a cursor returned by Porta" }]);
  const rows = await prisma.auditEntry.findMany({
    where: { ...target, ...(query.eventType ? { eventType: query.eventType } : {}), ...(after ? { id: { lt: after } } : {}) },
    orderBy: { id: "desc" },
    take: limit + 1,
    select: { id: true, eventType: true, createdAt: true, actorType: true, actorId: true, data: true, organizationId: true },
  });
  const hasMore = rows.length > limit;
  const page = rows.slice(0, limit);
  const names = await resolveNames(prisma, page.map((r) => ({ ...r, ...target })));
  const data = page.map(({ organizationId: _organizationId, ...r }, i) => ({ ...r, names: names[i]! }));
  return { data, hasMore, nextCursor: hasMore ? encodeCursor([null, data[data.length - 1]!.id]) : null };
}
