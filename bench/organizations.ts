/**
 * `npm run bench:orgs`: Porta with N organizations on PostgreSQL, written to its own
 * section of docs/benchmarks.md. Needs BENCH_DATABASE_URL (a database porta_orgs_<random> is
 * created on that server for each N and dropped afterwards); BENCH_REDIS_URL is optional.
 *
 * For each N it starts Porta once (migrations, bootstrap, an Admin API token), seeds N
 * organizations, each with one confidential client_credentials client, its secret and its signing
 * key, with set-based SQL, then restarts Porta and measures:
 * - start to healthy: spawn until /health answers 200 (wall and CPU seconds of the process);
 * - cold build: the first discovery request of an organization no request has touched yet, minus
 *   a second (warm) one, sequentially for BENCH_ORGS_COLD organizations;
 * - provider build in-process: the registry's `get` for min(N, BENCH_ORGS_FILL) more untouched
 *   organizations, one after another (BENCH_PROFILE_DIR: CPU profile of those builds, and of the
 *   round-robin runs: <dir>/orgs-discovery-round-robin-<N>.cpuprofile, orgs-cc-round-robin-<N>.cpuprofile);
 * - heap per cached provider: heapUsed after full GCs before and after those builds, divided
 *   by their number;
 * - discovery and client_credentials p50/p95 and rate for one organization, then round-robin
 *   over all N (one shared counter across connections, so consecutive requests hit different
 *   organizations: a pool smaller than N misses on every request);
 * - Admin API list (first page) and search (`q=`) of organizations, one request at a time;
 * - RSS idle after start and after the runs.
 *
 * Knobs (env): BENCH_ORGS (1,1000,10000,100000), BENCH_CONNECTIONS (20), BENCH_DURATION (5 s per
 * run, after a 1 s warm-up), BENCH_ORGS_COLD (30), BENCH_ORGS_FILL (400), BENCH_PORTA_ENV (extra
 * KEY=VALUE pairs for Porta's process, space-separated; e.g. a pool budget).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { exportJWK, generateKeyPair } from "jose";
import pg from "pg";
import { createEncrypter } from "../app/.server/crypto/encryption";
import { underProfile } from "./flow";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DOC = path.join(ROOT, "docs", "benchmarks.md");
const envNumber = (name: string, fallback: number) => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};
const COUNTS = (process.env.BENCH_ORGS ?? "1,1000,10000,100000").split(",").map((s) => Number(s.trim())).filter((n) => n > 0);
const CONNECTIONS = envNumber("BENCH_CONNECTIONS", 20);
const DURATION = envNumber("BENCH_DURATION", 5);
const COLD = envNumber("BENCH_ORGS_COLD", 30);
const FILL = envNumber("BENCH_ORGS_FILL", 400);
const ADMIN_REQUESTS = 100;
/** How long the process rests after the runs (a full GC halfway) before its settled RSS is read. */
const SETTLE_MS = 10_000;
const SEED_BATCH = 10_000;
const FORM = "application/x-www-form-urlencoded";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
const slugOf = (i: number) => `org-${String(i).padStart(6, "0")}`;

/* ------------------------------------------------------------------ processes */

const CLOCK_TICKS = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100;
function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}
function rssMbOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN) / 1024;
}
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface Porta {
  child: ChildProcess;
  url: string;
  pid: number;
  accessToken?: string;
  /** heapUsed and rss (bytes) after full GCs. */
  memory(): Promise<{ heapUsed: number; rss: number }>;
  /** How many of these organizations' providers are in the pool. */
  pooled(slugs: string[]): Promise<number>;
  /** Milliseconds of each provider build, in-process, one after another. */
  build(slugs: string[]): Promise<number[]>;
  /** Waits for the directory of discovery documents to be filled. */
  directory(): Promise<DirectoryStats>;
  stop(): Promise<void>;
}

interface DirectoryStats {
  entries: number;
  bytes: number;
  /** From the moment the server listened until the fill finished. */
  fillMs: number;
}

/**
 * What the process keeps once the garbage of the runs is collected: RSS right after a run holds
 * what the run allocated and no GC has collected yet, which grows with the run's request rate.
 */
async function settledMemory(porta: Porta): Promise<{ rssSettledMb: number; heapSettledMb: number }> {
  await sleep(SETTLE_MS / 2);
  const { heapUsed } = await porta.memory();
  await sleep(SETTLE_MS / 2);
  return { rssSettledMb: rssMbOf(porta.pid), heapSettledMb: heapUsed / 1024 / 1024 };
}

