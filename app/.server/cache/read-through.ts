import type { Logger } from "pino";
import type { Database } from "../db/client";
import type { CacheStore } from "./store";

/**
 * Read-through cache for organization, client and user lookups. The cache is an optimisation
 * only: any store error is logged and the value is loaded from PostgreSQL, so a slow or absent
 * Redis never fails a request. Writers call `invalidate` after they commit.
 */
export interface ReadThroughCache {
  getOrLoad<T>(key: string, ttlSeconds: number, load: () => Promise<T | null>): Promise<T | null>;
  invalidate(...keys: string[]): Promise<void>;
  /** Resolves when the cache store answers (health: a cache outage only degrades). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Where processes with a cache in their own memory hear of each other's invalidations. */
export const CACHE_INVALIDATION_CHANNEL = "porta_cache_invalidate";

const DATE_TAG = "$date";

/** JSON that keeps Date values (Prisma rows carry them) across a round trip. */
export function serialize(value: unknown): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, key, v: unknown) {
    const raw = this[key];
    return raw instanceof Date ? { [DATE_TAG]: raw.toISOString() } : v;
  });
}

export function deserialize<T>(text: string): T {
  return JSON.parse(text, (_key, v: unknown) => {
    if (v && typeof v === "object" && !Array.isArray(v)) {
      const keys = Object.keys(v);
      if (keys.length === 1 && keys[0] === DATE_TAG) return new Date((v as Record<string, string>)[DATE_TAG]!);
    }
    return v;
  }) as T;
}

/** After a failed cache command, reads go straight to the database for this long. */
const BYPASS_MS = 2_000;
/**
 * Keys whose invalidation failed, kept to be deleted once the cache answers again. Beyond this
 * many the oldest are forgotten: their entries then live out their time to live (at most a minute).
 */
const MAX_PENDING_INVALIDATIONS = 10_000;

export async function createReadThroughCache(
  store: CacheStore,
  logger: Logger,
  options: { notifications?: Pick<Database, "notify" | "listen">; namespace?: string; bypassMs?: number } = {},
): Promise<ReadThroughCache> {
  const { notifications, namespace = "cache:", bypassMs = BYPASS_MS } = options;
  let lastWarning = 0;
  // A cache that does not answer costs every request its command timeout; after one failure the
  // cache is left alone for a moment, so that a frozen Redis costs one timeout, not one per lookup.
  let bypassUntil = 0;
  const failed = (operation: string, error: unknown) => {
    bypassUntil = Date.now() + bypassMs;
    if (Date.now() - lastWarning < 10_000) return;
    lastWarning = Date.now();
    logger.warn({ operation, err: { message: error instanceof Error ? error.message : String(error) } }, "cache unavailable, reading from the database");
  };
  const bypassed = () => Date.now() < bypassUntil;

  // A write whose invalidation could not reach the cache must not be undone by the cache coming
  // back with the old entry (a paused Redis keeps its data): those keys are deleted first.
  const pending = new Set<string>();
  async function flushPending(): Promise<boolean> {
    if (pending.size === 0) return true;
    const keys = [...pending];
    try {
      await store.del(...keys);
    } catch (error) {
      failed("invalidate", error);
      return false;
    }
    for (const key of keys) pending.delete(key);
    return true;
  }
  // Retried without waiting for a read: another process may read the old entry in the meantime.
  let retry: NodeJS.Timeout | undefined;
  const scheduleFlush = () => {
    retry ??= setTimeout(() => {
      retry = undefined;
      if (bypassed()) return scheduleFlush();
      void flushPending().then((done) => done || scheduleFlush());
    }, bypassMs);
    retry.unref();
  };

  const shared = store.kind === "redis";
  // A cache in this process's memory is dropped as a whole when invalidations may have been
  // missed (the notification connection was lost: "*"): its keys carry a generation, and a new
  // generation leaves every older entry unread until its time to live ends it.
  let generation = 0;
  const fullKey = (key: string) => (shared ? namespace + key : `${namespace}${generation}:${key}`);
  const unlisten =
    !shared && notifications
      ? await notifications.listen(CACHE_INVALIDATION_CHANNEL, (message) => {
          if (message === "*") {
            generation += 1;
            return;
          }
          let keys: unknown;
          try {
            keys = JSON.parse(message);
          } catch {
            keys = null;
          }
          if (!Array.isArray(keys) || !keys.every((k): k is string => typeof k === "string")) {
            logger.warn({ channel: CACHE_INVALIDATION_CHANNEL }, "cache invalidation message ignored: not a list of keys");
            return;
          }
          store.del(...keys.map(fullKey)).catch((error: unknown) => failed("invalidate", error));
        })
      : undefined;

  return {
    async getOrLoad<T>(key: string, ttlSeconds: number, load: () => Promise<T | null>) {
      if (bypassed() || !(await flushPending())) return load();
      const entry = fullKey(key);
      try {
        const hit = await store.get(entry);
        if (hit !== null) return deserialize<T>(hit);
      } catch (error) {
        failed("get", error);
        return load();
      }
      const value = await load();
      // Absent entities are not cached: a create right after must be visible at once.
      if (value !== null) {
        store.set(entry, serialize(value), ttlSeconds).catch((error: unknown) => failed("set", error));
      }
      return value;
    },
    async invalidate(...keys) {
      const fullKeys = keys.map(fullKey);
      try {
        if (bypassed()) throw new Error("cache bypassed after a failure");
        await store.del(...fullKeys);
      } catch (error) {
        if (!bypassed()) failed("invalidate", error);
        for (const key of fullKeys) pending.add(key);
        for (const key of pending) {
          if (pending.size <= MAX_PENDING_INVALIDATIONS) break;
          pending.delete(key);
        }
        scheduleFlush();
      }
      if (shared) return;
      // Every process of a PostgreSQL deployment without Redis caches in its own memory.
      // The keys without namespace or generation: each process maps them onto its own entries.
      await notifications?.notify(CACHE_INVALIDATION_CHANNEL, JSON.stringify(keys)).catch((error: unknown) => failed("notify", error));
    },
    ping: () => store.ping(),
    async close() {
      clearTimeout(retry);
      await unlisten?.();
      await store.close();
    },
  };
}
