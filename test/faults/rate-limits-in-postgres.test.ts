import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "~/.server/rate-limit/limiters";
import { TestBrowser } from "../support/browser";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { startPrivatePostgres, startPrivateRedis, type PostgresServer, type RedisServer } from "../support/process";
import { createTenant, openLoginPage, PASSWORD, submitPassword, type Tenant } from "../login/helpers";

/**
 * The rate-limit counters live in PostgreSQL: they hold while Redis is down (before, an
 * in-memory stand-in started counting from zero) and across a restart of Porta (before, without
 * Redis, a restart forgot them). Private PostgreSQL and Redis, so the test stops only what it started.
 */
describe("rate-limit counters without Redis and across a restart", () => {
  let postgres: PostgresServer;
  let redis: RedisServer;
  let porta: TestPorta | undefined;
  const ENCRYPTION_KEY = randomBytes(32).toString("base64");

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
    redis = await startPrivateRedis();
  }, 180_000);
  afterAll(async () => {
    await porta?.stop();
    await redis?.stop();
    await postgres?.dispose();
  }, 60_000);

  const attempt = async (t: Tenant, email: string, password: string) => {
    const page = await openLoginPage(t, { browser: new TestBrowser() });
    const res = await submitPassword(page, email, password);
    await res.arrayBuffer();
    return res.status;
  };

  it("a client refused before Redis stops, and before a restart, stays refused", { timeout: 180_000 }, async () => {
    porta = await startTestPorta({ databaseUrl: postgres.url, env: { REDIS_URL: redis.url, ENCRYPTION_KEY } });
    const tenant = await createTenant(porta);
    const user = await createUser(porta.services.db.prisma, tenant.org.id, { password: PASSWORD });
    const statuses = [];
    const { points } = DEFAULT_LIMITS.passwordLogin;
    // A wrong password, then others (the lockout answers them alike) up to the limit; then refused.
    for (let i = 0; i <= points; i++) statuses.push(await attempt(tenant, user.email, "a wrong password 9"));
    expect(statuses).toEqual([...Array<number>(points).fill(401), 429]);

    await redis.stop();
    const key = `${tenant.org.id}:${user.email}`;
    expect((await porta.services.limits.consume("passwordLogin", key)).allowed).toBe(false);
    expect((await porta.services.limits.consume("passwordLogin", `${tenant.org.id}:someone-else@example.com`)).allowed).toBe(true);

    await porta.stop();
    porta = undefined;
    porta = await startTestPorta({ databaseUrl: postgres.url, env: { REDIS_URL: undefined, ENCRYPTION_KEY } });
    // The restarted Porta listens on another port: the same organization, reached there.
    expect(await attempt({ ...tenant, issuer: `${porta.baseUrl}/${tenant.org.slug}` }, user.email, PASSWORD)).toBe(429);
  });
});
