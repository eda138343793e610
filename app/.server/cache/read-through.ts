import type { Logger } from "pino";
import type { KeyValueStore } from "./store";

/**
 * Read-through cache for organization, client and user lookups. The cache is an optimisation
 * only: any store error is logged and the value is loaded from PostgreSQL, so a slow or absent
 * Redis never fails a request. Writers call `invalidate` after they commit.
 */
export interface ReadThroughCache {
  getOrLoad<T>(key: string, ttlSeconds: number, load: () => Promise<T | null>): Promise<T | null>;
  invalidate(...keys: string[]): Promise<void>;
}

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

export function createReadThroughCache(store: KeyValueStore, logger: Logger, namespace = "cache:"): ReadThroughCache {
  let lastWarning = 0;
  const warn = (operation: string, error: unknown) => {
    if (Date.now() - lastWarning < 10_000) return;
    lastWarning = Date.now();
    logger.warn({ operation, err: { message: error instanceof Error ? error.message : String(error) } }, "cache unavailable, reading from the database");
  };

  return {
    async getOrLoad<T>(key: string, ttlSeconds: number, load: () => Promise<T | null>) {
      const fullKey = namespace + key;
      try {
        const hit = await store.get(fullKey);
        if (hit !== null) return deserialize<T>(hit);
      } catch (error) {
        warn("get", error);
        return load();
      }
      const value = await load();
      // Absent entities are not cached: a create right after must be visible at once.
      if (value !== null) {
        store.set(fullKey, serialize(value), ttlSeconds).catch((error: unknown) => warn("set", error));
      }
      return value;
    },
    async invalidate(...keys) {
      try {
        await store.del(...keys.map((k) => namespace + k));
      } catch (error) {
        // The entry may outlive the write by its TTL; keep TTLs short for that reason.
        warn("invalidate", error);
      }
    },
  };
}
