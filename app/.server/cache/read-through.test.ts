import { EventEmitter } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testLogger } from "../../../test/support/logs";
import { createMemoryStore } from "./memory-store";
import { createReadThroughCache, deserialize, serialize } from "./read-through";
import { createRedisStore } from "./redis-store";
import type { CacheStore } from "./store";

function logCapture() {
  const { logger, logs } = testLogger();
  return { lines: logs.lines, logger, logs };
}

/** A loader that counts its calls, like a Prisma lookup would hit PostgreSQL. */
function countingLoader<T>(value: T) {
  const loader = async () => {
    loader.calls++;
    return value;
  };
  loader.calls = 0;
  return loader;
}

describe("serialize / deserialize", () => {
  it("round-trips Date values, nested and in arrays, as Date instances", () => {
    const value = {
      id: "o1",
      createdAt: new Date("2024-02-29T12:34:56.789Z"),
      nested: { lockedUntil: new Date(0), list: [new Date("2030-01-01T00:00:00.000Z"), "text", 3, null] },
      nothing: null,
    };
    const copy = deserialize<typeof value>(serialize(value));
    expect(copy).toEqual(value);
    expect(copy.createdAt).toBeInstanceOf(Date);
    expect(copy.createdAt.getTime()).toBe(value.createdAt.getTime());
    expect(copy.nested.list[0]).toBeInstanceOf(Date);
    expect(copy.nested.lockedUntil.getTime()).toBe(0);
  });

  it("leaves strings that look like dates, and objects that merely contain $date, alone", () => {
    const value = { iso: "2024-02-29T12:34:56.789Z", tagged: { $date: "2024-01-01T00:00:00.000Z", other: 1 }, list: [1, "a", true] };
    const copy = deserialize<typeof value>(serialize(value));
    expect(copy).toStrictEqual(value);
    expect(typeof copy.iso).toBe("string");
  });

  it("round-trips top-level Dates, arrays and scalars", () => {
    expect(deserialize<Date>(serialize(new Date(123)))).toEqual(new Date(123));
    expect(deserialize<unknown[]>(serialize([new Date(5), { a: new Date(6) }]))).toEqual([new Date(5), { a: new Date(6) }]);
    expect(deserialize<string>(serialize("plain"))).toBe("plain");
  });
});

