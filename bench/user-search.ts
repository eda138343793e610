/**
 * `npm run bench:users`: the Admin API's user list and search (`q=`) in one organization of
 * BENCH_USERS users (default 1,000,000), on PostgreSQL (BENCH_DATABASE_URL: a database
 * porta_users_<random> is created on that server and dropped afterwards) or, without it, on the
 * embedded PGlite (in a temporary data directory). Porta runs in this process (production build),
 * the users are written with one set-based INSERT per 100,000 (generate_series), then VACUUM
 * ANALYZE, and each query is sent one request at a time (10 warm-up, then BENCH_REQUESTS,
 * default 100), so that each latency is the request's own. Prints a Markdown table and the
 * machine's load (1-minute load average before and after); docs/benchmarks.md keeps the figures.
 *
 * The names vary like people's: the local part of the address is 12 hex digits, the given name
 * one of six, the family name "Family" and 8 hex digits. A selective search names one person's
 * address fragment or family name; a broad one (a given name, a sixth of everyone) is shown too,
 * since its count reads every match.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { parseConfig } from "../app/.server/config/env";
import { createLogger } from "../app/.server/logging/logger";
import { startPorta } from "../app/.server/start";
import { seedAdminList } from "./admin-list-seed";
import type { LatencySummary } from "./admin-list";

const envNumber = (name: string, fallback: number) => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};
const USERS = envNumber("BENCH_USERS", 1_000_000);
const REQUESTS = envNumber("BENCH_REQUESTS", 100);
const WARMUP = 10;
const BATCH = 100_000;
const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
const md5 = (text: string) => createHash("md5").update(text).digest("hex");

function summary(latencies: number[]): LatencySummary {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
  return { requests: sorted.length, p50: at(50), p95: at(95), p99: at(99), max: sorted[sorted.length - 1]! };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function main() {
  const adminUrl = process.env.BENCH_DATABASE_URL;
  const mode = adminUrl ? "PostgreSQL" : "embedded PGlite";
  let databaseUrl: string | undefined;
  let dropDatabase = async () => {};
  if (adminUrl) {
    const name = `porta_users_${randomBytes(4).toString("hex")}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    databaseUrl = url.href;
    dropDatabase = async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    };
  }
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "porta-bench-users-"));
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const config = parseConfig({ NODE_ENV: "production", PORT: String(port), BASE_URL: baseUrl, DATA_DIR: dataDir, DATABASE_URL: databaseUrl, LOG_LEVEL: "silent" });
  const porta = await startPorta(config, createLogger("silent"), { host: "127.0.0.1" });
  try {
    const seed = await seedAdminList(porta, 0);
    const db = porta.services.db;
    const t0 = performance.now();
    for (let start = 0; start < USERS; start += BATCH) {
      const end = Math.min(USERS, start + BATCH);
      await db.executeSql(
        `INSERT INTO "User" ("id", "organizationId", "email", "emailVerified", "givenName", "familyName", "updatedAt")
         SELECT gen_random_uuid(), $1::uuid, substr(md5('e' || i), 1, 12) || '@' || (ARRAY['example.com','mail.test','corp.example'])[1 + i % 3],
                true, (ARRAY['Ada','Grace','Alan','Edsger','Barbara','Donald'])[1 + i % 6], 'Family' || substr(md5(i::text), 1, 8), now()
           FROM generate_series($2::int, $3::int) AS i`,
        [seed.organizationId, start + 1, end],
      );
      log(`${mode}: ${end} users written`);
    }
    await db.executeSql('VACUUM ANALYZE "User"');
    const seedSeconds = (performance.now() - t0) / 1000;
    log(`${mode}: ${USERS} users seeded and analyzed in ${seedSeconds.toFixed(0)} s`);
    // The embedded database runs on this thread: a long INSERT holds the event loop past the
    // server's keep-alive timeout, which then closes the client's idle connections as the first
    // request would reuse them (ECONNRESET). Let the closing happen first.
    await new Promise((resolve) => setTimeout(resolve, 6_000));

    const url = `${baseUrl}/api/admin/organizations/${seed.organizationId}/users`;
    const headers = { authorization: `Bearer ${seed.accessToken}` };
    async function measure(query: string): Promise<LatencySummary & { total: number }> {
      let total = -1;
      const latencies: number[] = [];
      for (let i = 0; i < WARMUP + REQUESTS; i++) {
        const started = performance.now();
        const res = await fetch(`${url}?${query}`, { headers });
        const text = await res.text();
        const ms = performance.now() - started;
        if (res.status !== 200) throw new Error(`${query}: ${res.status} ${text.slice(0, 300)}`);
        total = (JSON.parse(text) as { total: number }).total;
        if (i >= WARMUP) latencies.push(ms);
      }
      return { ...summary(latencies), total };
    }
    const someone = Math.max(1, Math.floor(USERS * 0.7));
    const cases: Array<[string, string]> = [
      ["list, first page (offset, 100)", "page=1&pageSize=100"],
      ["list, first page (cursor, 100)", "limit=100"],
      ["search: part of one address", `q=${md5(`e${someone}`).slice(2, 10)}`],
      ["search: one family name (its own part)", `q=${md5(String(someone)).slice(0, 8)}`],
      ["search: a domain fragment (a third of everyone)", "q=corp.exa"],
      ["search: a given name (a sixth of everyone)", "q=grace"],
    ];
    const loadBefore = os.loadavg()[0]!;
    const rows: string[] = [];
    for (const [label, query] of cases) {
      const figures = await measure(query);
      log(`${mode}: ${label}: p50 ${figures.p50.toFixed(1)} ms, p95 ${figures.p95.toFixed(1)} ms (total ${figures.total})`);
      rows.push(`| ${label} | \`${query}\` | ${figures.total} | ${figures.p50.toFixed(1)} | ${figures.p95.toFixed(1)} | ${figures.p99.toFixed(1)} |`);
    }
    const loadAfter = os.loadavg()[0]!;
    process.stdout.write(
      [
        `### ${mode}, ${USERS.toLocaleString("en")} users in one organization`,
        "",
        `Seeded in ${seedSeconds.toFixed(0)} s; ${REQUESTS} requests per row, one at a time; load average (1 min) ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after, ${os.cpus().length} cores.`,
        "",
        "| query | parameters | total | p50 ms | p95 ms | p99 ms |",
        "|---|---|---:|---:|---:|---:|",
        ...rows,
        "",
      ].join("\n") + "\n",
    );
  } finally {
    await porta.close(2_000);
    await dropDatabase();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  const cause = error instanceof Error && error.cause ? ` (cause: ${String(error.cause)})` : "";
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}${cause}\n`);
  process.exitCode = 1;
});
