/**
 * Porta's ephemeral store: Redis when REDIS_URL is set, process memory otherwise. It holds
 * short-lived artifacts (OIDC sessions, interactions, codes), cache entries and notices
 * between server processes. Every call is bounded in time; callers decide what a failure means.
 */
export interface KeyValueStore {
  readonly kind: "redis" | "memory" | "postgres";
  get(key: string): Promise<string | null>;
  /** Stores a value, with a time to live in seconds when given. */
  set(key: string, value: string, ttlSeconds?: number): Promise<void>;
  del(...keys: string[]): Promise<void>;
  /** Overwrites an existing value and keeps its time to live; does nothing when it is gone. */
  replace(key: string, value: string): Promise<void>;
  /** Reads and deletes in one step, so that two readers never both get the value. */
  take(key: string): Promise<string | null>;
  /** Adds to a set and (re)sets the set's time to live. */
  addToSet(key: string, member: string, ttlSeconds: number): Promise<void>;
  setMembers(key: string): Promise<string[]>;
  publish(channel: string, message: string): Promise<void>;
  /** Calls the handler for every message on the channel, from any process; returns an unsubscribe. */
  subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>>;
  /** Resolves when the store answers within its time bound. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