describe("read-through cache on the memory store", () => {
  let store: CacheStore;
  beforeAll(() => {
    store = createMemoryStore();
  });
  afterAll(async () => {
    await store.close();
  });

  it("loads once, then serves the cached copy with its Dates intact", async () => {
    const cache = await createReadThroughCache(store, logCapture().logger, { namespace: "t1:" });
    const row = { id: "u1", email: "a@x.io", createdAt: new Date("2024-05-05T05:05:05.555Z"), roles: ["admin"] };
    const load = countingLoader(row);
    const first = await cache.getOrLoad("user:u1", 60, load);
    // The write to the store is not awaited by getOrLoad; give it a turn.
    await new Promise((resolve) => setImmediate(resolve));
    const second = await cache.getOrLoad("user:u1", 60, load);
    expect(load.calls).toBe(1);
    expect(first).toEqual(row);
    expect(second).toEqual(row);
    // Another process (its own memory, the same store) gets the stored copy, Dates as Dates.
    const other = await createReadThroughCache(store, logCapture().logger, { namespace: "t1:" });
    const stored = await other.getOrLoad("user:u1", 60, load);
    expect(load.calls).toBe(1);
    expect(stored).toEqual(row);
    expect(stored).not.toBe(row);
    expect(stored!.createdAt).toBeInstanceOf(Date);
  });

  it("hands every caller the same parsed copy, frozen, so that no caller can change what the next one reads", async () => {
    const cache = await createReadThroughCache(store, logCapture().logger, { namespace: "t-frozen:" });
    const load = countingLoader({ id: "c1", redirectUris: ["https://app.example/cb"], metadata: { tier: "gold" } });
    const first = await cache.getOrLoad("client:c1", 60, load);
    expect(() => first!.redirectUris.push("https://evil.example/cb")).toThrow(TypeError);
    expect(() => {
      (first!.metadata as { tier: string }).tier = "free";
    }).toThrow(TypeError);
    const second = await cache.getOrLoad("client:c1", 60, load);
    expect(second).toBe(first);
    expect(second).toEqual({ id: "c1", redirectUris: ["https://app.example/cb"], metadata: { tier: "gold" } });
    expect(load.calls).toBe(1);
  });

  it("keeps no copy of a load that an invalidation overtook", async () => {
    // A store that keeps nothing, so that only this process's parsed copy could answer stale.
    const forgetful: CacheStore = { ...createMemoryStore(), set: async () => undefined };
    const cache = await createReadThroughCache(forgetful, logCapture().logger);
    let version = 1;
    let release!: () => void;
    let started!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const loading = new Promise<void>((resolve) => (started = resolve));
    const slowLoad = async () => {
      const read = { version };
      started();
      await gate;
      return read;
    };
    const inFlight = cache.getOrLoad("org:o1", 60, slowLoad);
    await loading;
    // The organization changes and its writer invalidates while the old row is on its way.
    version = 2;
    await cache.invalidate("org:o1");
    release();
    expect(await inFlight).toEqual({ version: 1 });
    expect(await cache.getOrLoad("org:o1", 60, async () => ({ version }))).toEqual({ version: 2 });
  });

  it("does not cache an absent entity, so a create right after is seen", async () => {
    const cache = await createReadThroughCache(store, logCapture().logger, { namespace: "t2:" });
    let current: { id: string } | null = null;
    const load = async () => current;
    expect(await cache.getOrLoad("org:new", 60, load)).toBeNull();
    current = { id: "new" };
    expect(await cache.getOrLoad("org:new", 60, load)).toEqual({ id: "new" });
  });

  it("reloads after invalidate, and keeps namespaces apart", async () => {
    const a = await createReadThroughCache(store, logCapture().logger, { namespace: "ns-a:" });
    const b = await createReadThroughCache(store, logCapture().logger, { namespace: "ns-b:" });
    let version = 1;
    const load = async () => ({ version });
    await a.getOrLoad("client:c1", 60, load);
    await new Promise((resolve) => setImmediate(resolve));
    version = 2;
    expect(await a.getOrLoad("client:c1", 60, load)).toEqual({ version: 1 });
    expect(await b.getOrLoad("client:c1", 60, load)).toEqual({ version: 2 });
    await a.invalidate("client:c1", "client:other");
    expect(await a.getOrLoad("client:c1", 60, load)).toEqual({ version: 2 });
  });

  it("tells the other processes' memory caches of an invalidation through the database's notifications", async () => {
    // Two processes of a PostgreSQL deployment without Redis: each caches in its own memory.
    const bus = new EventEmitter();
    const notifications = {
      notify: async (channel: string, message: string) => void bus.emit(channel, message),
      listen: async (channel: string, handler: (message: string) => void) => {
        bus.on(channel, handler);
        return async () => void bus.off(channel, handler);
      },
    };
    const one = await createReadThroughCache(createMemoryStore(), logCapture().logger, { notifications });
    const two = await createReadThroughCache(createMemoryStore(), logCapture().logger, { notifications });
    let status = "active";
    const load = async () => ({ status });
    await two.getOrLoad("user:u1", 60, load);
    await new Promise((resolve) => setImmediate(resolve));
    status = "suspended";
    expect(await two.getOrLoad("user:u1", 60, load)).toEqual({ status: "active" });
    await one.invalidate("user:u1");
    await new Promise((resolve) => setImmediate(resolve));
    expect(await two.getOrLoad("user:u1", 60, load)).toEqual({ status: "suspended" });
    await one.close();
    await two.close();
    expect(bus.listenerCount("porta_cache_invalidate")).toBe(0);
  });

  it("forgets every entry when invalidations may have been missed (\"*\" after a lost connection), and ignores a malformed message", async () => {
    const bus = new EventEmitter();
    const notifications = {
      notify: async (channel: string, message: string) => void bus.emit(channel, message),
      listen: async (channel: string, handler: (message: string) => void) => {
        bus.on(channel, handler);
        return async () => void bus.off(channel, handler);
      },
    };
    const logs = logCapture();
    const cache = await createReadThroughCache(createMemoryStore(), logs.logger, { notifications });
    let status = "active";
    const load = async () => ({ status });
    await cache.getOrLoad("user:u1", 60, load);
    status = "suspended";
    // The database connection that carries notifications came back: what it missed is unknown.
    bus.emit("porta_cache_invalidate", "*");
    expect(await cache.getOrLoad("user:u1", 60, load)).toEqual({ status: "suspended" });
    // Invalidations still reach the entries of the new generation.
    status = "deleted";
    bus.emit("porta_cache_invalidate", JSON.stringify(["user:u1"]));
    await new Promise((resolve) => setImmediate(resolve));
    expect(await cache.getOrLoad("user:u1", 60, load)).toEqual({ status: "deleted" });
    expect(() => bus.emit("porta_cache_invalidate", "{not json")).not.toThrow();
    expect(() => bus.emit("porta_cache_invalidate", JSON.stringify({ keys: 1 }))).not.toThrow();
    await new Promise((resolve) => setImmediate(resolve));
    expect(logs.lines.filter((line) => line.msg === "cache invalidation message ignored: not a list of keys")).toHaveLength(2);
    await cache.close();
  });

  it("passes a loader's error through to the caller", async () => {
    const cache = await createReadThroughCache(store, logCapture().logger, { namespace: "t3:" });
    await expect(
      cache.getOrLoad("x", 60, async () => {
        throw new Error("database down");
      }),
    ).rejects.toThrow("database down");
  });
});

