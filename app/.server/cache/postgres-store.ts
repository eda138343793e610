import type { Logger } from "pino";
import type { Database } from "../db/client";
import type { KeyValueStore } from "./store";

/**
 * The ephemeral store in PostgreSQL (or the embedded PGlite): the one store that must answer
 * (decision 024). Values live in "EphemeralEntry" with their expiry, sets in
 * "EphemeralSetMember"; an expired row is ignored on read and deleted by a sweeper. Every
 * operation is one statement on the database's own connection (raw SQL: this is the hot path
 * of every sign-in and grant).
 *
 * Never call it inside a write's transaction on PGlite: it uses the one connection the
 * transaction holds (run such calls in `ctx.afterCommit`).
 */
const LIVE = `("expiresAt" IS NULL OR "expiresAt" > now())`;
const SWEEP_INTERVAL_MS = 60_000;

/** The expiry of a time to live given as a parameter, computed by the database's clock (the one reads compare with). */
const expiryOf = (parameter: string) => `CASE WHEN ${parameter}::float8 > 0 THEN now() + ${parameter}::float8 * interval '1 second' END`;
const ttl = (ttlSeconds?: number) => (ttlSeconds && ttlSeconds > 0 ? ttlSeconds : 0);
/** An expiry as text in epoch milliseconds, "0" for none. */
const epochMs = (column: string) => `COALESCE(floor(extract(epoch FROM ${column}) * 1000)::bigint, 0)::text`;