/** Starts bench/orgs-server.ts; resolves on its JSON line. */
function startPorta(env: Record<string, string>): Promise<Porta> {
  const extra = Object.fromEntries((process.env.BENCH_PORTA_ENV ?? "").split(" ").filter(Boolean).map((pair) => pair.split("=", 2) as [string, string]));
  const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", "bench/orgs-server.ts"], {
    cwd: ROOT,
    // glibc's arenas as `npm start` sets them (scripts/start.mjs's callers, decision 056): memory figures as in production.
    env: { MALLOC_ARENA_MAX: "2", ...process.env, ...extra, ...env, NODE_ENV: "production" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-8_000)));
  const waiters: Array<(line: Record<string, unknown>) => void> = [];
  let buffered = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    let newline;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (!line.startsWith("{")) continue;
      try {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        waiters.shift()?.(parsed);
      } catch {
        // not our line
      }
    }
  });
  const next = () => new Promise<Record<string, unknown>>((resolve) => waiters.push(resolve));
  return new Promise((resolve, reject) => {
    child.once("exit", (code, signal) => reject(new Error(`Porta exited (${code ?? signal}) before it was ready\n${stderr}`)));
    next().then((info) =>
      resolve({
        child,
        url: String(info.url),
        pid: Number(info.pid),
        ...(typeof info.accessToken === "string" ? { accessToken: info.accessToken } : {}),
        async memory() {
          const answer = next();
          child.stdin!.write("mem\n");
          const { memory } = (await answer) as { memory: { heapUsed: number; rss: number } };
          return memory;
        },
        async directory() {
          const answer = next();
          child.stdin!.write("directory\n");
          const reply = (await answer) as { directory?: DirectoryStats; error?: string };
          if (!reply.directory) throw new Error(`directory: ${reply.error}`);
          return reply.directory;
        },
        async pooled(slugs) {
          const answer = next();
          child.stdin!.write(`pooled ${slugs.join(" ")}\n`);
          return Number(((await answer) as { pooled: number }).pooled);
        },
        async build(slugs) {
          const answer = next();
          child.stdin!.write(`build ${slugs.join(" ")}\n`);
          const reply = (await answer) as { builds?: number[]; error?: string };
          if (!reply.builds) throw new Error(`build: ${reply.error}`);
          return reply.builds;
        },
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            child.once("exit", () => done());
            child.kill("SIGTERM");
          }),
      }),
    );
  });
}

/* ------------------------------------------------------------------ seeding */

/** N organizations, each with a client_credentials client, its secret (`${prefix}-${slug}`) and an active signing key. */
async function seed(pool: pg.Pool, n: number, prefix: string, encryptionKey: Buffer): Promise<number> {
  const t0 = performance.now();
  await pool.query(
    `INSERT INTO "Organization" (id, name, slug, "defaultLoginMethods")
     SELECT gen_random_uuid(), 'Organization ' || i, 'org-' || lpad(i::text, 6, '0'), ARRAY['password']
       FROM generate_series(1, $1::int) AS i`,
    [n],
  );
  await pool.query(
    `INSERT INTO "Client" (id, "organizationId", name, "tokenEndpointAuthMethod", "grantTypes", scope)
     SELECT 'c-' || o.slug, o.id, 'Client of ' || o.slug, 'client_secret_basic', ARRAY['client_credentials'], 'openid'
       FROM "Organization" o WHERE o.slug LIKE 'org-%'`,
  );
  await pool.query(
    `INSERT INTO "ClientSecret" (id, "clientId", "secretHash", hint)
     SELECT gen_random_uuid(), c.id, encode(sha256(convert_to($1 || '-' || substr(c.id, 3), 'UTF8')), 'hex'), right(c.id, 4)
       FROM "Client" c WHERE c.id LIKE 'c-org-%'`,
    [prefix],
  );
  // One key pair for all (generating 100,000 takes minutes); each row its own kid and ciphertext.
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const privateJson = JSON.stringify(await exportJWK(privateKey));
  const publicJwk = await exportJWK(publicKey);
  const encrypter = createEncrypter(encryptionKey);
  const { rows } = await pool.query<{ id: string }>(`SELECT id::text FROM "Organization" WHERE slug LIKE 'org-%'`);
  for (let start = 0; start < rows.length; start += SEED_BATCH) {
    const batch = rows.slice(start, start + SEED_BATCH);
    const kids = batch.map(() => randomBytes(12).toString("base64url"));
    await pool.query(
      `INSERT INTO "SigningKey" (id, "organizationId", alg, status, "publicJwk", "privateJwkEncrypted")
       SELECT k, o::uuid, 'ES256', 'active', p::jsonb, e FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS t(k, o, p, e)`,
      [
        kids,
        batch.map((row) => row.id),
        kids.map((kid) => JSON.stringify({ ...publicJwk, kid, alg: "ES256", use: "sig" })),
        kids.map((kid) => encrypter.encrypt(privateJson, `signing-key:${kid}`)),
      ],
    );
  }
  await pool.query("VACUUM ANALYZE");
  return (performance.now() - t0) / 1000;
}

