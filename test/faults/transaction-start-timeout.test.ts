import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isDatabaseUnavailable, toAppError } from "~/.server/db/errors";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createClient, createOrganization } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { startPrivatePostgres, type PostgresServer } from "../support/process";

/**
 * A database too busy to start a write's transaction in time (Prisma: "Unable to start a
 * transaction in the given time") is a 503 with Retry-After, like a database that does not
 * answer, never a 500. Made for real on a private PostgreSQL: every connection of the server's
 * pool waits on a lock this test holds, and the server waits only a moment for a transaction to
 * start.
 */
const POOL_SIZE = 10; // db/client.ts: the PostgreSQL pool's connections
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("a transaction that cannot start in time", () => {
  let server: PostgresServer;
  let porta: TestPorta;
  /** Holds the locks the server's connections wait on. */
  let locks: pg.Client;
  let nextLock = 1;
  const holders: Array<Promise<unknown>> = [];

  beforeAll(async () => {
    server = await startPrivatePostgres();
    porta = await startTestPorta({ databaseUrl: server.url, env: { REDIS_URL: undefined }, transactionMaxWaitMs: 300 });
    locks = new pg.Client({ connectionString: server.url });
    await locks.connect();
  }, 180_000);
  afterAll(async () => {
    await locks?.end().catch(() => undefined);
    await Promise.allSettled(holders);
    await porta?.stop();
    await server?.dispose();
  }, 60_000);

  const stats = () => porta.services.db.poolStats!();

  /** One of the server's connections, from the pool's queue, waits until `release` is called. */
  async function holdOne(): Promise<() => Promise<void>> {
    const id = nextLock++;
    await locks.query("SELECT pg_advisory_lock($1::bigint)", [id]);
    holders.push(porta.services.db.query("SELECT pg_advisory_xact_lock($1::bigint)", [id]));
    return async () => void (await locks.query("SELECT pg_advisory_unlock($1::bigint)", [id]));
  }

  async function until(condition: () => boolean, what: string) {
    for (const deadline = Date.now() + 10_000; !condition(); await pause(10)) expect(Date.now(), what).toBeLessThan(deadline);
  }

  /** Every connection of the pool waits on a lock; returns their releases. */
  async function holdEveryConnection(): Promise<Array<() => Promise<void>>> {
    const releases = [];
    for (let i = 0; i < POOL_SIZE; i++) releases.push(await holdOne());
    await until(() => stats().total === POOL_SIZE && stats().idle === 0 && stats().waiting === 0, "every connection held");
    return releases;
  }

  it("is what Prisma says then, and it counts as the database being unavailable", async () => {
    const releases = await holdEveryConnection();
    const failure = await porta.services.db.prisma.$transaction(async (tx) => tx.organization.count(), { maxWait: 50 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    for (const release of releases) await release();
    expect(String((failure as Error | undefined)?.message)).toMatch(/Unable to start a transaction in the given time/);
    expect(isDatabaseUnavailable(failure)).toBe(true);
    const answer = toAppError(failure);
    expect(answer?.status).toBe(503);
    expect(answer?.headers).toMatchObject({ "Retry-After": "5" });
  }, 30_000);

  it("answers an Admin API write 503 with Retry-After, never 500", async () => {
    const prisma = porta.services.db.prisma;
    const org = await createOrganization(prisma);
    const { client } = await createClient(prisma, org.id);
    const api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
    expect((await api.get(`/clients/${client.id}`)).status).toBe(200);
    // The admin is checked by reading the database before the write's transaction starts: each of
    // those reads is let through on a connection set free, and another waiter takes the
    // connection after it, until the check's last read has run. Then the transaction start waits.
    let checked = false;
    let checkedAt = 0;
    const stop = porta.services.db.onQuery((sql) => {
      if (!sql.includes('u."organizationId", o.slug')) return;
      checked = true;
      checkedAt = Date.now();
    });
    const releases = await holdEveryConnection();
    const answer = api.put(`/clients/${client.id}`, { name: "Renamed while busy" });
    let settled = false;
    void answer.finally(() => (settled = true));
    while (!checked && !settled) {
      await until(() => stats().waiting > 0 || settled, "the request waits for a connection");
      await pause(50);
      if (checked || settled) break;
      const next = await holdOne();
      await releases.shift()!();
      releases.push(next);
      await until(() => stats().waiting === 1 || settled, "the read ran and a holder took its connection");
    }
    const res = await answer;
    // Within the transaction's wait (300 ms, and Prisma's cleanup), well before the pool's own
    // 5 s wait for a connection would have answered 503 for another reason.
    expect(Date.now() - checkedAt).toBeLessThan(4_000);
    stop();
    for (const release of releases) await release();

    expect(res.status, JSON.stringify(res.body)).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(res.body).toMatchObject({ error: { code: "unavailable" } });
    expect((await api.get(`/clients/${client.id}`)).body).toMatchObject({ name: "Test client" });
    expect(porta.logs.lines.filter((line) => (line.level as number) >= 50).map((line) => line.msg)).toEqual([]);
  }, 60_000);
});
