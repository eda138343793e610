import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseConfig } from "~/.server/config/env";
import type { FaultHooks } from "~/.server/context";
import type { DnsResolver } from "~/.server/domains/dns";
import type { QueueSettings } from "~/.server/jobs/queue";
import { createLogger } from "~/.server/logging/logger";
import { startPorta, type RunningPorta } from "~/.server/start";
import { createTestDatabase, type TestDatabase } from "./database";
import { assertNoUnexpectedErrors, captureLogs, type LogCapture } from "./logs";
import { freePort } from "./process";

export const TEST_ADMIN = { email: "admin@porta.test", password: "correct horse battery staple 42" };

export { freePort } from "./process";

export { captureLogs } from "./logs";

export interface TestPorta extends RunningPorta {
  baseUrl: string;
  logs: LogCapture;
  /** Stops the server, drops its database and removes its DATA_DIR. */
  stop(): Promise<void>;
}

export interface TestPortaOptions {
  env?: Record<string, string | undefined>;
  /** Reuse a DATA_DIR (restart tests); by default a fresh temp folder. */
  dataDir?: string;
  /** Keep the embedded database on disk in DATA_DIR instead of memory. */
  persistentPglite?: boolean;
  /** Reuse a database URL instead of creating one. */
  databaseUrl?: string;
  /** Reuse a Redis key prefix (restart tests); by default one of this server's own. */
  redisPrefix?: string;
  /** Job queue tuning (short retry delays, a small bound, a short expiry). */
  queue?: Partial<QueueSettings>;
  /** Faults to inject (context.ts): e.g. a throw between a write and its audit entry. */
  faults?: FaultHooks;
  /** How long a write waits for its transaction to start (default 10 s). */
  transactionMaxWaitMs?: number;
  /** The DNS TXT look-ups of domain verification (a fake in tests of verified domains). */
  dnsResolver?: DnsResolver;
  /** How often the audit stream looks for sinks with entries due. */
  auditStreamSweepMs?: number;
}

/** A real Porta over HTTP on a free loopback port, with its own database. */
export async function startTestPorta(options: TestPortaOptions = {}): Promise<TestPorta> {
  const database: TestDatabase = options.databaseUrl ? { url: options.databaseUrl, drop: async () => {} } : await createTestDatabase({ migrated: true });
  const dataDir = options.dataDir ?? mkdtempSync(path.join(tmpdir(), "porta-test-"));
  const port = await freePort();
  const config = parseConfig({
    NODE_ENV: "test",
    PORT: String(port),
    BASE_URL: `http://localhost:${port}`,
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    REDIS_URL: process.env.REDIS_URL,
    ADMIN_BOOTSTRAP_EMAIL: TEST_ADMIN.email,
    ADMIN_BOOTSTRAP_PASSWORD: TEST_ADMIN.password,
    LOG_LEVEL: "info",
    ...options.env,
  });
  const logs = captureLogs();
  const logger = createLogger(config.logLevel, logs.stream);
  let running: RunningPorta;
  try {
    running = await startPorta(config, logger, {
      host: "127.0.0.1",
      // Test files share one Redis but not one database: each server keeps its own keys.
      redisPrefix: options.redisPrefix ?? `porta-test-${randomBytes(6).toString("hex")}:`,
      ...(options.persistentPglite ? {} : { pgliteDir: "memory://", ...(database.pgliteSeed ? { pgliteSeed: database.pgliteSeed } : {}) }),
      ...(options.queue ? { queue: options.queue } : {}),
      ...(options.faults ? { faults: options.faults } : {}),
      ...(options.transactionMaxWaitMs !== undefined ? { transactionMaxWaitMs: options.transactionMaxWaitMs } : {}),
      ...(options.dnsResolver ? { dnsResolver: options.dnsResolver } : {}),
      ...(options.auditStreamSweepMs !== undefined ? { auditStreamSweepMs: options.auditStreamSweepMs } : {}),
    });
  } catch (error) {
    logs.release();
    await database.drop();
    throw error;
  }
  // The directory of discovery documents fills in the background after start: a test that counts
  // a request's statements must not count the fill's.
  await running.services.documents.filled();
  return {
    ...running,
    baseUrl: config.baseUrl,
    logs,
    async stop() {
      try {
        await running.close(2_000);
        await database.drop();
        if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
        // What the server logged outside any test (its start, its shutdown) is checked here.
        assertNoUnexpectedErrors("all", logs);
      } finally {
        logs.release();
      }
    },
  };
}