/* ------------------------------------------------------------------ measurements */

interface Latency {
  p50: number;
  p95: number;
}
interface Run extends Latency {
  perSecond: number;
  ok: number;
  failed: number;
  cpuMsPerRequest: number;
}
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
const summary = (values: number[]): Latency => {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
};

async function cannon(options: autocannon.Options, pid: number): Promise<Run> {
  const warm = autocannon({ connections: CONNECTIONS, timeout: 20, ...options, duration: 1 });
  await warm;
  const cpuBefore = cpuSecondsOf(pid);
  const latencies: number[] = [];
  let failed = 0;
  const instance = autocannon({ connections: CONNECTIONS, timeout: 20, ...options, duration: DURATION });
  instance.on("response", (_client: unknown, status: number, _bytes: number, responseTime: number) => {
    if (status >= 200 && status < 300) latencies.push(responseTime);
    else failed++;
  });
  const result = await instance;
  const cpu = cpuSecondsOf(pid) - cpuBefore;
  return {
    ...summary(latencies),
    ok: latencies.length,
    failed: failed + result.errors + result.timeouts,
    perSecond: latencies.length / result.duration,
    cpuMsPerRequest: (1000 * cpu) / latencies.length,
  };
}

/** One request after another at each of `slugs`, each the target's first request. */
async function timed(url: string, init?: RequestInit): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(url, init);
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
  return performance.now() - t0;
}

interface Figures {
  n: number;
  seedSeconds: number;
  startWallSeconds: number;
  startCpuSeconds: number;
  idleRssMb: number;
  cold: Latency;
  warm: Latency;
  /** In-process builds of the fill organizations, one after another. */
  build: Latency;
  heapPerProviderKb: number;
  rssPerProviderKb: number;
  filled: number;
  discoveryOne: Run;
  discoveryAll: Run;
  ccOne: Run;
  ccAll: Run;
  adminList: Latency;
  adminSearch: Latency & { matches: number };
  directory: DirectoryStats;
  rssAfterMb: number;
  rssSettledMb: number;
  heapSettledMb: number;
}

