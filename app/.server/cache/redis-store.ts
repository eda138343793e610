import { Redis, type RedisOptions } from "ioredis";
import type { Logger } from "pino";
import type { CacheStore } from "./store";

/**
 * Options that make every command fail fast instead of queueing while Redis is away
 * (decision 006; by default ioredis keeps a command to an unreachable Redis pending for seconds): no offline queue, one retry, and a hard per-command time limit that also
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

export async function createRedisStore(url: string, logger: Logger, prefix = "porta:"): Promise<CacheStore> {
  const client = new Redis(url, { ...FAIL_FAST_OPTIONS, keyPrefix: prefix });
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

  return {
    kind: "redis",
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
    async ping() {
      await client.ping();
    },
    async close() {
      client.disconnect();
    },
  };
}
