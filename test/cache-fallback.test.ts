import { readFileSync } from "node:fs";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPorta, type TestPorta } from "./support/porta";
import { startPrivateRedis, type RedisServer } from "./support/process";

/** The release label /health names, as the project declares it. */
const RELEASE = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;

/**
 * Redis is an optimisation: when it is absent, dies, or hangs, Porta keeps answering from
 * PostgreSQL, quickly, and /health says "degraded" instead of failing.
 */

const SLUG = "porta-admin";

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
}

async function health(porta: TestPorta) {
  return timed(async () => {
    const res = await fetch(`${porta.url}/health`, { signal: AbortSignal.timeout(5_000) });
    return { status: res.status, body: (await res.json()) as { status: string; checks: { database: string; cache: string; mail: string; keys: string } } };
  });
}

/** A cached organization lookup, as request handlers do it: the loader goes to the database. */
function readOrganization(porta: TestPorta, loads: { count: number }) {
  return timed(() =>
    porta.services.cache.getOrLoad(`test-org:${SLUG}`, 60, async () => {
      loads.count++;
      return porta.services.db.prisma.organization.findUnique({ where: { slug: SLUG } });
    }),
  );
}

async function eventually<T>(fn: () => Promise<T>, accept: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (accept(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe("Porta with REDIS_URL at a closed port", () => {
  let porta: TestPorta;
  beforeAll(async () => {
    porta = await startTestPorta({ env: { REDIS_URL: "redis://127.0.0.1:1" } });
  });
  afterAll(async () => {
    await porta?.stop();
  });

  it("starts, and /health answers 200 degraded with the cache unavailable", async () => {
    const { value, ms } = await health(porta);
    expect(value.status).toBe(200);
    expect(value.body).toEqual({ status: "degraded", release: RELEASE, checks: { database: "ok", cache: "unavailable", mail: "ok", keys: "ok" } });
    expect(ms).toBeLessThan(2_000);
  });

  it("serves cached reads from the database, fast", async () => {
    const loads = { count: 0 };
    for (let i = 0; i < 3; i++) {
      const { value, ms } = await readOrganization(porta, loads);
      expect(value?.slug).toBe(SLUG);
      expect(value?.id).toBe(porta.bootstrap.organizationId);
      expect(ms).toBeLessThan(1_000);
    }
    // The database once; then this process's own copy (decision 058), which Redis is not needed for.
    expect(loads.count).toBe(1);
  });

  it("reads a change made while Redis is down at once", async () => {
    await changeNameWhileRedisIsDown(porta, "Renamed while Redis is refused");
  });
});

/** A writer changes the organization and invalidates, as services do: the next read has the change, from the database. */
async function changeNameWhileRedisIsDown(porta: TestPorta, name: string) {
  const loads = { count: 0 };
  await readOrganization(porta, loads);
  await porta.services.db.prisma.organization.update({ where: { slug: SLUG }, data: { name } });
  const invalidated = await timed(() => porta.services.cache.invalidate(`test-org:${SLUG}`));
  expect(invalidated.ms).toBeLessThan(2_000);
  const before = loads.count;
  const read = await readOrganization(porta, loads);
  expect(read.value?.name).toBe(name);
  expect(loads.count).toBe(before + 1);
  expect(read.ms).toBeLessThan(1_000);
}

describe("Porta whose Redis hangs, recovers, then dies", () => {
  let redis: RedisServer;
  let porta: TestPorta;
  let observer: Redis;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    porta = await startTestPorta({ env: { REDIS_URL: redis.url } });
    observer = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
    observer.on("error", () => undefined);
    await observer.connect();
  });
  afterAll(async () => {
    observer?.disconnect();
    await porta?.stop();
    await redis?.stop();
  });

  it("is healthy with Redis up, and caches reads in Redis", async () => {
    const { value } = await health(porta);
    expect(value.status).toBe(200);
    expect(value.body).toEqual({ status: "ok", release: RELEASE, checks: { database: "ok", cache: "ok", mail: "ok", keys: "ok" } });

    const loads = { count: 0 };
    const first = await readOrganization(porta, loads);
    expect(first.value?.slug).toBe(SLUG);
    // The entry lands in this Redis (written in the background), and later reads come from it.
    const keys = await eventually(() => observer.keys("*test-org:*"), (k) => k.length > 0, 2_000);
    expect(keys).toHaveLength(1);
    const second = await readOrganization(porta, loads);
    expect(second.value).toEqual(first.value);
    expect(second.value?.createdAt).toBeInstanceOf(Date);
    expect(loads.count).toBe(1);
  });

  it("keeps answering within about a second while Redis hangs with its socket open", async () => {
    redis.signal("SIGSTOP");
    try {
      const h = await health(porta);
      expect(h.value.status).toBe(200);
      expect(h.value.body).toEqual({ status: "degraded", release: RELEASE, checks: { database: "ok", cache: "unavailable", mail: "ok", keys: "ok" } });
      expect(h.ms).toBeLessThan(1_500);

      const loads = { count: 0 };
      await porta.services.cache.invalidate(`test-org:${SLUG}`);
      for (let i = 0; i < 2; i++) {
        const read = await readOrganization(porta, loads);
        expect(read.value?.slug).toBe(SLUG);
        expect(read.ms).toBeLessThan(1_200);
      }

      const page = await timed(() => fetch(`${porta.url}/`, { signal: AbortSignal.timeout(5_000) }));
      expect(page.value.status).toBe(200);
      expect(page.ms).toBeLessThan(1_500);
    } finally {
      redis.signal("SIGCONT");
    }
  });

  it("recovers to ok by itself once Redis answers again", async () => {
    const h = await eventually(() => health(porta), (r) => r.value.body.status === "ok", 10_000);
    expect(h.value.body).toEqual({ status: "ok", release: RELEASE, checks: { database: "ok", cache: "ok", mail: "ok", keys: "ok" } });
    const loads = { count: 0 };
    expect((await readOrganization(porta, loads)).value?.slug).toBe(SLUG);
  });

  it("says degraded within two seconds per request once Redis is killed, and reads still succeed", async () => {
    redis.signal("SIGKILL");
    await redis.stop();
    for (let i = 0; i < 3; i++) {
      const h = await health(porta);
      expect(h.value.status).toBe(200);
      expect(h.value.body).toEqual({ status: "degraded", release: RELEASE, checks: { database: "ok", cache: "unavailable", mail: "ok", keys: "ok" } });
      expect(h.ms).toBeLessThan(2_000);
    }
    const loads = { count: 0 };
    for (let i = 0; i < 3; i++) {
      const read = await readOrganization(porta, loads);
      expect(read.value?.slug).toBe(SLUG);
      expect(read.value?.id).toBe(porta.bootstrap.organizationId);
      expect(read.ms).toBeLessThan(1_000);
    }
    // Read before Redis died: this process's own copy answers (decision 058).
    expect(loads.count).toBe(0);
    await changeNameWhileRedisIsDown(porta, "Renamed after Redis died");
  });
});
