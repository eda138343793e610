import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryStore } from "~/.server/cache/memory-store";
import { createPostgresStore } from "~/.server/cache/postgres-store";
import { createRedisStore } from "~/.server/cache/redis-store";
import type { CacheStore, KeyValueStore } from "~/.server/cache/store";
import { openDatabase, type Database } from "~/.server/db/client";
import { toAppError } from "~/.server/db/errors";
import { applyMigrations } from "~/.server/db/migrate";
import { createTestDatabase, usingPostgres, type TestDatabase } from "./support/database";
import { testLogger } from "./support/logs";

/**
 * The store contract: every kind of store operation Porta uses answers the same on the embedded
 * PGlite as on PostgreSQL, and on the in-process cache as on Redis. Each case runs one operation
 * on both and compares the answers (and checks the answer itself, so that both cannot be wrong
 * alike). This is what lets CI run the rest of the suite once, on PostgreSQL + Redis, and on the
 * embedded default only what differs between the stores (vitest.embedded.config.ts).
 *
 * The operations are those of app/.server: Prisma's model calls (every kind Porta makes: finds
 * with filters, relations, cursors and counts, creates, updates, upserts, deletes, aggregates,
 * groupings, interactive transactions), the errors Porta maps (db/errors.ts), plain SQL through
 * the driver (`query`, `executeSql`, `rawTransaction`: the token store, tenant loads, the job
 * queue, rate-limit counters), notifications (`notify`/`listen`, also from inside a statement),
 * the key-value store of ephemeral state (cache/postgres-store.ts), and the cache (memory or Redis).
 */
const needsBoth = !usingPostgres();

interface Backend {
  name: "pglite" | "postgres";
  db: Database;
  database?: TestDatabase;
}

const backends: Backend[] = [];
const ORG = "0190f5d4-0000-7000-8000-000000000001";
const OTHER_ORG = "0190f5d4-0000-7000-8000-000000000002";

/** Runs `operation` on both databases and returns both answers, PGlite's first. */
async function onBoth<T>(operation: (db: Database, backend: Backend) => Promise<T>): Promise<[T, T]> {
  const [pglite, postgres] = backends as [Backend, Backend];
  return [await operation(pglite.db, pglite), await operation(postgres.db, postgres)];
}

/** The answer both give, after checking that they agree. */
async function same<T>(operation: (db: Database, backend: Backend) => Promise<T>): Promise<T> {
  const [embedded, server] = await onBoth(operation);
  expect(embedded).toEqual(server);
  return embedded;
}

/** What an operation threw, as Porta sees it: the mapped AppError's status, code and details, or the error's class. */
async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    const mapped = toAppError(error);
    return mapped ? { status: mapped.status, code: mapped.code, details: mapped.details } : { unmapped: (error as Error).constructor.name };
  }
  return "no error";
}

