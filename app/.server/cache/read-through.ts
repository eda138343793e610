import type { Logger } from "pino";
import type { Database } from "../db/client";
import type { CacheEpochSource } from "./epoch";
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

/**
 * Marks inside an invalidation message's list of keys (decision 070): a process announcing the
 * shared namespace it took, and the namespace a writer deleted its keys in. A process of an older
 * version reads them as keys it does not have.
 */
const EPOCH_MARK = "@epoch:";
const WRITER_MARK = "@from:";

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

/**
 * Values are also kept, parsed and frozen, in this process's memory for a short while, so that a
 * hot organization, client or user costs neither a cache round trip nor a JSON parse per request
 * (decision 058). Invalidations reach every process's copy through the database's notifications; the
 * time to live bounds what a lost notification could leave behind.
 */
const LOCAL_TTL_MS = 30_000;
/** The hot set of a node; a few MB at most, so that traffic spread over 100,000 organizations does not grow it. */
const LOCAL_MAX_ENTRIES = 2_000;

/** Frozen all the way down, so that no caller can change the copy the next caller gets. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
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
  options: { notifications?: Pick<Database, "notify" | "listen">; epochs?: CacheEpochSource; namespace?: string; bypassMs?: number } = {},
): Promise<ReadThroughCache> {
  const { notifications, epochs, namespace = "cache:", bypassMs = BYPASS_MS } = options;
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
  // A shared cache's keys carry the database's installation id and cache epoch (decision 070):
  // entries of another database, or of this one before a restore, are never read.
  let sharedNamespace = "";
  // While the namespace is being checked against the database, the shared cache is left alone.
  let checking = false;
  const fullKey = (key: string) => (shared ? namespace + sharedNamespace + key : `${namespace}${generation}:${key}`);

  // The parsed copies. Only where every other process's invalidations can reach them: a shared
  // cache without notifications keeps none. A load that an invalidation overtook (the epoch moved
  // on while it read) is handed out but not kept.
  const keepsLocal = !shared || Boolean(notifications);
  const local = new Map<string, { value: unknown; until: number }>();
  let epoch = 0;
  const forgetLocal = (keys: readonly string[] | "all") => {
    epoch += 1;
    if (keys === "all") local.clear();
    else for (const key of keys) local.delete(key);
  };
  const keepLocal = (key: string, value: unknown, ttlSeconds: number, since: number) => {
    if (!keepsLocal || since !== epoch) return;
    if (local.size >= LOCAL_MAX_ENTRIES) local.delete(local.keys().next().value!);
    local.set(key, { value, until: Date.now() + Math.min(LOCAL_TTL_MS, ttlSeconds * 1000) });
  };

  const announce = (namespaceTaken: string) =>
    notifications?.notify(CACHE_INVALIDATION_CHANNEL, JSON.stringify([EPOCH_MARK + namespaceTaken])).catch((error: unknown) => failed("notify", error));
  // After missed messages the database may hold a namespace this process never heard of: another
  // process's start, or a restore from a backup (the old epoch, with entries written after the
  // backup still in Redis). Which one cannot be told apart, so an unknown one is replaced.
  let recheck: NodeJS.Timeout | undefined;
  async function checkNamespace(): Promise<void> {
    if (!shared || !epochs) return;
    checking = true;
    clearTimeout(recheck);
    try {
      const seen = await epochs.current();
      if (seen !== sharedNamespace) {
        sharedNamespace = await epochs.replace(seen);
        await announce(sharedNamespace);
      }
      checking = false;
    } catch (error) {
      failed("namespace", error);
      recheck = setTimeout(() => void checkNamespace(), bypassMs);
      recheck.unref();
    }
  }

  const unlisten = notifications
    ? await notifications.listen(CACHE_INVALIDATION_CHANNEL, (message) => {
        if (message === "*") {
          forgetLocal("all");
          generation += 1;
          void checkNamespace();
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
        const taken = keys.find((k) => k.startsWith(EPOCH_MARK));
        if (taken !== undefined) {
          // A process took a new namespace at its start; every process follows it.
          if (shared && epochs) sharedNamespace = taken.slice(EPOCH_MARK.length);
          return;
        }
        const writer = keys.find((k) => k.startsWith(WRITER_MARK))?.slice(WRITER_MARK.length);
        const plain = keys.filter((k) => !k.startsWith(WRITER_MARK));
        forgetLocal(plain);
        // A shared cache was cleared by the writer, in the writer's namespace: when that is not this
        // process's (a namespace just changed, or a writer of an older version), here too. A cache
        // in memory is this process's to clear.
        if (!shared || writer !== sharedNamespace) store.del(...plain.map(fullKey)).catch((error: unknown) => failed("invalidate", error));
      })
    : undefined;
  if (shared && epochs) {
    sharedNamespace = await epochs.fresh();
    await announce(sharedNamespace);
  }

  async function readThrough<T>(key: string, ttlSeconds: number, load: () => Promise<T | null>): Promise<T | null> {
    if (checking || bypassed() || !(await flushPending())) return load();
    const entry = fullKey(key);
    let hit: string | null;
    try {
      hit = await store.get(entry);
    } catch (error) {
      failed("get", error);
      return load();
    }
    if (hit !== null) {
      try {
        return deserialize<T>(hit);
      } catch {
        // Not an entry this code wrote (another program's key, a damaged value): it is read
        // past and replaced by the database's answer.
        logger.warn({ operation: "parse" }, "cache entry unreadable, reading from the database");
      }
    }
    const value = await load();
    // Absent entities are not cached: a create right after must be visible at once.
    if (value !== null) store.set(entry, serialize(value), ttlSeconds).catch((error: unknown) => failed("set", error));
    return value;
  }

  return {
    async getOrLoad<T>(key: string, ttlSeconds: number, load: () => Promise<T | null>) {
      const kept = local.get(key);
      if (kept && kept.until > Date.now()) return kept.value as T;
      const since = epoch;
      const value = await readThrough(key, ttlSeconds, load);
      if (value === null) return null;
      keepLocal(key, deepFreeze(value), ttlSeconds, since);
      return value;
    },
    async invalidate(...keys) {
      forgetLocal(keys);
      // During a rolling upgrade, processes of a version without namespaces read the same Redis
      // under the bare keys: those are deleted too.
      const fullKeys = shared && epochs ? [...keys.map(fullKey), ...keys.map((key) => namespace + key)] : keys.map(fullKey);
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
      // Again once the shared entry is gone: a read that began after the first forget may have
      // found the old entry there.
      forgetLocal(keys);
      // Every process keeps parsed copies, and without Redis its whole cache, in its own memory.
      // The keys without namespace or generation: each process maps them onto its own entries.
      const message = shared && epochs ? [...keys, WRITER_MARK + sharedNamespace] : keys;
      await notifications?.notify(CACHE_INVALIDATION_CHANNEL, JSON.stringify(message)).catch((error: unknown) => failed("notify", error));
    },
    ping: () => store.ping(),
    async close() {
      local.clear();
      clearTimeout(retry);
      clearTimeout(recheck);
      await unlisten?.();
      await store.close();
    },
  };
}
