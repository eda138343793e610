import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPrivateRedis, type RedisServer } from "../../../test/support/process";
import { testLogger } from "../../../test/support/logs";
import { createRedisStore } from "./redis-store";
import type { CacheStore } from "./store";

const { logger: quietLogger } = testLogger();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; result: PromiseSettledResult<T> }> {
  const started = performance.now();
  const [result] = await Promise.allSettled([fn()]);
  return { ms: performance.now() - started, result: result! };
}

describe("Redis cache store against a real Redis", () => {
  let redis: RedisServer;
  const stores: CacheStore[] = [];
  async function store(prefix = "t:"): Promise<CacheStore> {
    const s = await createRedisStore(redis.url, quietLogger, prefix);
    stores.push(s);
    return s;
  }

  beforeAll(async () => {
    // A private server: this file never touches a Redis that other tests or people use.
    redis = await startPrivateRedis();
  });
  afterAll(async () => {
    for (const s of stores) await s.close();
    await redis?.stop();
  });

  it("stores values with a time to live that Redis enforces", async () => {
    const s = await store();
    expect(s.kind).toBe("redis");
    await s.ping();
    await s.set("forever", "x");
    await s.set("brief", "y", 1);
    expect(await s.get("forever")).toBe("x");
    expect(await s.get("brief")).toBe("y");
    // Read by a connection of its own, as an operator would look.
    const raw = new Redis(redis.url);
    const ttl = await raw.pttl("t:brief");
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1_000);
    expect(await raw.pttl("t:forever")).toBe(-1);
    raw.disconnect();
    await sleep(1_100);
    expect(await s.get("brief")).toBeNull();
    await s.del("forever");
    expect(await s.get("forever")).toBeNull();
  });

  it("keeps stores with different prefixes apart", async () => {
    const a = await store("tenant-a:");
    const b = await store("tenant-b:");
    await a.set("k", "from a");
    expect(await b.get("k")).toBeNull();
    expect(await a.get("k")).toBe("from a");
  });
});

describe("Redis cache store when Redis is unreachable", () => {
  let s: CacheStore;
  beforeAll(async () => {
    const { ms, result } = await timed(() => createRedisStore("redis://127.0.0.1:1", quietLogger, "down:"));
    expect(result.status).toBe("fulfilled");
    s = (result as PromiseFulfilledResult<CacheStore>).value;
    // A server with a Redis outage still starts, promptly.
    expect(ms).toBeLessThan(3_000);
  });
  afterAll(async () => {
    await s?.close();
  });

  it("fails every command within a second instead of queueing it", async () => {
    const operations: Array<[string, () => Promise<unknown>]> = [
      ["get", () => s.get("k")],
      ["set", () => s.set("k", "v", 10)],
      ["del", () => s.del("k")],
      ["ping", () => s.ping()],
    ];
    for (const [name, operation] of operations) {
      const { ms, result } = await timed(operation);
      expect(result.status, name).toBe("rejected");
      expect(ms, name).toBeLessThan(1_000);
    }
  });
});
