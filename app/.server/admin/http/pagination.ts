import { z } from "zod";
import { isUuid } from "~/schemas/uuid";
import { validation } from "../../errors";

/**
 * Listing parameters of the spec: offset mode (`page`, `pageSize`) or cursor mode (`cursor`,
 * `limit`), with sorting. Cursors are opaque base64url of [sort value, id, total?]; a bad one is 422.
 */
export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 20;

export const ListQuerySchema = z
  .object({
    page: z.coerce.number().int().min(1).max(1_000_000).optional(),
    pageSize: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional(),
    cursor: z.string().max(512).optional(),
    limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional(),
    order: z.enum(["asc", "desc"]).optional(),
  })
  .strict();

export type ListQuery = z.infer<typeof ListQuerySchema>;

/** [sort value, id] or, from listPage, [sort value, id, total of the walk]. */
export type CursorValue = [string | number | null, string] | [string | number | null, string, number];

export function encodeCursor(value: CursorValue): string {
  return Buffer.from(JSON.stringify(value), "utf8").toString("base64url");
}

export function decodeCursor(cursor: string, field = "cursor"): CursorValue {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    const total = Array.isArray(parsed) ? (parsed as unknown[])[2] : undefined;
    if (
      Array.isArray(parsed) &&
      (parsed.length === 2 || (parsed.length === 3 && Number.isSafeInteger(total) && (total as number) >= 0)) &&
      typeof parsed[1] === "string" &&
      ["string", "number", "object"].includes(typeof parsed[0])
    ) {
      return parsed as CursorValue;
    }
  } catch {
    // falls through to the validation error
  }
  throw validation([{ field, message: "is not a cursor returned by Porta" }]);
}

export interface Page<T> {
  data: T[];
  total: number;
  /** Present when `total` is a lower bound: the set has at least that many rows (see boundedCount). */
  totalIsLowerBound?: true | undefined;
  page: number;
  pageSize: number;
  cursor?: string | undefined;
}

/** A list's total: exact, or (lowerBound) at least that many. */
export interface Count {
  total: number;
  lowerBound: boolean;
}

/**
 * Past this many rows a filtered list stops counting and says "at least this many": counting every
 * match of a broad search (a domain, a common name) at a million users read hundreds of thousands
 * of rows per page (0.2–0.5 s). Counting up to 10,000 still took 40–90 ms of one statement at a
 * million users, up to 1,000 about 10 ms (decision 075); no one pages through a thousand results.
 */
export const COUNT_BOUND = 1_000;

/**
 * Counts at most `bound` rows: `countUpTo(take)` counts the first `take` rows of the set (Prisma's
 * `count({ where, take })`, a `LIMIT` under the count), asked for one more than the bound so that
 * a set of exactly `bound` rows stays exact.
 */
export async function boundedCount(countUpTo: (take: number) => Promise<number>, bound = COUNT_BOUND): Promise<Count> {
  const counted = await countUpTo(bound + 1);
  return counted > bound ? { total: bound, lowerBound: true } : { total: counted, lowerBound: false };
}

export type ListMode = { mode: "offset"; page: number; pageSize: number } | { mode: "cursor"; limit: number; after: CursorValue | null };

export function listMode(query: ListQuery): ListMode {
  if (query.cursor !== undefined || query.limit !== undefined) {
    if (query.page !== undefined || query.pageSize !== undefined) {
      throw validation([{ field: "cursor", message: "cannot be combined with page or pageSize" }]);
    }
    return { mode: "cursor", limit: query.limit ?? DEFAULT_PAGE_SIZE, after: query.cursor ? decodeCursor(query.cursor) : null };
  }
  return { mode: "offset", page: query.page ?? 1, pageSize: query.pageSize ?? DEFAULT_PAGE_SIZE };
}

/** History envelope parameters: `limit`, `after` (opaque), `eventType`. */
export const HistoryQuerySchema = z
  .object({
    limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional(),
    after: z.string().max(512).optional(),
    eventType: z.string().max(100).regex(/^[a-z0-9_.]+$/, "must look like an event type, e.g. organization.updated").optional(),
  })
  .strict();

export type HistoryQuery = z.infer<typeof HistoryQuerySchema>;

export interface HistoryPage<T> {
  data: T[];
  hasMore: boolean;
  nextCursor: string | null;
}

/**
 * Runs a listing in either mode. Cursor mode walks the UUIDv7 ids (creation order); offset
 * mode pages through the caller's sort. `total` is the count of the whole filtered set; a
 * cursor walk counts it once, on its first page, and carries it in the cursor, so that the
 * following pages cost one index range scan each however large the set is. A count may be a
 * lower bound (boundedCount): the envelope then says so with `totalIsLowerBound`, and a cursor does
 * not carry it (each page counts again, up to the bound), so that no page presents it as exact.
 */

export async function listPage<T extends { id: string }>(
  mode: ListMode,
  fetch: {
    /** Which ids a cursor may carry (UUIDs by default; text ids such as client ids pass their own). */
    idPattern?: RegExp;
    /** Count on every cursor page instead of carrying the first page's total (a set that grows while it is walked). */
    freshTotal?: boolean;
    count(): Promise<number | Count>;
    offset(skip: number, take: number): Promise<T[]>;
    after(afterId: string | null, take: number): Promise<T[]>;
  },
): Promise<Page<T>> {
  const counted = (count: number | Count): Count => (typeof count === "number" ? { total: count, lowerBound: false } : count);
  const bound = (count: Count) => (count.lowerBound ? { totalIsLowerBound: true as const } : {});
  if (mode.mode === "offset") {
    const [count, data] = await Promise.all([fetch.count().then(counted), fetch.offset((mode.page - 1) * mode.pageSize, mode.pageSize)]);
    return { data, total: count.total, ...bound(count), page: mode.page, pageSize: mode.pageSize };
  }
  const afterId = mode.after ? mode.after[1] : null;
  if (afterId !== null && !(fetch.idPattern ? fetch.idPattern.test(afterId) : isUuid(afterId))) throw validation([{ field: "cursor", message: "is not a cursor returned by Porta" }]);
  const carried = fetch.freshTotal ? undefined : mode.after?.[2];
  const [count, rows] = await Promise.all([carried !== undefined ? { total: carried, lowerBound: false } : fetch.count().then(counted), fetch.after(afterId, mode.limit + 1)]);
  const data = rows.slice(0, mode.limit);
  const last = data.at(-1)?.id;
  const carry = !fetch.freshTotal && !count.lowerBound;
  const cursor = rows.length > mode.limit && last ? encodeCursor(carry ? [null, last, count.total] : [null, last]) : undefined;
  return { data, total: count.total, ...bound(count), page: 1, pageSize: mode.limit, cursor };
}
