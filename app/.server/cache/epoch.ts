import type { Database } from "../db/client";

/**
 * The shared cache's namespace (decision 070): this database's installation id and its cache
 * epoch. The id keeps apart two databases that share one Redis (or a database dropped and made
 * again); the epoch, replaced by every start, keeps apart this database before and after a restore
 * from a backup, which brings back the old id with older data.
 */
export interface CacheEpochSource {
  /** Replaces the epoch and returns the namespace: nobody has cached anything under it yet. */
  fresh(): Promise<string>;
  /** The namespace the database holds now. */
  current(): Promise<string>;
  /**
   * Replaces the epoch unless another process already replaced `seen`; returns the namespace in
   * force, which in either case was taken after `seen` was read.
   */
  replace(seen: string): Promise<string>;
}

type Row = { id: string; cacheEpoch: string };
const namespaceOf = (row: Row) => `${row.id}:${row.cacheEpoch}:`;

export function createCacheEpochSource(db: Pick<Database, "query">): CacheEpochSource {
  async function one(text: string, values: unknown[] = []): Promise<Row | undefined> {
    const rows = await db.query<Row>(text, values);
    return rows[0];
  }
  async function fresh(): Promise<string> {
    const row =
      (await one(`UPDATE "Installation" SET "cacheEpoch" = gen_random_uuid() RETURNING "id"::text AS "id", "cacheEpoch"::text AS "cacheEpoch"`)) ??
      // The migration made the row; a database whose row was deleted by hand gets a new one.
      (await one(`INSERT INTO "Installation" DEFAULT VALUES RETURNING "id"::text AS "id", "cacheEpoch"::text AS "cacheEpoch"`));
    if (!row) throw new Error("the installation row could not be written");
    return namespaceOf(row);
  }
  async function current(): Promise<string> {
    const row = await one(`SELECT "id"::text AS "id", "cacheEpoch"::text AS "cacheEpoch" FROM "Installation" LIMIT 1`);
    return row ? namespaceOf(row) : fresh();
  }
  return {
    fresh,
    current,
    async replace(seen) {
      const epoch = seen.split(":")[1] ?? "";
      const row = await one(
        `UPDATE "Installation" SET "cacheEpoch" = gen_random_uuid() WHERE "cacheEpoch"::text = $1 RETURNING "id"::text AS "id", "cacheEpoch"::text AS "cacheEpoch"`,
        [epoch],
      );
      return row ? namespaceOf(row) : current();
    },
  };
}
