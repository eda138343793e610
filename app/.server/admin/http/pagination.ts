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
  page: number;
  pageSize: number;
  cursor?: string | undefined;
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
 * following pages cost one index range scan each however large the set is.
 */

export async function listPage<T extends { id: string }>(
  mode: ListMode,
  fetch: {
    /** Which ids a cursor may carry (UUIDs by default; text ids such as client ids pass their own). */
    idPattern?: RegExp;
    /** Count on every cursor page instead of carrying the first page's total (a set that grows while it is walked). */
    freshTotal?: boolean;
    count(): Promise<number>;
    offset(skip: number, take: number): Promise<T[]>;
    after(afterId: string | null, take: number): Promise<T[]>;
  },
): Promise<Page<T>> {
  if (mode.mode === "offset") {
    const [total, data] = await Promise.all([fetch.count(), fetch.offset((mode.page - 1) * mode.pageSize, mode.pageSize)]);
    return { data, total, page: mode.page, pageSize: mode.pageSize };
  }
  const afterId = mode.after ? mode.after[1] : null;
  if (afterId !== null && !(fetch.idPattern ? fetch.idPattern.test(afterId) : isUuid(afterId))) throw validation([{ field: "cursor", message: "is not a cursor returned by Porta" }]);
  const carried = fetch.freshTotal ? undefined : mode.after?.[2];
  const [total, rows] = await Promise.all([carried ?? fetch.count(), fetch.after(afterId, mode.limit + 1)]);
  const data = rows.slice(0, mode.limit);
  const last = data.at(-1)?.id;
  const cursor = rows.length > mode.limit && last ? encodeCursor(fetch.freshTotal ? [null, last] : [null, last, total]) : undefined;
  return { data, total, page: 1, pageSize: mode.limit, cursor };
}
