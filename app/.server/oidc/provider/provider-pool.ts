/**
 * The pool of built providers, bounded by memory rather than by a count, and resistant to scans
 * (decision 030). A segmented LRU: a provider enters on probation; asked for again while there,
 * it moves to the protected segment, which may hold up to 80 % of the budget (probation uses the
 * rest, and all of it while few entries are protected). When traffic sweeps over
 * more organizations than fit (a crawler, a round-robin load test, a long tail of organizations
 * that sign in once an hour), only probation churns: the organizations that are asked for again
 * and again stay built. Protected entries pushed out by newer hot ones go back on probation
 * rather than out, so a hot organization gets a second chance.
 *
 * Every entry also has a maximum age from when it was built (not from when it last moved), the
 * safety net for a missed invalidation notice.
 */
import { LRUCache } from "lru-cache";

export interface ProviderPoolOptions {
  /** The heap the pool may hold. */
  maxBytes: number;
  /** The heap one entry holds (measured: docs/benchmarks.md, "Organizations at scale"). */
  bytesPerEntry: number;
  /** The longest an entry stays, from when it was set. */
  maxAgeMs: number;
  /** Share of the capacity kept for entries asked for more than once (default 0.8). */
  protectedShare?: number;
  now?: () => number;
}

interface Slot<V> {
  value: V;
  expiresAt: number;
}

export interface ProviderPool<V> {
  /** The entry (a hit: it counts as a use), or undefined when absent or too old. */
  get(key: string): V | undefined;
  set(key: string, value: V): void;
  delete(key: string): void;
  clear(): void;
  /** Every entry, in no particular order. */
  entries(): Array<[string, V]>;
  readonly size: number;
  /** How many entries were pushed out by newer ones since the pool was made. */
  readonly evictions: number;
  /** How many entries fit in the budget. */
  readonly capacity: number;
}

/** How many entries a budget holds: at least two (one per segment). */
export function poolCapacity(maxBytes: number, bytesPerEntry: number): number {
  return Math.max(2, Math.floor(maxBytes / bytesPerEntry));
}

export function createProviderPool<V>(options: ProviderPoolOptions): ProviderPool<V> {
  const now = options.now ?? Date.now;
  const capacity = poolCapacity(options.maxBytes, options.bytesPerEntry);
  const protectedMax = Math.min(capacity - 1, Math.max(1, Math.floor(capacity * (options.protectedShare ?? 0.8))));
  // Probation may use whatever the protected segment does not: the pool fills to its capacity
  // even before anything is asked for twice.
  const probation = new LRUCache<string, Slot<V>>({ max: capacity });
  const hot = new LRUCache<string, Slot<V>>({
    max: protectedMax,
    // Pushed out of the protected segment by a newer hot entry: back on probation, not gone.
    dispose: (slot, key, reason) => {
      if (reason === "evict") probation.set(key, slot);
    },
  });

  /** Over capacity, the least recently used entry on probation goes (protected holds at most protectedMax < capacity). */
  let evictions = 0;
  function trim() {
    while (hot.size + probation.size > capacity && probation.size > 0) {
      probation.pop();
      evictions += 1;
    }
  }

  function fresh(slot: Slot<V> | undefined, key: string): Slot<V> | undefined {
    if (slot && slot.expiresAt <= now()) {
      hot.delete(key);
      probation.delete(key);
      return undefined;
    }
    return slot;
  }

  return {
    get(key) {
      const inHot = fresh(hot.get(key), key);
      if (inHot) return inHot.value;
      const waiting = fresh(probation.get(key), key);
      if (!waiting) return undefined;
      probation.delete(key);
      hot.set(key, waiting);
      trim();
      return waiting.value;
    },
    set(key, value) {
      hot.delete(key);
      probation.set(key, { value, expiresAt: now() + options.maxAgeMs });
      trim();
    },
    delete(key) {
      hot.delete(key);
      probation.delete(key);
    },
    clear() {
      hot.clear();
      probation.clear();
    },
    entries() {
      return [...hot.entries(), ...probation.entries()].map(([key, slot]) => [key, slot.value]);
    },
    get size() {
      return hot.size + probation.size;
    },
    get evictions() {
      return evictions;
    },
    capacity,
  };
}