describe("read-through cache on a store shared by several processes", () => {
  function notificationBus() {
    const bus = new EventEmitter();
    return {
      notify: async (channel: string, message: string) => void bus.emit(channel, message),
      listen: async (channel: string, handler: (message: string) => void) => {
        bus.on(channel, handler);
        return async () => void bus.off(channel, handler);
      },
    };
  }

  it("drops this process's parsed copy when another process invalidates, through the database's notifications", async () => {
    // Two nodes on one Redis: each keeps parsed copies in its own memory.
    const { store } = switchableStore();
    const notifications = notificationBus();
    const one = await createReadThroughCache(store, logCapture().logger, { notifications });
    const two = await createReadThroughCache(store, logCapture().logger, { notifications });
    let status = "active";
    const load = countingLoader(null as unknown);
    const loadStatus = async () => {
      await load();
      return { status };
    };
    expect(await two.getOrLoad("client:c1", 60, loadStatus)).toEqual({ status: "active" });
    status = "disabled";
    await one.invalidate("client:c1");
    expect(await two.getOrLoad("client:c1", 60, loadStatus)).toEqual({ status: "disabled" });
    expect(load.calls).toBe(2);
    await one.close();
    await two.close();
  });

  it("keeps no parsed copy when no notifications can reach it, so every read asks the shared store", async () => {
    const { store, values, state } = switchableStore();
    const cache = await createReadThroughCache(store, logCapture().logger, {});
    await cache.getOrLoad("client:c1", 60, async () => ({ status: "active" }));
    await new Promise((resolve) => setImmediate(resolve));
    // Another node, which this one cannot hear, replaced the shared entry.
    values.set("cache:client:c1", serialize({ status: "disabled" }));
    const gets = state.gets;
    expect(await cache.getOrLoad("client:c1", 60, async () => ({ status: "active" }))).toEqual({ status: "disabled" });
    expect(state.gets).toBe(gets + 1);
  });
});

