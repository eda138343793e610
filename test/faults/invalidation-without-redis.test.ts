import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrganization, setOrganizationStatus } from "~/.server/admin/organizations/service";
import { systemActor } from "~/.server/auth/actors";
import { inTransaction } from "~/.server/context";
import { startTestPorta, type TestPorta } from "../support/porta";
import { startPrivatePostgres, startPrivateRedis, type PostgresServer, type RedisServer } from "../support/process";

/**
 * Two Porta processes on one database tell each other about changes through PostgreSQL, not
 * Redis: with Redis killed, an organization suspended through one is refused by the other
 * within a second (before, the other served it for up to ten minutes). Private PostgreSQL and
 * Redis servers, so the test kills only what it started.
 */
describe("cross-process invalidation with Redis down", () => {
  let postgres: PostgresServer;
  let redis: RedisServer;
  const processes: TestPorta[] = [];

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
    redis = await startPrivateRedis();
    const shared = { databaseUrl: postgres.url, redisPrefix: `porta-two-${randomBytes(4).toString("hex")}:`, env: { REDIS_URL: redis.url, ENCRYPTION_KEY: randomBytes(32).toString("base64") } };
    processes.push(await startTestPorta(shared));
    processes.push(await startTestPorta(shared));
  }, 180_000);

  afterAll(async () => {
    for (const porta of processes) await porta.stop();
    await redis?.stop();
    await postgres?.dispose();
  }, 60_000);

  it("a suspension through one process is refused by the other within a second", { timeout: 120_000 }, async () => {
    const [a, b] = processes as [TestPorta, TestPorta];
    const org = await inTransaction(a.services, systemActor(null), (ctx) => createOrganization(ctx, { name: "Two Processes", slug: "two-processes" }));
    const discovery = () => fetch(`${b.baseUrl}/two-processes/.well-known/openid-configuration`).then((res) => res.status);
    expect(await discovery()).toBe(200);

    await redis.stop();
    await inTransaction(a.services, systemActor(null), (ctx) => setOrganizationStatus(ctx, org.id, "suspended"));
    const suspendedAt = Date.now();
    let status = await discovery();
    while (status === 200 && Date.now() - suspendedAt < 5_000) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      status = await discovery();
    }
    expect(status).toBe(404);
    expect(Date.now() - suspendedAt).toBeLessThan(1_000);
  });
});
