import type { CacheStore } from "./store";

interface Entry<V> {
  value: V;
  expiresAt: number;
}

const SWEEP_INTERVAL_MS = 30_000;

/** The cache store when REDIS_URL is unset: this process only, entries expire by time. */
export function createMemoryStore(now: () => number = Date.now): CacheStore {
  const values = new Map<string, Entry<string>>();

  const expiry = (ttlSeconds?: number) => (ttlSeconds && ttlSeconds > 0 ? now() + ttlSeconds * 1000 : Infinity);
  function live(key: string): Entry<string> | undefined {
    const entry = values.get(key);
    if (entry && entry.expiresAt <= now()) {
      values.delete(key);
      return undefined;
    }
    return entry;
  }

  const sweeper = setInterval(() => {
    const t = now();
    for (const [k, e] of values) if (e.expiresAt <= t) values.delete(k);
  }, SWEEP_INTERVAL_MS);
  sweeper.unref();

  return {
    kind: "memory",
    async get(key) {
      return live(key)?.value ?? null;
    },
    async set(key, value, ttlSeconds) {
      values.set(key, { value, expiresAt: expiry(ttlSeconds) });
    },
    async del(...keys) {
      for (const key of keys) values.delete(key);
    },
    async ping() {},
    async close() {
      clearInterval(sweeper);
      values.clear();
    },
  };
}
