/**
 * Porta's two kinds of key-value storage (decision 024).
 *
 * The ephemeral store holds short-lived artifacts that a user would miss if they vanished: OIDC
 * sessions, interactions, codes, replay detection, client-credentials revocations, the second-factor
 * step, console sessions. It lives in PostgreSQL (or the embedded PGlite), the one store that must
 * answer, so a restart of Porta or of Redis signs nobody out.
 *
 * A cache store only accelerates reads that PostgreSQL can always answer: Redis when REDIS_URL is
 * set, process memory otherwise. It may be slow, empty or gone.
 */
export interface CacheStore {
  readonly kind: "redis" | "memory";
  get(key: string): Promise<string | null>;
  /** Stores a value, with a time to live in seconds when given. */
  set(key: string, value: string, ttlSeconds?: number): Promise<void>;
  del(...keys: string[]): Promise<void>;
  /** Resolves when the store answers within its time bound. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface KeyValueStore {
  readonly kind: "postgres";
  get(key: string): Promise<string | null>;
  /**
   * Stores a value, with a time to live in seconds when given. With `announceOn`, the same
   * statement tells that notification channel `<expiry in epoch ms, 0 for none> <key>`: the
   * message is sent when the value commits, never without it.
   */
  set(key: string, value: string, ttlSeconds?: number, announceOn?: string): Promise<void>;
  /** The live keys matching a LIKE pattern with their expiry (epoch ms, null for none), at most `limit`. */
  liveKeysLike(pattern: string, limit: number): Promise<Array<{ key: string; expiresAt: number | null }>>;
  /** Deletes values and sets. */
  del(...keys: string[]): Promise<void>;
  /** Overwrites an existing value and keeps its time to live; does nothing when it is gone. */
  replace(key: string, value: string): Promise<void>;
  /** Reads and deletes in one step, so that two readers never both get the value. */
  take(key: string): Promise<string | null>;
  /**
   * Adds one to a counter in one step and returns the new count, so that concurrent callers each
   * get their own number. A new (or expired, or non-numeric) counter starts at 1 with the time to
   * live given; an existing one keeps its own.
   */
  increment(key: string, ttlSeconds: number): Promise<number>;
  /** Adds to a set and (re)sets the set's time to live. */
  addToSet(key: string, member: string, ttlSeconds: number): Promise<void>;
  setMembers(key: string): Promise<string[]>;
  /** Several values in one step, in the order of `keys` (null where one is gone): a page's worth of reads. */
  getMany(keys: readonly string[]): Promise<Array<string | null>>;
  /** The members of several sets in one step. */
  membersOfSets(keys: readonly string[]): Promise<Map<string, string[]>>;
  close(): Promise<void>;
}
