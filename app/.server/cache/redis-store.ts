import { Redis, type RedisOptions } from "ioredis";
import type { Logger } from "pino";
import type { KeyValueStore } from "./store";

/**
 * Options that make every command fail fast instead of queueing while Redis is away
 * (STACK-NOTES §9): no offline queue, one retry, and a hard per-command time limit that also
 * covers a Redis that accepts connections but never answers.
 */
export const FAIL_FAST_OPTIONS: RedisOptions = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  commandTimeout: 500,
  connectTimeout: 2_000,
  retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  lazyConnect: true,
};

/** SET with the key's remaining TTL, atomically; 0 when the key is gone. */
const REPLACE_KEEPING_TTL = `
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -2 then return 0 end
if ttl > 0 then redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl) else redis.call('SET', KEYS[1], ARGV[1]) end
return 1`;

/** How long subscribe() waits for Redis to confirm a subscription before it returns anyway. */
const SUBSCRIBE_WAIT_MS = 500;

/** Waits for a promise, but no longer than `ms`. */
async function bounded(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

export interface RedisStore extends KeyValueStore {
  /** The command connection, for libraries that take an ioredis client (rate limits). */
  readonly client: Redis;
}

export async function createRedisStore(url: string, logger: Logger, prefix = "porta:"): Promise<RedisStore> {
  const client = new Redis(url, { ...FAIL_FAST_OPTIONS, keyPrefix: prefix });
  let subscriber: Redis | undefined;
  const handlers = new Map<string, Set<(message: string) => void>>();
  let lastWarning = 0;
  const warn = (error: Error) => {
    // A Redis outage produces an error per reconnect attempt; one line every 10 s is enough.
    if (Date.now() - lastWarning > 10_000) {
      lastWarning = Date.now();
      logger.warn({ err: { message: error.message } }, "redis unavailable");
    }
  };
  client.on("error", warn);
  try {
    await client.connect();
  } catch (error) {
    // Start anyway: ioredis keeps reconnecting, and until then every cache read goes to PostgreSQL.
    warn(error as Error);
  }

  async function ensureSubscriber(): Promise<Redis> {
    if (subscriber) return subscriber;
    // Pub/sub needs its own connection; it keeps an offline queue so that subscriptions made
    // during an outage are sent once Redis is back.
    subscriber = new Redis(url, { ...FAIL_FAST_OPTIONS, enableOfflineQueue: true, maxRetriesPerRequest: null, commandTimeout: undefined });
    subscriber.on("error", warn);
    subscriber.on("message", (channel: string, message: string) => {
      for (const handler of handlers.get(channel) ?? []) handler(message);
    });
    subscriber.connect().catch(warn);
    return subscriber;
  }

  return {
    kind: "redis",
    client,
    async get(key) {
      return client.get(key);
    },
    async set(key, value, ttlSeconds) {
      if (ttlSeconds && ttlSeconds > 0) await client.set(key, value, "EX", Math.ceil(ttlSeconds));
      else await client.set(key, value);
    },
    async del(...keys) {
      if (keys.length > 0) await client.del(...keys);
    },
    async replace(key, value) {
      await client.eval(REPLACE_KEEPING_TTL, 1, key, value);
    },
    async take(key) {
      return client.getdel(key);
    },
    async addToSet(key, member, ttlSeconds) {
      await client.multi().sadd(key, member).expire(key, Math.ceil(ttlSeconds)).exec();
    },
    async setMembers(key) {
      return client.smembers(key);
    },
    async publish(channel, message) {
      await client.publish(prefix + channel, message);
    },
    async subscribe(channel, handler) {
      const sub = await ensureSubscriber();
      const full = prefix + channel;
      const set = handlers.get(full) ?? new Set();
      set.add(handler);
      if (!handlers.has(full)) {
        handlers.set(full, set);
        // Waited for only briefly: the subscriber queues commands while Redis is away and would
        // hold the caller (a server starting, a request) until Redis came back. ioredis sends
        // it on (re)connect and re-subscribes by itself after an outage.
        await bounded(sub.subscribe(full).catch(warn), SUBSCRIBE_WAIT_MS);
      }
      return async () => {
        set.delete(handler);
        if (set.size === 0) {
          handlers.delete(full);
          sub.unsubscribe(full).catch(() => undefined);
        }
      };
    },
    async ping() {
      await client.ping();
    },
    async close() {
      client.disconnect();
      subscriber?.disconnect();
    },
  };
}