describe("read-through cache bound to its database (installation id and cache epoch)", () => {
  function notificationBus() {
    const bus = new EventEmitter();
    return {
      bus,
      notify: async (channel: string, message: string) => void bus.emit(channel, message),
      listen: async (channel: string, handler: (message: string) => void) => {
        bus.on(channel, handler);
        return async () => void bus.off(channel, handler);
      },
    };
  }
  /** The installation row: `fresh` at every start, `restore` puts an old epoch back. */
  function installation() {
    let namespace = "i1:e0:";
    let taken = 0;
    const fresh = async () => (namespace = `i1:e${++taken}:`);
    return {
      source: { fresh, current: async () => namespace, replace: async (seen: string) => (namespace === seen ? fresh() : namespace) },
      restore: (old: string) => void (namespace = old),
    };
  }
  const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

  it("reads past an entry it cannot parse and answers from the database", async () => {
    const { store, values } = switchableStore();
    const { logger, logs } = logCapture();
    const cache = await createReadThroughCache(store, logger, {});
    values.set("cache:client:c1", "{written by something else");
    expect(await cache.getOrLoad("client:c1", 60, async () => ({ status: "active" }))).toEqual({ status: "active" });
    await settle();
    expect(deserialize(values.get("cache:client:c1")!)).toEqual({ status: "active" });
    expect(logs.lines.some((line) => line.msg === "cache entry unreadable, reading from the database")).toBe(true);
    await cache.close();
  });

  it("shares the entries of the namespace a process took at its start with the processes already running", async () => {
    const { store } = switchableStore();
    const row = installation();
    const notifications = notificationBus();
    const one = await createReadThroughCache(store, logCapture().logger, { notifications, epochs: row.source });
    const two = await createReadThroughCache(store, logCapture().logger, { notifications, epochs: row.source });
    await two.getOrLoad("org:acme", 60, async () => ({ name: "Acme" }));
    await settle();
    const load = countingLoader({ name: "Acme" });
    expect(await one.getOrLoad("org:acme", 60, load)).toEqual({ name: "Acme" });
    expect(load.calls).toBe(0);
    await one.close();
    await two.close();
  });

  it("applies an invalidation made in another namespace (or by a process that names none) to its own", async () => {
    const { store } = switchableStore();
    const notifications = notificationBus();
    const cache = await createReadThroughCache(store, logCapture().logger, { notifications, epochs: installation().source });
    let status = "active";
    const load = async () => ({ status });
    await cache.getOrLoad("client:c1", 60, load);
    await settle();
    status = "disabled";
    notifications.bus.emit("porta_cache_invalidate", JSON.stringify(["client:c1"]));
    await settle();
    expect(await cache.getOrLoad("client:c1", 60, load)).toEqual({ status: "disabled" });
    await cache.close();
  });

  it("also deletes the bare key that a process of a version without namespaces reads, during a rolling upgrade", async () => {
    const { store, values } = switchableStore();
    const cache = await createReadThroughCache(store, logCapture().logger, { notifications: notificationBus(), epochs: installation().source });
    values.set("cache:client:c1", serialize({ status: "active" }));
    await cache.invalidate("client:c1");
    expect(values.has("cache:client:c1")).toBe(false);
    await cache.close();
  });

  it("leaves its namespace when the database comes back from a backup while the process runs", async () => {
    const { store } = switchableStore();
    const row = installation();
    const notifications = notificationBus();
    const cache = await createReadThroughCache(store, logCapture().logger, { notifications, epochs: row.source });
    let status = "after the backup";
    const load = async () => ({ status });
    await cache.getOrLoad("client:c1", 60, load);
    await settle();
    // The database is restored: its row holds the epoch of the backup's time, its data is older.
    row.restore("i1:e0:");
    status = "in the backup";
    notifications.bus.emit("porta_cache_invalidate", "*");
    await settle();
    expect(await cache.getOrLoad("client:c1", 60, load)).toEqual({ status: "in the backup" });
    expect(await row.source.current()).not.toBe("i1:e0:");
    await cache.close();
  });
});

