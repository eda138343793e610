import path from "node:path";
import type { Logger } from "pino";
import { createMemoryStore } from "./cache/memory-store";
import { createReadThroughCache, type ReadThroughCache } from "./cache/read-through";
import { createRedisStore } from "./cache/redis-store";
import type { KeyValueStore } from "./cache/store";
import { ensureDataDir, loadOrCreateEncryptionKey } from "./config/data-dir";
import type { Config } from "./config/env";
import { createEncrypter, type Encrypter } from "./crypto/encryption";
import { openDatabase, type Database } from "./db/client";
import { applyMigrations } from "./db/migrate";

/**
 * Everything a request handler may need, built once per process and handed to Remix through the
 * load context (route modules never build their own connections).
 */
export interface Services {
  config: Config;
  logger: Logger;
  db: Database;
  store: KeyValueStore;
  cache: ReadThroughCache;
  encrypter: Encrypter;
  close(): Promise<void>;
}

export interface CreateServicesOptions {
  /** Overrides the embedded database location (tests use "memory://"). */
  pgliteDir?: string;
}

export async function createServices(config: Config, logger: Logger, options: CreateServicesOptions = {}): Promise<Services> {
  const dataDir = ensureDataDir(config.dataDir);
  const encryptionKey = config.encryptionKey ?? loadOrCreateEncryptionKey(dataDir).key;

  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    pgliteDir: options.pgliteDir ?? path.join(dataDir, "pglite"),
  });
  try {
    const applied = await applyMigrations(db);
    if (applied.length > 0) logger.info({ migrations: applied }, "applied database migrations");
  } catch (error) {
    await db.close();
    throw error;
  }

  const store = config.redisUrl ? await createRedisStore(config.redisUrl, logger) : createMemoryStore();
  const cache = createReadThroughCache(store, logger);

  return {
    config,
    logger,
    db,
    store,
    cache,
    encrypter: createEncrypter(encryptionKey),
    async close() {
      await store.close();
      await db.close();
    },
  };
}
