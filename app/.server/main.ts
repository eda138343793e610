/**
 * Porta's process: reads the configuration, opens the stores, applies migrations, bootstraps
 * the super-admin organization, serves Express + Remix, and shuts down gracefully. A problem at
 * start-up ends the process with one line that says what to fix.
 *
 * Two steps, so that `npm start` (scripts/start.mjs, running the compiled form in dist/server/)
 * can build the pages between them: `preflight` checks what an operator gets wrong (the
 * configuration, the port, the data-dir lock) with only the config modules loaded; `serve`
 * loads the rest and starts. server.ts runs both from source (`npm run dev`, the tests).
 */
import type { Logger } from "pino";
import { embeddedDatabaseDir, ensureDataDir } from "./config/data-dir";
import { lockDataDir, type DataDirLock } from "./config/data-dir-lock";
import { ConfigError, parseConfig, type Config } from "./config/env";
import { assertPortFree } from "./config/port";
import { startBanner } from "./bootstrap/start-banner";
import { readPackageVersion } from "./root";

export function fail(message: string): never {
  process.stderr.write(`porta: ${message}\n`);
  process.exit(1);
}

export interface Preflight {
  config: Config;
  dataDirLock?: DataDirLock;
}

export async function preflight(env: NodeJS.ProcessEnv = process.env): Promise<Preflight> {
  // Files Porta creates (embedded database, keys) are readable by its own user only.
  process.umask(0o077);
  try {
    const config = parseConfig(env);
    // Checked before the server's modules load, so that these mistakes are reported at once.
    const dataDir = ensureDataDir(config.dataDir);
    await assertPortFree(config.port);
    if (config.metrics.port) await assertPortFree(config.metrics.port, "0.0.0.0", "METRICS_PORT");
    return config.databaseUrl ? { config } : { config, dataDirLock: lockDataDir(dataDir) };
  } catch (error) {
    if (error instanceof ConfigError) fail(`configuration error: ${error.message}`);
    throw error;
  }
}

/**
 * oidc-provider prints notices to stderr: "Unsupported runtime" when it is imported on a Node it
 * was not released for, and once that it found a parsed form (Porta parses protocol forms
 * itself, oidc/edge/mount.ts). On stderr they would break the one-line start-up
 * contract and the JSON log, so they go to the log instead. The server modules are imported
 * only after this is in place.
 */
/* eslint-disable no-console -- this wraps console.warn itself */
function logLibraryRuntimeNotices(logger: Logger) {
  const warn = console.warn.bind(console);
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === "string" && args[0].startsWith("oidc-provider WARNING: ")) {
      logger.debug({ notice: args[0] }, "library notice");
      return;
    }
    warn(...args);
  };
}
/* eslint-enable no-console */

export async function serve({ config, dataDirLock }: Preflight): Promise<void> {
  // Loaded here, not above: a configuration mistake is reported without loading the logger.
  const { createLogger } = await import("./logging/logger");
  const logger = createLogger(config.logLevel);
  logLibraryRuntimeNotices(logger);

  // An unreachable database is reported before the rest of the server loads (seconds on a busy machine).
  const { DatabaseUnavailableError, assertPostgresReachable } = await import("./db/client");
  if (config.databaseUrl) {
    try {
      await assertPostgresReachable(config.databaseUrl);
    } catch (error) {
      if (error instanceof DatabaseUnavailableError) fail(`database error: ${error.detail}`);
      throw error;
    }
  }
  const [{ startPorta }, { MigrationError }] = await Promise.all([import("./start"), import("./db/migrate")]);

  let porta;
  try {
    porta = await startPorta(config, logger, dataDirLock ? { dataDirLock } : {});
  } catch (error) {
    if (error instanceof ConfigError) fail(`configuration error: ${error.message}`);
    if (error instanceof DatabaseUnavailableError) fail(`database error: ${error.detail}`);
    if (error instanceof MigrationError) fail(error.message);
    if (error instanceof Error) fail(`cannot start: ${error.message}`);
    throw error;
  }

  const created = porta.bootstrap.createdAdmin;
  if (created) {
    // Printed once, to the terminal only: never through the logger, which may ship lines elsewhere.
    const lines = [
      "",
      "  Porta created the first administrator:",
      `    email:    ${created.email}`,
      created.generatedPassword ? `    password: ${created.generatedPassword}   (shown only this once)` : "    password: the one in ADMIN_BOOTSTRAP_PASSWORD",
      "",
    ];
    process.stdout.write(lines.join("\n") + "\n");
  }
  logger.info(
    { url: config.baseUrl, release: readPackageVersion(), node: process.version, database: porta.services.db.kind, cache: config.redisUrl ? "redis" : "memory" },
    "Porta is listening",
  );
  process.stdout.write(startBanner(config.baseUrl, created ? (created.generatedPassword ? "printed" : "environment") : "earlier"));

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, notReadySeconds: config.shutdownDelayMs / 1000 }, "shutting down: draining requests");
    porta.close(10_000, config.shutdownDelayMs).then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

/**
 * `npm run migrate`: applies the migrations this build ships and exits, for platforms that
 * migrate before a rollout (a Kubernetes Job, a release phase). `npm start` still applies them at
 * start; nodes of a newer version answer not-ready until they are applied (health/readiness.ts).
 */
export async function migrate(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  process.umask(0o077);
  let config: Config;
  let dataDir: string;
  try {
    config = parseConfig(env);
    dataDir = ensureDataDir(config.dataDir);
  } catch (error) {
    if (error instanceof ConfigError) fail(`configuration error: ${error.message}`);
    throw error;
  }
  const lock = config.databaseUrl ? undefined : lockDataDir(dataDir);
  const [{ DatabaseUnavailableError, assertPostgresReachable, openDatabase }, { applyMigrations, MigrationError }] = await Promise.all([import("./db/client"), import("./db/migrate")]);
  try {
    if (config.databaseUrl) await assertPostgresReachable(config.databaseUrl);
    const db = await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir: embeddedDatabaseDir(dataDir) });
    try {
      const applied = await applyMigrations(db);
      process.stdout.write(applied.length === 0 ? "  The database is up to date.\n" : `  Applied ${applied.length} migration${applied.length === 1 ? "" : "s"}:\n${applied.map((name) => `    ${name}\n`).join("")}`);
    } finally {
      await db.close();
    }
  } catch (error) {
    if (error instanceof DatabaseUnavailableError) fail(`database error: ${error.detail}`);
    if (error instanceof MigrationError) fail(error.message);
    throw error;
  } finally {
    lock?.release();
  }
}