export function createPostgresStore(db: Database, logger: Logger): KeyValueStore {
  const sql = async <Row>(text: string, values: unknown[]) => (await db.executeSql(text, values)).rows as Row[];

  const sweeper = setInterval(() => {
    sql(
      `WITH gone AS (DELETE FROM "EphemeralEntry" WHERE "expiresAt" <= now()) DELETE FROM "EphemeralSetMember" WHERE "expiresAt" <= now()`,
      [],
    ).catch((error: unknown) => logger.warn({ err: { message: (error as Error).message } }, "could not delete expired ephemeral entries"));
  }, SWEEP_INTERVAL_MS);
  sweeper.unref();

  return {
    kind: "postgres",
    async get(key) {
      const rows = await sql<{ value: string }>(`SELECT "value" FROM "EphemeralEntry" WHERE "key" = $1::text AND ${LIVE}`, [key]);
      return rows[0]?.value ?? null;
    },
    async set(key, value, ttlSeconds, announceOn) {
      const upsert = `INSERT INTO "EphemeralEntry" ("key", "value", "expiresAt") VALUES ($1::text, $2::text, ${expiryOf("$3")})
         ON CONFLICT ("key") DO UPDATE SET "value" = EXCLUDED."value", "expiresAt" = EXCLUDED."expiresAt"`;
      if (!announceOn) {
        await sql(upsert, [key, value, ttl(ttlSeconds)]);
        return;
      }
      // One statement is one transaction: the notification is delivered at the value's commit.
      await sql(
        `WITH entry AS (${upsert} RETURNING "key", "expiresAt")
         SELECT pg_notify($4::text, ${epochMs(`"expiresAt"`)} || ' ' || "key") FROM entry`,
        [key, value, ttl(ttlSeconds), announceOn],
      );
    },
    async liveKeysLike(pattern, limit) {
      const rows = await sql<{ key: string; expiresAt: string }>(
        `SELECT "key", ${epochMs(`"expiresAt"`)} AS "expiresAt" FROM "EphemeralEntry" WHERE "key" LIKE $1::text AND ${LIVE} LIMIT $2::int`,
        [pattern, limit],
      );
      return rows.map((row) => ({ key: row.key, expiresAt: Number(row.expiresAt) || null }));
    },
    async del(...keys) {
      if (keys.length === 0) return;
      // Takes the locks addToSet takes, in one order, before touching a set's rows (see there).
      await sql(
        `WITH locked AS (
           SELECT count(pg_advisory_xact_lock(hashtextextended('porta_set:' || k, 0))) AS n
           FROM (SELECT DISTINCT k FROM unnest($1::text[]) AS k ORDER BY k) AS ordered
         ),
         gone AS (DELETE FROM "EphemeralEntry" WHERE "key" = ANY($1::text[]) AND EXISTS (SELECT 1 FROM locked))
         DELETE FROM "EphemeralSetMember" WHERE "setKey" = ANY($1::text[]) AND EXISTS (SELECT 1 FROM locked)`,
        [keys],
      );
    },
    async replace(key, value) {
      await sql(`UPDATE "EphemeralEntry" SET "value" = $2::text WHERE "key" = $1::text AND ${LIVE}`, [key, value]);
    },
    async take(key) {
      const rows = await sql<{ value: string; live: boolean }>(
        `DELETE FROM "EphemeralEntry" WHERE "key" = $1::text RETURNING "value", ${LIVE} AS "live"`,
        [key],
      );
      return rows[0]?.live ? rows[0].value : null;
    },
    async increment(key, ttlSeconds) {
      // ON CONFLICT DO UPDATE locks the row: concurrent increments of one key queue and each sees
      // the previous one's count. The SET expressions read the row as it was.
      const live = `("EphemeralEntry"."expiresAt" IS NULL OR "EphemeralEntry"."expiresAt" > now())`;
      const rows = await sql<{ value: string }>(
        `INSERT INTO "EphemeralEntry" ("key", "value", "expiresAt") VALUES ($1::text, '1', ${expiryOf("$2")})
         ON CONFLICT ("key") DO UPDATE SET
           "value" = CASE WHEN ${live} AND "EphemeralEntry"."value" ~ '^[0-9]{1,15}$'
                     THEN ("EphemeralEntry"."value"::bigint + 1)::text ELSE '1' END,
           "expiresAt" = CASE WHEN ${live} AND "EphemeralEntry"."value" ~ '^[0-9]{1,15}$'
                         THEN "EphemeralEntry"."expiresAt" ELSE EXCLUDED."expiresAt" END
         RETURNING "value"`,
        [key, ttl(ttlSeconds)],
      );
      return Number(rows[0]!.value);
    },
    async addToSet(key, member, ttlSeconds) {
      // The member joins and the whole set takes the new time to live, in one statement. Two
      // writers of one set would lock its rows in different orders (each its own member first)
      // and deadlock: a lock on the set, taken before any row, makes them wait in turn.
      await sql(
        `WITH locked AS (SELECT pg_advisory_xact_lock(hashtextextended('porta_set:' || $1::text, 0)) AS done),
         added AS (
           INSERT INTO "EphemeralSetMember" ("setKey", "member", "expiresAt")
           SELECT $1::text, $2::text, ${expiryOf("$3")} FROM locked
           ON CONFLICT ("setKey", "member") DO UPDATE SET "expiresAt" = EXCLUDED."expiresAt"
         )
         UPDATE "EphemeralSetMember" SET "expiresAt" = ${expiryOf("$3")}
         WHERE "setKey" = $1::text AND "member" <> $2::text AND EXISTS (SELECT 1 FROM locked)`,
        [key, member, ttl(ttlSeconds)],
      );
    },
    async setMembers(key) {
      const rows = await sql<{ member: string }>(`SELECT "member" FROM "EphemeralSetMember" WHERE "setKey" = $1::text AND ${LIVE}`, [key]);
      return rows.map((row) => row.member);
    },
    async getMany(keys) {
      if (keys.length === 0) return [];
      const rows = await sql<{ key: string; value: string }>(`SELECT "key", "value" FROM "EphemeralEntry" WHERE "key" = ANY($1::text[]) AND ${LIVE}`, [keys]);
      const byKey = new Map(rows.map((row) => [row.key, row.value]));
      return keys.map((key) => byKey.get(key) ?? null);
    },
    async membersOfSets(keys) {
      const sets = new Map<string, string[]>(keys.map((key) => [key, []]));
      if (keys.length === 0) return sets;
      const rows = await sql<{ setKey: string; member: string }>(`SELECT "setKey", "member" FROM "EphemeralSetMember" WHERE "setKey" = ANY($1::text[]) AND ${LIVE}`, [keys]);
      for (const row of rows) sets.get(row.setKey)?.push(row.member);
      return sets;
    },
    async close() {
      clearInterval(sweeper);
    },
  };
}
