/**
 * Porta for the organizations benchmark (bench/organizations.ts), in its own process: started
 * through startPorta exactly as server.ts does, on PostgreSQL, with no organization of its own.
 * Prints one JSON line `{url, pid, startMs, accessToken?}` on stdout once it listens.
 *
 * With ADMIN_TOKEN=1 it first signs the bootstrap service-admin in (see admin-list-seed.ts) and
 * includes an Admin API access token. A line "mem" on stdin answers with one JSON line of
 * process.memoryUsage() after two full garbage collections (run node with --expose-gc), so that
 * the heap a set of cached providers holds can be told apart from garbage. A line
 * "build <slug> <slug> …" builds those organizations' providers one after another in-process and
 * answers `{builds: [ms, …]}` (each the registry's `get`, with no HTTP around it); with
 * BENCH_PROFILE_DIR set, those builds are CPU-profiled into <dir>/provider-build.cpuprofile.
 * "pooled <slug> …" answers `{pooled: n}`, how many of them are still in the pool.
 * "directory" waits for the directory of discovery documents to be filled (decision 062) and
 * answers `{directory: {entries, bytes, fillMs}}`, fillMs from the moment the server listened.
 *
 * Env: PORT, DATABASE_URL, DATA_DIR, ENCRYPTION_KEY, ADMIN_TOKEN, optional REDIS_URL.
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { performance } from "node:perf_hooks";
import { parseConfig } from "../app/.server/config/env";
import { createLogger } from "../app/.server/logging/logger";
import { startPorta, type RunningPorta } from "../app/.server/start";
import { seedAdminList } from "./admin-list-seed";
import { onStop, profileOnSignal } from "./flow";

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
  const porta = await startPorta(config, createLogger("silent"), {
    host: "127.0.0.1",
    ...(process.env.REDIS_PREFIX ? { redisPrefix: process.env.REDIS_PREFIX } : {}),
  });
  const startMs = performance.now() - t0;
  const listened = performance.now();
  const directoryFilled = porta.services.documents.filled().then(() => performance.now() - listened);
  onStop(() => porta.close(2_000));
  await profileOnSignal("orgs");
  const accessToken = process.env.ADMIN_TOKEN === "1" ? (await seedAdminList(porta, 0)).accessToken : undefined;

  const gc = (globalThis as { gc?: () => void }).gc;
  const answer = (value: unknown) => process.stdout.write(JSON.stringify(value) + "\n");
  createInterface({ input: process.stdin }).on("line", (line) => {
    const [command, ...slugs] = line.trim().split(/\s+/);
    if (command === "mem") {
      gc?.();
      gc?.();
      answer({ memory: process.memoryUsage() });
    } else if (command === "pooled") {
      answer({ pooled: slugs.filter((slug) => porta.services.oidc.peek(slug)).length });
    } else if (command === "directory") {
      directoryFilled.then((fillMs) => answer({ directory: { ...porta.services.documents.stats(), fillMs } }), (error: unknown) => answer({ error: String(error) }));
    } else if (command === "build") {
      buildTimed(porta, slugs).then(answer, (error: unknown) => answer({ error: String(error) }));
    }
  });
  process.stdout.write(JSON.stringify({ url: porta.url, pid: process.pid, startMs, ...(accessToken ? { accessToken } : {}) }) + "\n");
}

async function buildTimed(porta: RunningPorta, slugs: string[]): Promise<{ builds: number[] }> {
  const dir = process.env.BENCH_PROFILE_DIR;
  const session = dir ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 100 });
    await session.post("Profiler.start");
  }
  const builds: number[] = [];
  for (const slug of slugs) {
    const t0 = performance.now();
    if (!(await porta.services.oidc.get(slug))) throw new Error(`no provider for ${slug}`);
    builds.push(performance.now() - t0);
  }
  if (session && dir) {
    const { profile } = await session.post("Profiler.stop");
    writeFileSync(path.join(dir, "provider-build.cpuprofile"), JSON.stringify(profile));
    session.disconnect();
  }
  return { builds };
}

main().catch((error: unknown) => {
  process.stderr.write(`orgs-server: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
