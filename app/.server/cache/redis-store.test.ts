import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPrivateRedis, type RedisServer } from "../../../test/support/process";
import { createLogger } from "../logging/logger";
import { createRedisStore, type RedisStore } from "./redis-store";

const quietLogger = createLogger(
  "warn",
  new Writable({
    write(_chunk, _encoding, done) {
      done();
    },
  }),
);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; result: PromiseSettledResult<T> }> {
  const started = performance.now();
  const [result] = await Promise.allSettled([fn()]);
  return { ms: performance.now() - started, result: result! };
}

async function waitFor(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check() && Date.now() < deadline) await sleep(20);
  return check();
}

describe("Redis store against a real Redis", () => {
  let redis: RedisServer;
  const stores: RedisStore[] = [];
  async function store(prefix = "t:"): Promise<RedisStore> {
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
    const ttl = await s.client.pttl("brief");
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1_000);
    expect(await s.client.pttl("forever")).toBe(-1);
    await sleep(1_100);
    expect(await s.get("brief")).toBeNull();
    await s.del("forever");
    expect(await s.get("forever")).toBeNull();
  });

  it("take() hands a value to exactly one of several concurrent callers", async () => {
    const s = await store();
    await s.set("code", "abc", 60);
    const results = await Promise.all(Array.from({ length: 5 }, () => s.take("code")));
    expect(results.filter((r) => r === "abc")).toHaveLength(1);
    expect(results.filter((r) => r === null)).toHaveLength(4);
  });

  it("replace() keeps the time to live, and does nothing for a missing key", async () => {
    const s = await store();
    await s.set("interaction", "v1", 30);
    await s.replace("interaction", "v2");
    expect(await s.get("interaction")).toBe("v2");
    const ttl = await s.client.pttl("interaction");
    expect(ttl).toBeGreaterThan(25_000);
    await s.replace("missing", "v");
    expect(await s.get("missing")).toBeNull();
  });

  it("keeps sets with a time to live", async () => {
    const s = await store();
    await s.addToSet("grant:g1", "token:a", 30);
    await s.addToSet("grant:g1", "token:b", 30);
    await s.addToSet("grant:g1", "token:a", 30);
    expect((await s.setMembers("grant:g1")).sort()).toEqual(["token:a", "token:b"]);
    expect(await s.client.ttl("grant:g1")).toBeGreaterThan(25);
    await s.del("grant:g1");
    expect(await s.setMembers("grant:g1")).toEqual([]);
  });

  it("keeps stores with different prefixes apart", async () => {
    const a = await store("tenant-a:");
    const b = await store("tenant-b:");
    await a.set("k", "from a");
    expect(await b.get("k")).toBeNull();
    expect(await a.get("k")).toBe("from a");
  });

  it("delivers a message published by one store to subscribers in another (as between two servers)", async () => {
    const listener = await store("shared:");
    const speaker = await store("shared:");
    const stranger = await store("other:");
    const heard: string[] = [];
    const strangerHeard: string[] = [];
    const unsubscribe = await listener.subscribe("org-changed", (m) => heard.push(m));
    await stranger.subscribe("org-changed", (m) => strangerHeard.push(m));
    // subscribe() resolves once Redis confirmed the subscription, so nothing published after it is lost.
    await speaker.publish("org-changed", "acme");
    expect(await waitFor(() => heard.length > 0, 2_000)).toBe(true);
    expect(heard).toEqual(["acme"]);
    await unsubscribe();
    await sleep(100);
    await speaker.publish("org-changed", "globex");
    await sleep(200);
    expect(heard).toEqual(["acme"]);
    expect(strangerHeard).toEqual([]);
  });
});

describe("Redis store when Redis is unreachable", () => {
  let s: RedisStore;
  beforeAll(async () => {
    const { ms, result } = await timed(() => createRedisStore("redis://127.0.0.1:1", quietLogger, "down:"));
    expect(result.status).toBe("fulfilled");
    s = (result as PromiseFulfilledResult<RedisStore>).value;
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
      ["take", () => s.take("k")],
      ["replace", () => s.replace("k", "v")],
      ["addToSet", () => s.addToSet("set", "m", 10)],
      ["setMembers", () => s.setMembers("set")],
      ["publish", () => s.publish("c", "m")],
      ["ping", () => s.ping()],
    ];
    for (const [name, operation] of operations) {
      const { ms, result } = await timed(operation);
      expect(result.status, name).toBe("rejected");
      expect(ms, name).toBeLessThan(1_000);
    }
  });

  it("returns from subscribe and unsubscribe within a second", async () => {
    const subscribed = await timed(() => s.subscribe("org-changed", () => undefined));
    expect(subscribed.result.status).toBe("fulfilled");
    expect(subscribed.ms).toBeLessThan(1_000);
    const unsubscribe = (subscribed.result as PromiseFulfilledResult<() => Promise<void>>).value;
    const unsubscribed = await timed(unsubscribe);
    expect(unsubscribed.result.status).toBe("fulfilled");
    expect(unsubscribed.ms).toBeLessThan(1_000);
  });
});