describe.skipIf(needsBoth)("the store contract: PGlite and PostgreSQL", () => {
  beforeAll(async () => {
    const pglite = await openDatabase({ pgliteDir: "memory://" });
    await applyMigrations(pglite);
    backends.push({ name: "pglite", db: pglite });
    const database = await createTestDatabase({ migrated: true });
    const postgres = await openDatabase({ databaseUrl: database.url });
    await applyMigrations(postgres);
    backends.push({ name: "postgres", db: postgres, database });
    for (const { db } of backends) {
      await db.prisma.organization.createMany({
        data: [
          { id: ORG, name: "Contract Org", slug: "contract-org", defaultLoginMethods: ["password"], branding: { colors: { primary: "#123456" } } },
          { id: OTHER_ORG, name: "Other", slug: "other-org" },
        ],
      });
    }
  });
  afterAll(async () => {
    for (const { db, database } of backends) {
      await db.close();
      await database?.drop();
    }
  });

  describe("Prisma model calls", () => {
    it("round-trip every column type Porta stores: text, citext, arrays, JSON, booleans, integers, big integers, times to the millisecond", async () => {
      const at = new Date("2026-02-28T23:59:59.123Z");
      const row = await same(async (db) => {
        const user = await db.prisma.user.create({
          data: { id: "0190f5d4-0000-7000-8000-0000000000a1", organizationId: ORG, email: "Mixed.Case@Example.COM", lockedUntil: at, failedLoginCount: 3, emailVerified: true },
        });
        await db.prisma.totpCredential.create({ data: { userId: user.id, secretEncrypted: "x", lastUsedStep: 2n ** 40n, enrolledAt: at } });
        const found = await db.prisma.user.findUniqueOrThrow({ where: { id: user.id }, include: { totp: true } });
        const org = await db.prisma.organization.findUniqueOrThrow({ where: { id: ORG }, select: { defaultLoginMethods: true, branding: true, slug: true } });
        return { email: found.email, lockedUntil: found.lockedUntil, count: found.failedLoginCount, verified: found.emailVerified, step: found.totp!.lastUsedStep, org };
      });
      expect(row).toEqual({
        email: "Mixed.Case@Example.COM",
        lockedUntil: at,
        count: 3,
        verified: true,
        step: 2n ** 40n,
        org: { defaultLoginMethods: ["password"], branding: { colors: { primary: "#123456" } }, slug: "contract-org" },
      });
    });

    it("compare citext without case, filter insensitive substrings, array membership and JSON paths alike", async () => {
      const found = await same(async (db) => ({
        byEmail: (await db.prisma.user.findFirst({ where: { organizationId: ORG, email: "mixed.case@example.com" } }))?.id ?? null,
        bySlug: (await db.prisma.organization.findUnique({ where: { slug: "CONTRACT-ORG" } }))?.id ?? null,
        contains: (await db.prisma.organization.findMany({ where: { name: { contains: "ONTRACT", mode: "insensitive" } }, select: { id: true } })).map((o) => o.id),
        startsWith: await db.prisma.organization.count({ where: { slug: { startsWith: "contract" } } }),
        has: await db.prisma.organization.count({ where: { defaultLoginMethods: { has: "password" } } }),
        hasSome: await db.prisma.organization.count({ where: { defaultLoginMethods: { hasSome: ["magic_link", "passkey"] } } }),
        jsonPath: await db.prisma.organization.count({ where: { branding: { path: ["colors", "primary"], equals: "#123456" } } }),
      }));
      expect(found).toEqual({ byEmail: "0190f5d4-0000-7000-8000-0000000000a1", bySlug: ORG, contains: [ORG], startsWith: 1, has: 2, hasSome: 1, jsonPath: 1 });
    });

    it("page with cursors, order, skip and take, count relations, group and aggregate alike", async () => {
      const result = await same(async (db) => {
        await db.prisma.user.createMany({
          data: Array.from({ length: 7 }, (_, i) => ({
            id: `0190f5d4-0000-7000-8000-0000000001${String(i).padStart(2, "0")}`,
            organizationId: OTHER_ORG,
            email: `p${i}@example.com`,
            failedLoginCount: i % 3,
            createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
          })),
        });
        const first = await db.prisma.user.findMany({ where: { organizationId: OTHER_ORG }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: 3 });
        const next = await db.prisma.user.findMany({ where: { organizationId: OTHER_ORG }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], cursor: { id: first[2]!.id }, skip: 1, take: 3 });
        const grouped = await db.prisma.user.groupBy({ by: ["failedLoginCount"], where: { organizationId: OTHER_ORG }, _count: { _all: true }, orderBy: { failedLoginCount: "asc" } });
        const aggregate = await db.prisma.user.aggregate({ where: { organizationId: OTHER_ORG }, _max: { failedLoginCount: true }, _count: { _all: true } });
        const withCounts = await db.prisma.organization.findUniqueOrThrow({ where: { id: OTHER_ORG }, select: { _count: { select: { users: true } } } });
        const distinct = await db.prisma.user.findMany({ where: { organizationId: OTHER_ORG }, distinct: ["failedLoginCount"], select: { failedLoginCount: true }, orderBy: { failedLoginCount: "asc" } });
        return {
          first: first.map((u) => u.email),
          next: next.map((u) => u.email),
          grouped: grouped.map((g) => [g.failedLoginCount, g._count._all]),
          aggregate: [aggregate._max.failedLoginCount, aggregate._count._all],
          users: withCounts._count.users,
          distinct: distinct.map((d) => d.failedLoginCount),
        };
      });
      expect(result).toEqual({
        first: ["p6@example.com", "p5@example.com", "p4@example.com"],
        next: ["p3@example.com", "p2@example.com", "p1@example.com"],
        grouped: [[0, 3], [1, 2], [2, 2]],
        aggregate: [2, 7],
        users: 7,
        distinct: [0, 1, 2],
      });
    });

    it("update with a version guard, upsert, update and delete many, and return what changed alike", async () => {
      const result = await same(async (db) => {
        const id = "0190f5d4-0000-7000-8000-0000000000a1";
        const stale = await db.prisma.user.updateMany({ where: { id, version: 99 }, data: { givenName: "never" } });
        const guarded = await db.prisma.user.updateMany({ where: { id, version: 1 }, data: { givenName: "Ada", version: { increment: 1 } } });
        const returned = await db.prisma.user.updateManyAndReturn({ where: { organizationId: OTHER_ORG, failedLoginCount: 2 }, data: { failedLoginCount: 0 }, select: { email: true } });
        const upserted = await db.prisma.configEntry.upsert({ where: { key: "contract.key" }, create: { key: "contract.key", value: { n: 1 } }, update: { value: { n: 2 } } });
        const again = await db.prisma.configEntry.upsert({ where: { key: "contract.key" }, create: { key: "contract.key", value: { n: 1 } }, update: { value: { n: 2 } } });
        const deleted = await db.prisma.user.deleteMany({ where: { organizationId: OTHER_ORG, email: { in: ["p0@example.com", "p1@example.com"] } } });
        const user = await db.prisma.user.findUniqueOrThrow({ where: { id } });
        return { stale: stale.count, guarded: guarded.count, returned: returned.map((r) => r.email).sort(), first: upserted.value, second: again.value, deleted: deleted.count, name: user.givenName, version: user.version };
      });
      expect(result).toEqual({ stale: 0, guarded: 1, returned: ["p2@example.com", "p5@example.com"], first: { n: 1 }, second: { n: 2 }, deleted: 2, name: "Ada", version: 2 });
    });

    it("map a duplicate, a missing row and a dangling reference to the same errors", async () => {
      const errors = await same(async (db) => ({
        duplicate: await failure(() => db.prisma.user.create({ data: { organizationId: ORG, email: "MIXED.case@example.com" } })),
        duplicateSlug: await failure(() => db.prisma.organization.create({ data: { name: "x", slug: "Contract-Org" } })),
        missing: await failure(() => db.prisma.user.update({ where: { id: "0190f5d4-0000-7000-8000-00000000ffff" }, data: { givenName: "x" } })),
        dangling: await failure(() => db.prisma.user.create({ data: { organizationId: "0190f5d4-0000-7000-8000-00000000eeee", email: "d@example.com" } })),
        invalidUuid: await failure(() => db.prisma.user.findUnique({ where: { id: "not-a-uuid" } })),
      }));
      expect(errors).toEqual({
        duplicate: { status: 409, code: "duplicate", details: [{ field: "email", message: "already taken" }] },
        duplicateSlug: { status: 409, code: "duplicate", details: [{ field: "slug", message: "already taken" }] },
        missing: { status: 404, code: "not_found", details: undefined },
        dangling: { status: 422, code: "validation_failed", details: [{ field: "id", message: "refers to a resource that does not exist" }] },
        invalidUuid: { unmapped: "PrismaClientKnownRequestError" },
      });
    });

    it("commit an interactive transaction, and roll back all of it when it throws", async () => {
      const result = await same(async (db) => {
        await db.prisma.$transaction(async (tx) => {
          await tx.configEntry.create({ data: { key: "contract.committed", value: true } });
          await tx.auditEntry.create({ data: { eventType: "contract", actorType: "system", organizationId: ORG } });
        });
        const thrown = await db.prisma
          .$transaction(async (tx) => {
            await tx.configEntry.create({ data: { key: "contract.rolled-back", value: true } });
            throw new Error("abort");
          })
          .catch((error: Error) => error.message);
        return {
          thrown,
          committed: await db.prisma.configEntry.count({ where: { key: "contract.committed" } }),
          audit: await db.prisma.auditEntry.count({ where: { eventType: "contract" } }),
          rolledBack: await db.prisma.configEntry.count({ where: { key: "contract.rolled-back" } }),
        };
      });
      expect(result).toEqual({ thrown: "abort", committed: 1, audit: 1, rolledBack: 0 });
    });

    it("answer raw queries through Prisma with the same types", async () => {
      const rows = await same(async (db) => ({
        tagged: await db.prisma.$queryRaw<Array<{ n: number; t: string; b: boolean; at: Date; j: unknown; a: string[] }>>`
          SELECT 41 + 1 AS n, 'x'::text AS t, true AS b, TIMESTAMPTZ '2026-01-02 03:04:05.678+00' AS at, '{"k":[1,2]}'::jsonb AS j, ARRAY['a','b'] AS a`,
        executed: await db.prisma.$executeRawUnsafe(`UPDATE "ConfigEntry" SET "value" = '3'::jsonb WHERE "key" = $1`, "contract.key"),
      }));
      expect(rows).toEqual({ tagged: [{ n: 42, t: "x", b: true, at: new Date("2026-01-02T03:04:05.678Z"), j: { k: [1, 2] }, a: ["a", "b"] }], executed: 1 });
    });
  });

  describe("plain SQL through the driver", () => {
    it("gives every type Porta reads back the same: numbers, big integers, times, JSON, arrays, nulls, booleans", async () => {
      const rows = await same((db) =>
        db.query<Record<string, unknown>>(
          `SELECT $1::int AS i, count(*) AS c, 12345678901234::int8 AS big, now() > '2020-01-01' AS b, $2::timestamptz AS at, $3::jsonb AS j,
                  ARRAY['x','y']::text[] AS a, NULL::text AS nothing, $4::uuid AS id, 1.5::float8 AS f, 12.50::numeric(6,2) AS money
             FROM "Organization"`,
          [7, new Date("2026-05-06T07:08:09.010Z"), JSON.stringify({ a: 1 }), ORG],
        ),
      );
      expect(rows).toEqual([{ i: 7, c: "2", big: "12345678901234", b: true, at: new Date("2026-05-06T07:08:09.010Z"), j: { a: 1 }, a: ["x", "y"], nothing: null, id: ORG, f: 1.5, money: "12.50" }]);
    });

    it("runs a script of several statements and answers with the last one's rows (the job queue's shape)", async () => {
      const result = await same((db) => db.executeSql(`CREATE TEMP TABLE IF NOT EXISTS contract_t (n int); INSERT INTO contract_t VALUES (1), (2); SELECT sum(n)::int AS s FROM contract_t; DROP TABLE contract_t`));
      expect(result).toEqual({ rows: [] });
      const parameterized = await same((db) => db.executeSql(`SELECT $1::text || $2::text AS joined`, ["a", "b"]));
      expect(parameterized).toEqual({ rows: [{ joined: "ab" }] });
    });

    it("commits a raw transaction, rolls one back on error, and keeps INSERT … ON CONFLICT and SKIP LOCKED claims alike", async () => {
      const result = await same(async (db) => {
        await db.rawTransaction(async (tx) => {
          await tx.exec(`CREATE TABLE IF NOT EXISTS contract_jobs (id int PRIMARY KEY, state text, hits int DEFAULT 0)`);
          await tx.query(`INSERT INTO contract_jobs (id, state) VALUES (1, 'queued'), (2, 'queued'), (3, 'queued')`);
        });
        const rolledBack = await db
          .rawTransaction(async (tx) => {
            await tx.query(`INSERT INTO contract_jobs (id, state) VALUES (4, 'queued')`);
            await tx.query(`INSERT INTO contract_jobs (id, state) VALUES (4, 'duplicate')`);
          })
          .catch((error: { code?: string }) => error.code);
        const counted = await db.query<{ hits: number }>(
          `INSERT INTO contract_jobs (id, state, hits) VALUES (1, 'x', 1) ON CONFLICT (id) DO UPDATE SET hits = contract_jobs.hits + 1 RETURNING hits`,
          [],
        );
        const claimed = await db.query<{ id: number }>(
          `UPDATE contract_jobs SET state = 'running' WHERE id IN (SELECT id FROM contract_jobs WHERE state = 'queued' ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 2) RETURNING id`,
          [],
        );
        const rows = await db.query<{ id: number }>(`SELECT id FROM contract_jobs ORDER BY id`, []);
        await db.executeSql(`DROP TABLE contract_jobs`);
        return { rolledBack, counted, claimed: claimed.map((r) => r.id).sort(), rows: rows.map((r) => r.id) };
      });
      expect(result).toEqual({ rolledBack: "23505", counted: [{ hits: 1 }], claimed: [1, 2], rows: [1, 2, 3] });
    });

    it("delivers notifications sent by notify and by a statement's pg_notify to a listener, and stops after unlisten", async () => {
      const heard = await same(async (db) => {
        const messages: string[] = [];
        const arrived = (count: number) => until(() => messages.length >= count);
        const stop = await db.listen("contract_channel", (message) => messages.push(message));
        await db.notify("contract_channel", "from notify");
        await arrived(1);
        await db.query(`SELECT pg_notify('contract_channel', $1)`, ["from a statement"]);
        await arrived(2);
        await stop();
        await db.notify("contract_channel", "after unlisten");
        await new Promise((resolve) => setTimeout(resolve, 100));
        return messages;
      });
      expect(heard).toEqual(["from notify", "from a statement"]);
    });

    it("observes each statement it sends, and answers ping", async () => {
      const seen = await same(async (db) => {
        const statements: string[] = [];
        const stop = db.onQuery((sql) => statements.push(sql.trim().split(/\s+/, 1)[0]!.toUpperCase()));
        await db.query(`SELECT 1 AS one`, []);
        await db.prisma.organization.count();
        stop();
        await db.ping(2_000);
        return statements.filter((s) => s === "SELECT").length >= 2;
      });
      expect(seen).toBe(true);
    });
  });

  describe("the key-value store of ephemeral state (cache/postgres-store.ts)", () => {
    const stores = new Map<string, KeyValueStore>();
    const storeOf = (backend: Backend) => {
      let store = stores.get(backend.name);
      if (!store) stores.set(backend.name, (store = createPostgresStore(backend.db, testLogger().logger)));
      return store;
    };
    afterAll(async () => {
      for (const store of stores.values()) await store.close();
    });

    it("sets, reads, expires, replaces, takes once, increments, keeps sets and reads many alike", async () => {
      const result = await same(async (_db, backend) => {
        const store = storeOf(backend);
        await store.set("c:a", "1", 60);
        await store.set("c:gone", "x", 1);
        await store.set("c:forever", "y");
        await store.replace("c:a", "2");
        const counted = [await store.increment("c:n", 60), await store.increment("c:n", 60), await store.increment("c:n", 60)];
        await store.addToSet("c:set:1", "m1", 60);
        await store.addToSet("c:set:1", "m2", 60);
        await store.addToSet("c:set:1", "m1", 60);
        await store.addToSet("c:set:2", "z", 60);
        const taken = [await store.take("c:forever"), await store.take("c:forever")];
        await new Promise((resolve) => setTimeout(resolve, 1_100));
        return {
          a: await store.get("c:a"),
          gone: await store.get("c:gone"),
          counted,
          taken,
          members: (await store.setMembers("c:set:1")).sort(),
          many: await store.getMany(["c:a", "c:gone", "c:missing"]),
          sets: [...(await store.membersOfSets(["c:set:1", "c:set:2", "c:set:3"])).entries()].map(([k, v]) => [k, [...v].sort()]).sort(),
          like: (await store.liveKeysLike("c:%", 10)).map((k) => k.key).sort(),
        };
      });
      expect(result).toEqual({
        a: "2",
        gone: null,
        counted: [1, 2, 3],
        taken: ["y", null],
        members: ["m1", "m2"],
        many: ["2", null, null],
        sets: [["c:set:1", ["m1", "m2"]], ["c:set:2", ["z"]], ["c:set:3", []]],
        like: ["c:a", "c:n"],
      });
    });

    it("counts concurrent increments without losing one", async () => {
      const counts = await same(async (_db, backend) => {
        const store = storeOf(backend);
        const all = await Promise.all(Array.from({ length: 20 }, () => store.increment("c:race", 60)));
        return all.sort((x, y) => x - y);
      });
      expect(counts).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    });
  });
});

describe.skipIf(!process.env.REDIS_URL)("the store contract: the in-process cache and Redis", () => {
  const stores: CacheStore[] = [];
  beforeAll(async () => {
    stores.push(createMemoryStore(), await createRedisStore(process.env.REDIS_URL!, testLogger().logger, `porta-contract-${Date.now()}:`));
  });
  afterAll(async () => {
    for (const store of stores) {
      await store.del("k1", "k2", "k3");
      await store.close();
    }
  });

  it("sets, reads, expires and deletes alike", async () => {
    const answers = await Promise.all(
      stores.map(async (store) => {
        await store.set("k1", "v1");
        await store.set("k2", "v2", 1);
        await store.set("k3", "v3", 60);
        const before = [await store.get("k1"), await store.get("k2"), await store.get("k3"), await store.get("missing")];
        await store.del("k1", "k3");
        await new Promise((resolve) => setTimeout(resolve, 1_100));
        await store.ping();
        return { before, after: [await store.get("k1"), await store.get("k2"), await store.get("k3")] };
      }),
    );
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]).toEqual({ before: ["v1", "v2", "v3", null], after: [null, null, null] });
  });
});

async function until(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
