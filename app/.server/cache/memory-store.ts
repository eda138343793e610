import { EventEmitter } from "node:events";
import type { KeyValueStore } from "./store";

interface Entry<V> {
  value: V;
  expiresAt: number;
}

const SWEEP_INTERVAL_MS = 30_000;

/** The embedded default when REDIS_URL is unset: one process, entries expire by time. */
export function createMemoryStore(now: () => number = Date.now): KeyValueStore {
  const values = new Map<string, Entry<string>>();
  const sets = new Map<string, Entry<Set<string>>>();
  const bus = new EventEmitter();
  bus.setMaxListeners(0);

  const expiry = (ttlSeconds?: number) => (ttlSeconds && ttlSeconds > 0 ? now() + ttlSeconds * 1000 : Infinity);
  function live<V>(map: Map<string, Entry<V>>, key: string): Entry<V> | undefined {
    const entry = map.get(key);
    if (entry && entry.expiresAt <= now()) {
      map.delete(key);
      return undefined;
    }
    return entry;
  }

  const sweeper = setInterval(() => {
    const t = now();
    for (const [k, e] of values) if (e.expiresAt <= t) values.delete(k);
    for (const [k, e] of sets) if (e.expiresAt <= t) sets.delete(k);
  }, SWEEP_INTERVAL_MS);
  sweeper.unref();

  return {
    kind: "memory",
    async get(key) {
      return live(values, key)?.value ?? null;
    },
    async set(key, value, ttlSeconds) {
      values.set(key, { value, expiresAt: expiry(ttlSeconds) });
    },
    async del(...keys) {
      for (const key of keys) {
        values.delete(key);
        sets.delete(key);
      }
    },
    async replace(key, value) {
      const entry = live(values, key);
      if (entry) entry.value = value;
    },
    async take(key) {
      const entry = live(values, key);
      values.delete(key);
      return entry?.value ?? null;
    },
    async addToSet(key, member, ttlSeconds) {
      const entry = live(sets, key) ?? { value: new Set<string>(), expiresAt: 0 };
      entry.value.add(member);
      entry.expiresAt = expiry(ttlSeconds);
      sets.set(key, entry);
    },
    async setMembers(key) {
      return [...(live(sets, key)?.value ?? [])];
    },
    async publish(channel, message) {
      bus.emit(channel, message);
    },
    async subscribe(channel, handler) {
      bus.on(channel, handler);
      return async () => {
        bus.off(channel, handler);
      };
    },
    async ping() {},
    async close() {
      clearInterval(sweeper);
      values.clear();
      sets.clear();
      bus.removeAllListeners();
    },
  };
}
