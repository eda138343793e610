/**
 * Porta for the organizations benchmark (bench/organizations.ts), in its own process: started
 * through startPorta exactly as server.ts does, on PostgreSQL, with no organization of its own.
 * Prints one JSON line `{url, pid, startMs, accessToken?}` on stdout once it listens.
 *
 * With ADMIN_TOKEN=1 it first signs the bootstrap service-admin in (see admin-list-seed.ts) and
 * includes an Admin API access token. A line "mem" on stdin answers with one JSON line of
 * process.memoryUsage() after two full garbage collections (run node with --expose-gc), so that
 * the heap a set of cached providers holds can be told apart from garbage.
 *
 * Env: PORT, DATABASE_URL, DATA_DIR, ENCRYPTION_KEY, ADMIN_TOKEN, optional REDIS_URL.
 */
import { createInterface } from "node:readline";
import { performance } from "node:perf_hooks";
import { parseConfig } from "../app/.server/config/env";
import { createLogger } from "../app/.server/logging/logger";
import { startPorta } from "../app/.server/start";
import { seedAdminList } from "./admin-list-seed";
import { onStop } from "./flow";

async function main() {
  const t0 = performance.now();
  const port = Number(process.env.PORT);
  if (!port) throw new Error("PORT is required");
  const config = parseConfig({
    NODE_ENV: "production",
    PORT: String(port),
    BASE_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: process.env.DATA_DIR,
    DATABASE_URL: process.env.DATABASE_URL,
    REDIS_URL: process.env.REDIS_URL,
    ENCRYPTION_KEY: process.env.ENCRYPTION_KEY,
    ADMIN_BOOTSTRAP_EMAIL: "admin@bench.example",
    ADMIN_BOOTSTRAP_PASSWORD: "bench-Admin-password-1",
    LOG_LEVEL: "silent",
  });
  const porta = await startPorta(config, createLogger("silent"), { host: "127.0.0.1" });
  const startMs = performance.now() - t0;
  onStop(() => porta.close(2_000));
  const accessToken = process.env.ADMIN_TOKEN === "1" ? (await seedAdminList(porta, 0)).accessToken : undefined;

  const gc = (globalThis as { gc?: () => void }).gc;
  createInterface({ input: process.stdin }).on("line", (line) => {
    if (line.trim() !== "mem") return;
    gc?.();
    gc?.();
    process.stdout.write(JSON.stringify({ memory: process.memoryUsage() }) + "\n");
  });
  process.stdout.write(JSON.stringify({ url: porta.url, pid: process.pid, startMs, ...(accessToken ? { accessToken } : {}) }) + "\n");
}

main().catch((error: unknown) => {
  process.stderr.write(`orgs-server: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