async function measure(base: string, n: number, redisUrl: string | undefined): Promise<Figures> {
  const admin = new pg.Pool({ connectionString: base, max: 1 });
  const database = `porta_orgs_${randomBytes(4).toString("hex")}`;
  await admin.query(`CREATE DATABASE ${database}`);
  const url = new URL(base);
  url.pathname = `/${database}`;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "porta-orgs-"));
  const encryptionKey = randomBytes(32);
  const env = {
    DATABASE_URL: url.toString(),
    DATA_DIR: dataDir,
    ENCRYPTION_KEY: encryptionKey.toString("base64"),
    // Each N has a database of its own: its cache entries must not meet another N's (the same
    // client ids in other organizations).
    ...(redisUrl ? { REDIS_URL: redisUrl, REDIS_PREFIX: `porta-orgs-${randomBytes(6).toString("hex")}:` } : {}),
  };
  const pool = new pg.Pool({ connectionString: url.toString(), max: 2 });
  try {
    // The same port both times: the admin token's issuer is BASE_URL's.
    const port = await freePort();
    log(`N=${n}: first start (migrations, admin token)`);
    const first = await startPorta({ ...env, PORT: String(port), ADMIN_TOKEN: "1" });
    const accessToken = first.accessToken!;
    await first.stop();
    const prefix = randomBytes(16).toString("base64url");
    const seedSeconds = await seed(pool, n, prefix, encryptionKey);
    log(`N=${n}: seeded in ${seedSeconds.toFixed(1)} s; restarting`);

    const t0 = performance.now();
    const porta = await startPorta({ ...env, PORT: String(port) });
    try {
      for (;;) {
        const res = await fetch(`${porta.url}/health`).catch(() => undefined);
        if (res?.status === 200) break;
        await sleep(20);
      }
      const startWallSeconds = (performance.now() - t0) / 1000;
      const startCpuSeconds = cpuSecondsOf(porta.pid);
      await sleep(3_000);
      const idleRssMb = rssMbOf(porta.pid);

      // Cold builds: organizations spread over the whole range, none touched before.
      const picks = Array.from({ length: Math.min(COLD, n) }, (_, k) => 1 + Math.floor(((k + 0.5) * n) / Math.min(COLD, n)));
      const coldTimes: number[] = [];
      const warmTimes: number[] = [];
      for (const i of picks) {
        const discovery = `${porta.url}/${slugOf(i)}/.well-known/openid-configuration`;
        coldTimes.push(await timed(discovery));
        warmTimes.push(await timed(discovery));
      }

      // Heap per cached provider: fill the pool with organizations not yet built.
      const picked = new Set(picks);
      const fillSlugs = Array.from({ length: n }, (_, k) => k + 1).filter((i) => !picked.has(i)).slice(0, FILL).map(slugOf);
      const before = await porta.memory();
      const builds = fillSlugs.length ? await porta.build(fillSlugs) : [];
      const after = await porta.memory();
      // Those the pool kept (all of them while they fit): the heap grew by theirs.
      const filled = fillSlugs.length ? await porta.pooled(fillSlugs) : 0;

      // The directory of discovery documents fills in the background after start (decision 062).
      const directory = await porta.directory();
      log(`N=${n}: directory filled in ${(directory.fillMs / 1000).toFixed(1)} s (${directory.entries} organizations)`);
      log(`N=${n}: discovery and client_credentials, one organization then round-robin`);
      let counter = Math.floor(Math.random() * n);
      const nextSlug = () => slugOf(1 + (counter++ % n));
      const discoveryOf = (slug: string) => `/${slug}/.well-known/openid-configuration`;
      const basic = (slug: string) => `Basic ${Buffer.from(`c-${slug}:${prefix}-${slug}`).toString("base64")}`;
      const ccRequest = (slug: string): autocannon.RequestSpec => ({
        method: "POST",
        path: `/${slug}/auth/token`,
        headers: { authorization: basic(slug), "content-type": FORM },
        body: "grant_type=client_credentials",
      });
      const one = slugOf(1);
      // One organization's requests are made by the same per-request function as the round-robin's,
      // so that the load generator (on the same 2 cores) costs both sides the same.
      const discoveryOne = await cannon({ url: porta.url, requests: [{ method: "GET", setupRequest: (req) => ({ ...req, path: discoveryOf(one) }) }] }, porta.pid);
      const discoveryAll = await underProfile(porta.pid, `discovery-round-robin-${n}`, () =>
        cannon({ url: porta.url, requests: [{ method: "GET", setupRequest: (req) => ({ ...req, path: discoveryOf(nextSlug()) }) }] }, porta.pid),
      );
      const ccOne = await cannon({ url: porta.url, requests: [{ setupRequest: (req) => ({ ...req, ...ccRequest(one) }) }] }, porta.pid);
      const ccAll = await underProfile(porta.pid, `cc-round-robin-${n}`, () =>
        cannon({ url: porta.url, requests: [{ setupRequest: (req) => ({ ...req, ...ccRequest(nextSlug()) }) }] }, porta.pid),
      );

      log(`N=${n}: Admin API list and search`);
      const headers = { authorization: `Bearer ${accessToken}` };
      const adminTimes = async (query: string) => {
        for (let k = 0; k < 10; k++) await timed(`${porta.url}/api/admin/organizations?${query}`, { headers });
        const times: number[] = [];
        for (let k = 0; k < ADMIN_REQUESTS; k++) times.push(await timed(`${porta.url}/api/admin/organizations?${query}`, { headers }));
        return summary(times);
      };
      // A substring of ten slugs (org-00123x) at N ≥ 10,000; of one name otherwise.
      const q = n >= 10_000 ? slugOf(Math.floor(n / 2)).slice(4, 9) : `Organization ${Math.ceil(n / 2)}`;
      const searched = (await (await fetch(`${porta.url}/api/admin/organizations?q=${encodeURIComponent(q)}&pageSize=20`, { headers })).json()) as { total: number };
      const adminSearch = { ...(await adminTimes(`q=${encodeURIComponent(q)}&pageSize=20`)), matches: searched.total };
      const adminList = await adminTimes("pageSize=20");
      const rssAfterRuns = rssMbOf(porta.pid);

      return {
        n,
        seedSeconds,
        startWallSeconds,
        startCpuSeconds,
        idleRssMb,
        cold: summary(coldTimes),
        warm: summary(warmTimes),
        build: summary(builds),
        heapPerProviderKb: (after.heapUsed - before.heapUsed) / 1024 / filled,
        rssPerProviderKb: (after.rss - before.rss) / 1024 / filled,
        filled,
        discoveryOne,
        discoveryAll,
        ccOne,
        ccAll,
        adminList,
        adminSearch,
        directory,
        rssAfterMb: rssAfterRuns,
        ...(await settledMemory(porta)),
      };
    } finally {
      await porta.stop();
    }
  } finally {
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/* ------------------------------------------------------------------ report */

const fmt = (x: number, digits = 0) => x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
const pair = (l: Latency) => `${fmt(l.p50, 1)} / ${fmt(l.p95, 1)}`;
const run = (r: Run) => `${fmt(r.perSecond)}/s, ${pair(r)}${r.failed ? `, ${fmt(r.failed)} failed` : ""}`;
const verdict = (ok: boolean) => (ok ? "met" : "**not met**");

function render(figures: Figures[], context: { started: Date; seconds: number; load: [number[], number[]]; server: string; redis: boolean; porta: string }): string {
  const loads = context.load.map((l) => l.map((x) => x.toFixed(2)).join(" / "));
  const idle = figures[0]?.idleRssMb ?? NaN;
  const rows = (label: string, cell: (f: Figures) => string) => `| ${label} | ${figures.map(cell).join(" | ")} |`;
  return [
    "## Organizations at scale (PostgreSQL)",
    "",
    `- Date: ${context.started.toISOString().slice(0, 19)}Z (the whole run took ${fmt(context.seconds)} s), \`npm run bench:orgs\` (bench/organizations.ts)`,
    `- Machine: ${os.cpus().length} cores, Node ${process.version}; load average (1/5/15 min) before: ${loads[0]}, after: ${loads[1]}`,
    `- Stores: ${context.server}${context.redis ? " + Redis" : ", no Redis"}; Porta from source through tsx, MALLOC_ARENA_MAX=2 as npm start sets it${context.porta ? `, with ${context.porta}` : ""}`,
    `- Load: autocannon, ${CONNECTIONS} connections, ${DURATION} s per figure after a 1 s warm-up. Round-robin: one counter shared by all connections, so consecutive requests go to different organizations.`,
    "- Each organization has one confidential client (client_credentials, client_secret_basic) and one active ES256 key, seeded with set-based SQL.",
    "",
    `| Measurement | ${figures.map((f) => `N = ${fmt(f.n)}`).join(" | ")} | Target |`,
    `|---|${figures.map(() => "---:").join("|")}|---|`,
    rows("seed (s)", (f) => fmt(f.seedSeconds, 1)) + " — |",
    rows("start to healthy: wall s (CPU s)", (f) => `${fmt(f.startWallSeconds, 1)} (${fmt(f.startCpuSeconds, 1)})`) + " independent of N |",
    rows("first discovery of an untouched organization, p50 / p95 ms", (f) => pair(f.cold)) + " — |",
    rows("the same request again (warm), p50 / p95 ms", (f) => pair(f.warm)) + " — |",
    rows("provider build in-process (registry get, nothing cached), p50 / p95 ms", (f) => (f.filled ? pair(f.build) : "—")) + " ≤ 5 ms |",
    rows("heap per cached provider, KB (RSS per provider, KB)", (f) => (f.filled ? `${fmt(f.heapPerProviderKb)} (${fmt(f.rssPerProviderKb)}) over ${fmt(f.filled)} pooled` : "—")) + " — |",
    rows("directory of discovery documents after start: organizations held (MB by its estimate), fill time s", (f) => `${fmt(f.directory.entries)} (${fmt(f.directory.bytes / 1024 / 1024, 1)}), ${fmt(f.directory.fillMs / 1000, 1)}`) + " — |",
    rows("discovery, one organization: rate, p50 / p95 ms", (f) => run(f.discoveryOne)) + " — |",
    rows("discovery, round-robin over N: rate, p50 / p95 ms", (f) => run(f.discoveryAll)) + " p95 ≤ 2× one |",
    rows("discovery round-robin p95 / one p95", (f) => `${fmt(f.discoveryAll.p95 / f.discoveryOne.p95, 2)}× ${verdict(f.discoveryAll.p95 <= 2 * f.discoveryOne.p95)}`) + " ≤ 2× |",
    rows("client_credentials, one organization: rate, p50 / p95 ms", (f) => run(f.ccOne)) + " — |",
    rows("client_credentials, round-robin over N: rate, p50 / p95 ms", (f) => run(f.ccAll)) + " p95 ≤ 2× one |",
    rows("client_credentials round-robin p95 / one p95", (f) => `${fmt(f.ccAll.p95 / f.ccOne.p95, 2)}× ${verdict(f.ccAll.p95 <= 2 * f.ccOne.p95)}`) + " ≤ 2× |",
    rows("server CPU ms per grant, one / round-robin", (f) => `${fmt(f.ccOne.cpuMsPerRequest, 2)} / ${fmt(f.ccAll.cpuMsPerRequest, 2)}`) + " — |",
    rows("Admin API list of organizations (first page of 20), p50 / p95 ms", (f) => pair(f.adminList)) + " p95 < 50 ms |",
    rows("Admin API search `q=` (page of 20), p50 / p95 ms (matches)", (f) => `${pair(f.adminSearch)} (${fmt(f.adminSearch.matches)})`) + " p95 < 50 ms |",
    rows("RSS idle after start, MB", (f) => fmt(f.idleRssMb)) + " — |",
    rows("RSS right after the runs, MB", (f) => fmt(f.rssAfterMb)) + " — |",
    rows(`RSS ${SETTLE_MS / 1000} s after the runs (a full GC halfway), MB (heap used after the GC)`, (f) => `${fmt(f.rssSettledMb)} (${fmt(f.heapSettledMb)}) ${verdict(f.rssSettledMb <= idle + 100)}`) +
      ` ≤ idle + 100 MB (N = 1 idle: ${fmt(idle)}) |`,
    "",
    "The Admin API requests go one at a time, each after 10 warm-up requests (100 timed), with a real service-admin token.",
    "RSS right after the runs holds the garbage they left (it grows with their request rate: each round-robin grant builds a provider); the settled row is what the process keeps.",
    "Search looks for a 5-character substring of slugs at N ≥ 10,000 (ten matches) and for one organization's name below.",
  ].join("\n");
}

function writeSection(body: string) {
  const start = "<!-- bench:organizations:start -->";
  const end = "<!-- bench:organizations:end -->";
  const previous = existsSync(DOC) ? readFileSync(DOC, "utf8") : "# Benchmarks\n";
  const block = `${start}\n${body}\n${end}`;
  const a = previous.indexOf(start);
  const b = previous.indexOf(end);
  writeFileSync(DOC, a >= 0 && b > a ? previous.slice(0, a) + block + previous.slice(b + end.length) : `${previous.trimEnd()}\n\n${block}\n`);
}

async function main() {
  const base = process.env.BENCH_DATABASE_URL?.trim();
  if (!base) throw new Error("BENCH_DATABASE_URL is required (PostgreSQL: the embedded database is one process and not what this measures)");
  const redisUrl = process.env.BENCH_REDIS_URL?.trim() || undefined;
  const started = new Date();
  const loadBefore = os.loadavg();
  const figures: Figures[] = [];
  for (const n of COUNTS) {
    const f = await measure(base, n, redisUrl);
    log(`N=${n}: ${JSON.stringify(f)}`);
    figures.push(f);
  }
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  const server = `PostgreSQL ${String((await client.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]?.v)}`;
  await client.end();
  const section = render(figures, {
    started,
    seconds: (Date.now() - started.getTime()) / 1000,
    load: [loadBefore, os.loadavg()],
    server,
    redis: Boolean(redisUrl),
    porta: process.env.BENCH_PORTA_ENV ?? "",
  });
  writeSection(section);
  process.stdout.write(section + "\n");
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