/** A cache store in memory that can be taken down (every command fails after `delayMs`) and brought back. */
function switchableStore(delayMs = 0) {
  const values = new Map<string, string>();
  const state = { down: false, gets: 0 };
  const answer = async <T>(value: () => T): Promise<T> => {
    if (!state.down) return value();
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    throw new Error("Command timed out");
  };
  const store: CacheStore = {
    kind: "redis",
    get: (key) => {
      state.gets++;
      return answer(() => values.get(key) ?? null);
    },
    set: (key, value) => answer(() => void values.set(key, value)),
    del: (...keys) => answer(() => keys.forEach((key) => values.delete(key))),
    ping: () => answer(() => undefined),
    close: async () => undefined,
  };
  return { store, values, state };
}

describe("read-through cache on a cache that stops answering", () => {
  it("reads from the database for a moment after a failed command, so a frozen cache costs one timeout, not one per lookup", async () => {
    const { store, state } = switchableStore(50);
    const cache = await createReadThroughCache(store, logCapture().logger, { bypassMs: 300 });
    state.down = true;
    const load = countingLoader({ id: "o1" });
    const started = performance.now();
    for (let i = 0; i < 5; i++) expect(await cache.getOrLoad("org:o1", 60, load)).toEqual({ id: "o1" });
    expect(performance.now() - started).toBeLessThan(250);
    expect(state.gets).toBe(1);
    expect(load.calls).toBe(5);
    await new Promise((resolve) => setTimeout(resolve, 320));
    state.down = false;
    await cache.getOrLoad("org:o1", 60, load);
    expect(state.gets).toBe(2);
    await cache.close();
  });

  it("deletes what it could not invalidate as soon as the cache answers again, without waiting for a read", async () => {
    const { store, values, state } = switchableStore();
    const cache = await createReadThroughCache(store, logCapture().logger, { bypassMs: 100 });
    let status = "active";
    const load = async () => ({ status });
    await cache.getOrLoad("user:u1", 60, load);
    await new Promise((resolve) => setImmediate(resolve));
    expect(values.has("cache:user:u1")).toBe(true);
    // A paused Redis: the write's invalidation fails, and the old entry is still there when it resumes.
    state.down = true;
    status = "suspended";
    await cache.invalidate("user:u1");
    state.down = false;
    expect(values.has("cache:user:u1")).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(values.has("cache:user:u1")).toBe(false);
    expect(await cache.getOrLoad("user:u1", 60, load)).toEqual({ status: "suspended" });
    await cache.close();
  });
});

describe("read-through cache on a Redis that is not there", () => {
  let store: CacheStore;
  const capture = logCapture();

  beforeAll(async () => {
    // Nothing listens on port 1: every connection attempt is refused.
    store = await createRedisStore("redis://127.0.0.1:1", capture.logger, `porta-test-${process.pid}:`);
  });
  afterAll(async () => {
    await store?.close();
  });

  it("answers getOrLoad from the loader within a second, every time", async () => {
    const cache = await createReadThroughCache(store, capture.logger);
    const row = { id: "o1", slug: "acme", createdAt: new Date("2024-01-01T00:00:00.000Z") };
    const load = countingLoader(row);
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      expect(await cache.getOrLoad("org:acme", 60, load)).toEqual(row);
      expect(performance.now() - started).toBeLessThan(1_000);
    }
    expect(load.calls).toBe(3);
  });

  it("lets invalidate resolve without throwing, within a second", async () => {
    const cache = await createReadThroughCache(store, capture.logger);
    const started = performance.now();
    await expect(cache.invalidate("org:acme", "client:c1")).resolves.toBeUndefined();
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it("logs the outage as a warning, not once per request", async () => {
    const own = logCapture();
    const cache = await createReadThroughCache(store, own.logger);
    for (let i = 0; i < 5; i++) await cache.getOrLoad(`k${i}`, 60, async () => ({ i }));
    const warnings = own.lines.filter((l) => l.msg === "cache unavailable, reading from the database");
    expect(warnings.length).toBeGreaterThanOrEqual(1);
    expect(warnings.length).toBeLessThanOrEqual(2);
    expect(warnings.every((w) => w.level === 40)).toBe(true);
  });

  it("reports the store as unreachable on ping", async () => {
    await expect(store.ping()).rejects.toThrow();
  });
});
