/**
 * `npm run bench`: Porta beside a bare in-memory oidc-provider, measured in one run on this
 * machine over loopback, written to docs/benchmarks.md.
 *
 * Both servers run in child processes (bench/porta-server.ts, bench/bare-provider.ts) so that
 * the load generator (autocannon, in this process) never shares their event loop. Every
 * measurement runs against the bare provider and then against Porta, back to back, so each
 * ratio comes from the same minute on the same machine.
 *
 * Porta uses its embedded defaults (PGlite in a temp DATA_DIR, in-memory store). With
 * BENCH_DATABASE_URL and/or BENCH_REDIS_URL it uses PostgreSQL (a database porta_bench_<random>
 * created on that server and dropped afterwards) and/or Redis (keys under a random prefix,
 * deleted afterwards). Each mode rewrites its own section of docs/benchmarks.md and keeps the other.
 *
 * Knobs (env): BENCH_CONNECTIONS (20), BENCH_DURATION (10 s for client_credentials, 8 s for the
 * rest, split into BENCH_ROUNDS=2 alternating rounds), BENCH_REFRESH_TOKENS (pool size per
 * server, 4000), BENCH_REFRESH_FLOWS (how many of those come from full authorization-code flows,
 * 50), BENCH_INTROSPECTION_RATE (500),
 * BENCH_PROFILE_DIR (CPU profiles of the first measured round of each server and scenario, see
 * bench/profile-summary.ts), BENCH_PORTA_NODE_ARGS (extra node flags for Porta's process),
 * BENCH_LIST_USERS (users of the Admin API list benchmark's organization, 100,000),
 * BENCH_LOGIN_USERS (accounts of the password-login scenario, 300; each signs in at most 9 times)
 * and BENCH_LOGIN_CONCURRENCY (sign-ins and raw Argon2id verifications in flight, 8; see bench/login.ts).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { Redis } from "ioredis";
import pg from "pg";
import { LIST_PAGE_SIZE, measureAdminList, type AdminListFigures, type LatencySummary } from "./admin-list";
import { BENCH_RESOURCE, type ServerInfo, underProfile } from "./flow";
import { loginLines, measureLogins, type LoginFigures } from "./login";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DOC = path.join(ROOT, "docs", "benchmarks.md");
const SERVER_BUILD = path.join(ROOT, "build", "server", "index.js");

const envNumber = (name: string, fallback: number) => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};
const CONNECTIONS = envNumber("BENCH_CONNECTIONS", 20);
const CC_DURATION = envNumber("BENCH_DURATION", 10);
const DURATION = envNumber("BENCH_DURATION", 8);
const WARMUP = 1;
const REFRESH_TOKENS = envNumber("BENCH_REFRESH_TOKENS", 4000);
const REFRESH_FLOWS = envNumber("BENCH_REFRESH_FLOWS", 50);
const REFRESH_WARMUP = 100;
/** Each comparison runs in this many alternating rounds (see compare). */
const ROUNDS = envNumber("BENCH_ROUNDS", 2);
const INTROSPECTION_RATE = envNumber("BENCH_INTROSPECTION_RATE", 500);
const IDLE_SECONDS = 5;
const LIST_USERS = envNumber("BENCH_LIST_USERS", 100_000);
const LOGIN_USERS = envNumber("BENCH_LOGIN_USERS", 300);
const LOGIN_CONCURRENCY = envNumber("BENCH_LOGIN_CONCURRENCY", 8);
type Target = "porta" | "bare";
const TARGETS: Target[] = ["bare", "porta"];
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR;
const pids: Partial<Record<Target, number>> = {};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** With BENCH_PROFILE_DIR, the first measured round of each server is CPU-profiled (see flow.ts profileOnSignal). */
async function profiled<T>(t: Target, label: string, round: number, work: () => Promise<T>): Promise<T> {
  const pid = pids[t];
  return round === 0 && pid ? underProfile(pid, label, work) : work();
}

/* ------------------------------------------------------------------ processes */

const children = new Map<number, ChildProcess>();
/** Run once at the end, also on error or interruption: drop the database, delete Redis keys, remove DATA_DIR. */
const cleanups: Array<() => Promise<void> | void> = [];

async function cleanUp() {
  await stopAllChildren();
  while (cleanups.length > 0) {
    const task = cleanups.pop()!;
    try {
      await task();
    } catch (error) {
      console.error("cleanup failed:", error);
    }
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

async function stopAllChildren() {
  await Promise.all([...children.values()].map(stopChild));
  children.clear();
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Starts one server script and waits for its JSON line. */
function startChild(name: Target, script: string, env: Record<string, string>, nodeArgs: string[] = []): Promise<{ info: ServerInfo; child: ChildProcess }> {
  const child = spawn(process.execPath, [...nodeArgs, "--import", "tsx", script], {
    cwd: ROOT,
    env: { ...process.env, ...env, NODE_ENV: "production" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.set(child.pid!, child);
  let stderr = "";
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-8_000);
  });
  return new Promise((resolve, reject) => {
    let buffered = "";
    let done = false;
    const timer = setTimeout(() => finish(new Error(`${name} did not start within 10 minutes`)), 600_000);
    function finish(error?: Error, info?: ServerInfo) {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (error) reject(new Error(`${error.message}\n--- ${name} stderr ---\n${stderr}`));
      else resolve({ info: info!, child });
    }
    child.stdout!.setEncoding("utf8");
    // Keep draining stdout after the JSON line, so that the child never blocks on a full pipe.
    child.stdout!.on("data", (chunk: string) => {
      if (done) return;
      buffered += chunk;
      let newline;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (!line.startsWith("{")) continue;
        try {
          finish(undefined, JSON.parse(line) as ServerInfo);
          return;
        } catch {
          // not our line
        }
      }
    });
    child.once("exit", (code, signal) => finish(new Error(`${name} exited (${code ?? signal}) before it was ready`)));
    child.once("error", (error) => finish(error));
  });
}

/** CPU time (user + system) of a process in seconds, from /proc/<pid>/stat. */
function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // After "pid (comm) ", field 3 is index 0; utime and stime are fields 14 and 15.
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}
const CLOCK_TICKS = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100;

/**
 * CPU seconds of a process's live threads to the nanosecond (/proc/<pid>/task/<tid>/schedstat),
 * for laps of a few milliseconds, where /proc/<pid>/stat's clock ticks (10 ms) are too coarse.
 * A thread that exits takes its time with it, so only differences over a short lap are meant.
 */
function cpuSecondsPrecise(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return ns / 1e9;
}

/** Share of one core each server burns with no requests at all (timers, pollers), over `seconds`. */
async function idleCpu(seconds: number): Promise<Record<Target, number>> {
  const before = { porta: cpuSecondsOf(pids.porta!), bare: cpuSecondsOf(pids.bare!) };
  await sleep(seconds * 1000);
  return {
    porta: (100 * (cpuSecondsOf(pids.porta!) - before.porta)) / seconds,
    bare: (100 * (cpuSecondsOf(pids.bare!) - before.bare)) / seconds,
  };
}

function rssOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
  return { rssMb: kb("VmRSS") / 1024, peakMb: kb("VmHWM") / 1024 };
}

/* ------------------------------------------------------------------ external stores */

interface Stores {
  label: string;
  section: "embedded" | "external";
  portaEnv: Record<string, string>;
}

async function prepareStores(): Promise<Stores> {
  const databaseBase = process.env.BENCH_DATABASE_URL?.trim();
  const redisUrl = process.env.BENCH_REDIS_URL?.trim();
  const portaEnv: Record<string, string> = {};
  const parts: string[] = [];

  if (databaseBase) {
    const name = `porta_bench_${randomBytes(5).toString("hex")}`;
    const admin = new pg.Client({ connectionString: databaseBase });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${name}`);
    } finally {
      await admin.end();
    }
    cleanups.push(async () => {
      const c = new pg.Client({ connectionString: databaseBase });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    });
    const url = new URL(databaseBase);
    url.pathname = `/${name}`;
    portaEnv.DATABASE_URL = url.toString();
    const version = await serverVersion(url.toString());
    parts.push(`PostgreSQL ${version} on ${url.host} (database ${name}, pool of 10)`);
  } else {
    parts.push("embedded PGlite in a temp DATA_DIR");
  }

  if (redisUrl) {
    const prefix = `porta-bench-${randomBytes(5).toString("hex")}:`;
    portaEnv.REDIS_URL = redisUrl;
    portaEnv.REDIS_PREFIX = prefix;
    const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    const info = await redis.info("server");
    await redis.quit();
    parts.push(`Redis ${/redis_version:(\S+)/.exec(info)?.[1] ?? "?"} on ${new URL(redisUrl).host} (key prefix ${prefix})`);
    cleanups.push(async () => {
      const client = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await client.connect();
      try {
        let cursor = "0";
        do {
          const [nextCursor, keys] = await client.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
          cursor = nextCursor;
          if (keys.length > 0) await client.del(...keys);
        } while (cursor !== "0");
      } finally {
        await client.quit();
      }
    });
  } else {
    parts.push("in-memory store");
  }

  return {
    label: parts.join(" + "),
    section: databaseBase || redisUrl ? "external" : "embedded",
    portaEnv,
  };
}

async function serverVersion(connectionString: string): Promise<string> {
  const c = new pg.Client({ connectionString });
  await c.connect();
  try {
    const { rows } = await c.query<{ server_version: string }>("SHOW server_version");
    return rows[0]?.server_version.split(" ")[0] ?? "?";
  } finally {
    await c.end();
  }
}

/* ------------------------------------------------------------------ measuring */

interface Endpoints {
  origin: string;
  token: string;
  introspection: string;
  discovery: string;
  jwks: string;
  basic: string;
}

async function endpointsOf(info: ServerInfo): Promise<Endpoints> {
  const discovery = `${info.issuer}/.well-known/openid-configuration`;
  const res = await fetch(discovery);
  if (!res.ok) throw new Error(`discovery at ${discovery}: ${res.status}`);
  const doc = (await res.json()) as { token_endpoint: string; introspection_endpoint: string; jwks_uri: string };
  const origin = new URL(info.url).origin;
  const local = (u: string) => {
    const parsed = new URL(u);
    return origin + parsed.pathname;
  };
  return {
    origin,
    token: local(doc.token_endpoint),
    introspection: local(doc.introspection_endpoint),
    discovery,
    jwks: local(doc.jwks_uri),
    basic: "Basic " + Buffer.from(`${encodeURIComponent(info.clientId)}:${encodeURIComponent(info.secret)}`).toString("base64"),
  };
}

const FORM = "application/x-www-form-urlencoded";

async function postForm(url: string, basic: string, body: Record<string, string>) {
  const res = await fetch(url, { method: "POST", headers: { authorization: basic, "content-type": FORM }, body: new URLSearchParams(body) });
  const json = (await res.json()) as Record<string, unknown>;
  return { status: res.status, json };
}

interface Throughput {
  perSecond: number;
  ok: number;
  seconds: number;
  failed: number;
  statusCodes: Record<string, number>;
  latencyP50: number;
  latencyP95: number;
  latencyP99: number;
  /** Sorted latencies (ms) of the 2xx responses. */
  latencies: number[];
  /** CPU time (user + system, all threads) the server process spent during the runs. */
  cpuSeconds: number;
  /** Server CPU milliseconds per successful request: independent of how busy the machine was. */
  cpuMsPerRequest: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function summarize(parts: Array<Pick<Throughput, "ok" | "seconds" | "failed" | "statusCodes" | "latencies" | "cpuSeconds">>): Throughput {
  const latencies = parts.flatMap((p) => p.latencies).sort((x, y) => x - y);
  const statusCodes: Record<string, number> = {};
  for (const part of parts) for (const [code, n] of Object.entries(part.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  const ok = parts.reduce((n, p) => n + p.ok, 0);
  const seconds = parts.reduce((n, p) => n + p.seconds, 0);
  const cpuSeconds = parts.reduce((n, p) => n + p.cpuSeconds, 0);
  return {
    cpuSeconds,
    cpuMsPerRequest: (1000 * cpuSeconds) / ok,
    perSecond: ok / seconds,
    ok,
    seconds,
    failed: parts.reduce((n, p) => n + p.failed, 0),
    statusCodes,
    latencyP50: percentile(latencies, 50),
    latencyP95: percentile(latencies, 95),
    latencyP99: percentile(latencies, 99),
    latencies,
  };
}

/** Runs autocannon and computes figures from its per-response events (only 2xx count as done). */
async function cannon(options: autocannon.Options, pid?: number): Promise<Throughput> {
  const cpuBefore = pid ? cpuSecondsOf(pid) : NaN;
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let ok = 0;
  let lastOk = 0;
  const started = performance.now();
  const instance = autocannon({ connections: CONNECTIONS, timeout: 20, ...options });
  instance.on("response", (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
    if (statusCode >= 200 && statusCode < 300) {
      ok++;
      lastOk = performance.now();
      latencies.push(responseTime);
    }
  });
  const result = await instance;
  // A fixed amount ends with the last response; a duration run ends on autocannon's own clock.
  const seconds = options.amount ? (lastOk - started) / 1000 : result.duration;
  // A 2xx whose body verifyBody rejects (e.g. an inactive introspection answer) is a failure.
  if (result.mismatches > 0) statusCodes["2xx, wrong body"] = result.mismatches;
  const cpuSeconds = pid ? cpuSecondsOf(pid) - cpuBefore : NaN;
  return summarize([
    { ok: ok - result.mismatches, seconds, failed: result.errors + result.timeouts + result.non2xx + result.mismatches, statusCodes, latencies, cpuSeconds },
  ]);
}

/** ABBA order: bare, Porta, then Porta, bare, and so on, so that a drift in machine load hits both alike. */
const roundOrder = (round: number): Target[] => (round % 2 === 0 ? ["bare", "porta"] : ["porta", "bare"]);

function describe(t: Target | string, r: Throughput) {
  return `  ${t}: ${fmt(r.perSecond)}/s (${r.ok} ok in ${r.seconds.toFixed(2)} s, ${r.failed} failed, p50 ${ms(r.latencyP50)} ms, p95 ${ms(r.latencyP95)} ms, server CPU ${r.cpuMsPerRequest.toFixed(3)} ms/request)`;
}

/** A warm-up of each server, then ROUNDS alternating runs of duration/ROUNDS seconds each, pooled. */
async function compare(label: string, optionsFor: (t: Target) => autocannon.Options, duration: number): Promise<Record<Target, Throughput>> {
  for (const t of TARGETS) await cannon({ ...optionsFor(t), duration: WARMUP });
  const parts: Record<Target, Throughput[]> = { bare: [], porta: [] };
  const slice = Math.max(2, Math.round(duration / ROUNDS));
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of roundOrder(round)) parts[t].push(await profiled(t, label, round, () => cannon({ ...optionsFor(t), duration: slice }, pids[t])));
  }
  const out = { bare: summarize(parts.bare), porta: summarize(parts.porta) };
  for (const t of TARGETS) log(describe(t, out[t]));
  return out;
}

/**
 * Two kinds of request on Porta alone, in alternating rounds (a, b, b, a, …) after a warm-up of
 * each: how one costs beside the other in the same minute.
 */
async function alternateOnPorta(label: string, a: autocannon.Options, b: autocannon.Options, duration: number): Promise<{ a: Throughput; b: Throughput }> {
  for (const options of [a, b]) await cannon({ ...options, duration: WARMUP });
  const parts: { a: Throughput[]; b: Throughput[] } = { a: [], b: [] };
  const slice = Math.max(2, Math.round(duration / ROUNDS));
  for (let round = 0; round < ROUNDS; round++) {
    for (const which of round % 2 === 0 ? (["a", "b"] as const) : (["b", "a"] as const)) {
      parts[which].push(await profiled("porta", `${label}-${which}`, round, () => cannon({ ...(which === "a" ? a : b), duration: slice }, pids.porta)));
    }
  }
  const out = { a: summarize(parts.a), b: summarize(parts.b) };
  log(describe("porta (plain)", out.a));
  log(describe("porta (API resource)", out.b));
  return out;
}

/**
 * Refresh grants: every request takes the next unused token of the server's pool, once. A
 * warm-up of REFRESH_WARMUP tokens gives a first rate; each measured round then spends about
 * duration/ROUNDS seconds' worth of tokens (bounded by what is left in the pool).
 */
async function compareRefresh(ep: Record<Target, Endpoints>, pools: Record<Target, string[]>, duration: number): Promise<Record<Target, Throughput>> {
  const next: Record<Target, number> = { bare: 0, porta: 0 };
  const request = (t: Target, amount: number): autocannon.Options => ({
    url: ep[t].token,
    method: "POST",
    headers: { authorization: ep[t].basic, "content-type": FORM },
    amount,
    verifyBody: (body) => body.includes('"refresh_token"'),
    requests: [
      {
        setupRequest(req) {
          const token = pools[t][next[t]++];
          if (!token) throw new Error(`the ${t} refresh token pool ran dry`);
          return { ...req, body: `grant_type=refresh_token&refresh_token=${encodeURIComponent(token)}` };
        },
      },
    ],
  });
  const estimate = {} as Record<Target, number>;
  for (const t of TARGETS) {
    const warm = await cannon(request(t, Math.max(CONNECTIONS, Math.min(REFRESH_WARMUP, Math.floor(pools[t].length / 10)))));
    estimate[t] = warm.perSecond;
  }
  const parts: Record<Target, Throughput[]> = { bare: [], porta: [] };
  const slice = duration / ROUNDS;
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of roundOrder(round)) {
      const left = pools[t].length - next[t];
      const share = Math.floor(left / (ROUNDS - round));
      if (share < CONNECTIONS * 5) throw new Error(`only ${left} ${t} refresh tokens left; raise BENCH_REFRESH_TOKENS`);
      const amount = Math.max(CONNECTIONS * 5, Math.min(share, Math.ceil(estimate[t] * slice * 1.2)));
      const part = await profiled(t, "refresh", round, () => cannon(request(t, amount), pids[t]));
      parts[t].push(part);
      estimate[t] = part.perSecond;
    }
  }
  const out = { bare: summarize(parts.bare), porta: summarize(parts.porta) };
  for (const t of TARGETS) log(`${describe(t, out[t])}; ${next[t]} of ${pools[t].length} pool tokens used`);
  return out;
}

/* ------------------------------------------------------------------ report */

interface Figures {
  clientCredentials: Record<Target, Throughput>;
  /** Porta's plain client_credentials grant and one for an API resource (a JWT with aud = the resource), alternating. */
  resourceGrant: { plain: Throughput; resource: Throughput };
  refresh: Record<Target, Throughput>;
  introspection: Record<Target, Throughput>;
  introspectionUserToken?: Throughput;
  discovery: Record<Target, Throughput>;
  jwks: Record<Target, Throughput>;
  rss: Record<Target, { rssMb: number; peakMb: number }>;
  idleCpu: Record<Target, number>;
  seeding: Record<Target, ServerInfo["seeding"]>;
  refreshPool: Record<Target, number>;
  adminList: AdminListFigures;
  passwordLogin: LoginFigures;
}

const log = (line: string) => console.log(line);
const fmt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "n/a");
const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : "n/a");
const ratio = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}×` : "n/a");
const met = (ok: boolean) => (ok ? "**met**" : "**not met**");

function failures(t: Throughput): string {
  if (t.failed === 0) return "";
  const codes = Object.entries(t.statusCodes)
    .filter(([code]) => !/^2\d\d$/.test(code))
    .map(([code, n]) => `${n}×${code}`)
    .join(", ");
  return ` (${t.failed} failed${codes ? `: ${codes}` : ""})`;
}

function renderSection(stores: Stores, figures: Figures, context: { started: Date; load: [number[], number[]]; seconds: number }): string {
  const { clientCredentials: cc, refresh, introspection, discovery, jwks, rss } = figures;
  const iu = figures.introspectionUserToken;
  const ccMet = cc.porta.perSecond / cc.bare.perSecond >= 0.8 && cc.porta.perSecond >= 1000;
  // Cost per request: bare/Porta CPU ms is Porta's throughput relative to bare's when each has a core to itself.
  const ccCostRatio = cc.bare.cpuMsPerRequest / cc.porta.cpuMsPerRequest;
  const ceiling = (t: Throughput) => 1000 / t.cpuMsPerRequest;
  const ccCostMet = ccCostRatio >= 0.8 && ceiling(cc.porta) >= 1000;
  const row = (name: string, p: Throughput, b: Throughput, target: string, verdict: string) =>
    `| ${name} | ${fmt(p.perSecond)}${failures(p)} | ${fmt(b.perSecond)}${failures(b)} | ${ratio(p.perSecond, b.perSecond)} | ${target} | ${verdict} |`;
  const costRow = (name: string, p: Throughput, b: Throughput | undefined, target: string, verdict: string) =>
    `| ${name} | ${p.cpuMsPerRequest.toFixed(3)} | ${b ? b.cpuMsPerRequest.toFixed(3) : "n/a"} | ${b ? ratio(p.cpuMsPerRequest, b.cpuMsPerRequest) : "—"} | ${fmt(ceiling(p))} | ${b ? fmt(ceiling(b)) : "n/a"} | ${target} | ${verdict} |`;
  const load = (l: number[]) => l.map((n) => n.toFixed(2)).join(" / ");
  const title = stores.section === "embedded" ? "Embedded defaults (PGlite + in-memory store)" : "PostgreSQL + Redis";
  const s = figures.seeding;
  const lines = [
    `## ${title}`,
    "",
    `- Date: ${context.started.toISOString().replace(/\.\d+Z$/, "Z")} (the whole run took ${Math.round(context.seconds)} s)`,
    `- Machine: ${os.cpus().length} cores (nproc ${os.availableParallelism()}), ${os.cpus()[0]?.model ?? "?"}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}, ${os.type()} ${os.release()}`,
    `- Load average (1/5/15 min) before: ${load(context.load[0])}, after: ${load(context.load[1])}`,
    `- Porta's stores: ${stores.label}`,
    `- Load: autocannon 8.0.0 in the runner process, ${CONNECTIONS} connections, loopback only. Each figure follows a ${WARMUP} s warm-up of both servers and pools ${ROUNDS} alternating rounds (bare, Porta, Porta, bare, …)`,
    "",
    "### Throughput and latency as measured",
    "",
    "| Measurement | Porta | bare oidc-provider | Porta/bare | Target | Verdict |",
    "|---|---:|---:|---:|---|---|",
    row(
      `client_credentials grants/s (${CC_DURATION} s)`,
      cc.porta,
      cc.bare,
      "≥ 0.8× bare and ≥ 1,000/s",
      `${met(ccMet)} (ratio ${cc.porta.perSecond / cc.bare.perSecond >= 0.8 ? "met" : "not met"}, rate ${cc.porta.perSecond >= 1000 ? "met" : "not met"})`,
    ),
    row(`refresh_token grants/s (one pool token per request)`, refresh.porta, refresh.bare, "—", ""),
    row(`discovery req/s (${DURATION} s)`, discovery.porta, discovery.bare, "≥ 10,000/s", met(discovery.porta.perSecond >= 10_000)),
    row(`JWKS req/s (${DURATION} s)`, jwks.porta, jwks.bare, "≥ 10,000/s", met(jwks.porta.perSecond >= 10_000)),
    `| introspection p50 / p95 at ${INTROSPECTION_RATE} req/s, client_credentials token (ms) | ${ms(introspection.porta.latencyP50)} / ${ms(introspection.porta.latencyP95)}${failures(introspection.porta)} | ${ms(introspection.bare.latencyP50)} / ${ms(introspection.bare.latencyP95)}${failures(introspection.bare)} | ${ratio(introspection.porta.latencyP50, introspection.bare.latencyP50)} / ${ratio(introspection.porta.latencyP95, introspection.bare.latencyP95)} | — | achieved ${fmt(introspection.porta.perSecond)} / ${fmt(introspection.bare.perSecond)} req/s |`,
    iu
      ? `| introspection p50 / p95 at ${INTROSPECTION_RATE} req/s, user access token (ms) | ${ms(iu.latencyP50)} / ${ms(iu.latencyP95)}${failures(iu)} | n/a | — | — | achieved ${fmt(iu.perSecond)} req/s |`
      : undefined,
    `| CPU with no requests, % of one core (${IDLE_SECONDS} s, after seeding) | ${figures.idleCpu.porta.toFixed(1)} | ${figures.idleCpu.bare.toFixed(1)} | — | — | |`,
    `| RSS after the runs, MB (peak) | ${rss.porta.rssMb.toFixed(0)} (${rss.porta.peakMb.toFixed(0)}) | ${rss.bare.rssMb.toFixed(0)} (${rss.bare.peakMb.toFixed(0)}) | ${ratio(rss.porta.rssMb, rss.bare.rssMb)} | — | |`,
    "",
    "### Server CPU time per request",
    "",
    "CPU time (user + system, all threads, from /proc/<pid>/stat) each server process spent per successful request during the",
    "measured runs. It depends far less on how busy the machine is than req/s (contention still inflates it somewhat);",
    "1000 / ms estimates the rate one fully available core would sustain if the server were CPU-bound." +
      (stores.section === "external" ? " PostgreSQL's and Redis's own CPU time is not included." : " PGlite runs inside Porta's process, so its work is included."),
    "",
    "| Request | Porta ms | bare ms | Porta/bare cost | Porta req/s per core | bare req/s per core | Target | Verdict (estimate) |",
    "|---|---:|---:|---:|---:|---:|---|---|",
    costRow(
      "client_credentials grant",
      cc.porta,
      cc.bare,
      "≥ 0.8× bare and ≥ 1,000/s",
      `${met(ccCostMet)} (ratio ${ccCostRatio >= 0.8 ? "met" : "not met"}, rate ${ceiling(cc.porta) >= 1000 ? "met" : "not met"})`,
    ),
    costRow("refresh_token grant", refresh.porta, refresh.bare, "—", ""),
    costRow("introspection, client_credentials token", introspection.porta, introspection.bare, "—", ""),
    iu ? costRow("introspection, user access token", iu, undefined, "—", "") : undefined,
    costRow("discovery", discovery.porta, discovery.bare, "≥ 10,000/s", met(ceiling(discovery.porta) >= 10_000)),
    costRow("JWKS", jwks.porta, jwks.bare, "≥ 10,000/s", met(ceiling(jwks.porta) >= 10_000)),
    "",
    ...resourceGrantLines(figures.resourceGrant),
    "",
    ...adminListLines(figures.adminList),
    "",
    ...loginLines(figures.passwordLogin),
    "",
    "Notes on this run:",
    "",
    `- Latencies at full load (p50 / p99, ms): client_credentials Porta ${ms(cc.porta.latencyP50)} / ${ms(cc.porta.latencyP99)}, bare ${ms(cc.bare.latencyP50)} / ${ms(cc.bare.latencyP99)}; refresh Porta ${ms(refresh.porta.latencyP50)} / ${ms(refresh.porta.latencyP99)}, bare ${ms(refresh.bare.latencyP50)} / ${ms(refresh.bare.latencyP99)}.`,
    `- Refresh: each request spends one unused token of a pool of ${figures.refreshPool.porta} (Porta) and ${figures.refreshPool.bare} (bare) tokens; after a warm-up of up to ${REFRESH_WARMUP} tokens, ${fmt(refresh.porta.ok)} and ${fmt(refresh.bare.ok)} grants were measured over ${refresh.porta.seconds.toFixed(1)} s and ${refresh.bare.seconds.toFixed(1)} s (rate = grants / time to the last response).` +
      ` Of each pool, ${s.porta.flows} (Porta) and ${s.bare.flows} (bare) tokens came from full authorization-code flows (authorize → login/consent finished in-process → resume → code exchange),` +
      ` ${(s.porta.flows / s.porta.flowSeconds).toFixed(1)} and ${(s.bare.flows / s.bare.flowSeconds).toFixed(1)} flows/s with 4 flows at a time and the HTTP client inside the server process;` +
      ` the rest were minted in-process by the provider's RefreshToken model with the fields oidc-provider copies on rotation, saved through each server's own adapter` +
      ` (${(s.porta.clones / s.porta.cloneSeconds).toFixed(0)} and ${(s.bare.clones / s.bare.cloneSeconds).toFixed(0)} tokens/s).`,
    `- Introspection: Porta introspects its ES256 JWT access token (signature check, then the stored record under its jti); oidc-provider cannot introspect a JWT it never stored, so the bare provider introspects an opaque client_credentials token (resource urn:bench:opaque) from its memory adapter. Every answer was checked to say \`"active":true\`.` +
      (iu ? " The user access token row is Porta's JWT from the code exchange, stored as a durable row." : ""),
    "- Porta runs with LOG_LEVEL=silent (no access log lines are written); the bare provider runs on plain node:http with oidc-provider's own in-memory adapter (LRU raised to 1,000,000 entries so that the refresh pool is not evicted).",
  ].filter((l): l is string => l !== undefined);
  return lines.join("\n");
}

/** Porta's client_credentials grant for an API resource beside its plain one, measured in the same alternating rounds. */
function resourceGrantLines({ plain, resource }: Figures["resourceGrant"]): string[] {
  const rate = resource.perSecond / plain.perSecond;
  const cost = resource.cpuMsPerRequest / plain.cpuMsPerRequest;
  return [
    "### client_credentials for an API resource beside the plain grant (Porta only)",
    "",
    `The bench client is granted the API resource ${BENCH_RESOURCE.identifier}; the resource-bound request sends \`resource\` and the resource's two scopes and gets an ES256 JWT with aud = the resource (checked before the run).` +
      ` Both requests ran on Porta in the same ${ROUNDS} alternating rounds after a warm-up; target: within 10 % of the plain grant.`,
    "",
    "| Request | req/s | p50 / p99 ms | server CPU ms | Target | Verdict |",
    "|---|---:|---:|---:|---|---|",
    `| plain client_credentials | ${fmt(plain.perSecond)}${failures(plain)} | ${ms(plain.latencyP50)} / ${ms(plain.latencyP99)} | ${plain.cpuMsPerRequest.toFixed(3)} | — | |`,
    `| client_credentials for the API resource | ${fmt(resource.perSecond)}${failures(resource)} | ${ms(resource.latencyP50)} / ${ms(resource.latencyP99)} | ${resource.cpuMsPerRequest.toFixed(3)} | rate ≥ 0.9× and CPU ≤ 1.1× the plain grant | ${met(rate >= 0.9 && cost <= 1.1)} (rate ${ratio(resource.perSecond, plain.perSecond)}, CPU ${ratio(resource.cpuMsPerRequest, plain.cpuMsPerRequest)}) |`,
  ];
}

function adminListLines(list: AdminListFigures): string[] {
  const row = (name: string, l: LatencySummary, target: string, verdict: string) =>
    `| ${name} | ${fmt(l.requests)} | ${ms(l.p50)} | ${ms(l.p95)} | ${ms(l.p99)} | ${ms(l.max)} | ${target} | ${verdict} |`;
  return [
    `### Admin API: list the users of an organization with ${fmt(list.users)} users`,
    "",
    `GET /api/admin/organizations/{orgId}/users with a real service-admin token, ${LIST_PAGE_SIZE} users per page, one request at a time after 10 warm-up requests;` +
      ` latency as the runner sees it over loopback (Admin API authentication, the page and the total included; offset pages count the total each time, a cursor walk counts it on its first page and carries it in the cursor). The users were written in batches of 5,000 through Prisma in ${list.seedSeconds.toFixed(1)} s, then \`VACUUM ANALYZE\`.`,
    "",
    "| Mode | Requests | p50 ms | p95 ms | p99 ms | max ms | Target | Verdict |",
    "|---|---:|---:|---:|---:|---:|---|---|",
    row("offset, page 1", list.offsetFirst, "—", ""),
    row(`offset, page ${fmt(list.deepPage)}`, list.offsetDeep, "—", ""),
    row(`cursor, every page of the walk (${fmt(list.cursorRows)} users seen once each)`, list.cursor, "p95 < 50 ms", met(list.cursor.p95 < 50)),
  ];
}

const marker = (section: string, edge: "start" | "end") => `<!-- bench:${section}:${edge} -->`;

/**
 * Rewrites this mode's section between its markers and keeps everything else, the other mode's
 * section and the dated, hand-written comparisons (before/after figures of a change) included.
 */
function writeDoc(section: Stores["section"], body: string) {
  const previous = existsSync(DOC) ? readFileSync(DOC, "utf8") : "";
  const block = `${marker(section, "start")}\n${body}\n${marker(section, "end")}`;
  const start = previous.indexOf(marker(section, "start"));
  const end = previous.indexOf(marker(section, "end"));
  let text: string;
  if (start >= 0 && end > start) text = previous.slice(0, start) + block + previous.slice(end + marker(section, "end").length);
  else if (previous.trim()) text = previous.trimEnd() + "\n\n" + block + "\n";
  else {
    const header = [
      "# Benchmarks",
      "",
      "Written by `npm run bench` (bench/run.ts). One run measures Porta beside a bare in-memory oidc-provider",
      "(same oidc-provider version, configured like Porta where that applies: ES256 only, JWT access tokens for a",
      "default resource, refresh-token rotation; see bench/bare-provider.ts) on the same machine over loopback,",
      "so each Porta/bare ratio comes from one run. Both servers run in their own processes; the load generator",
      "(autocannon) runs in a third. A plain `npm run bench` writes the embedded section; with",
      "`BENCH_DATABASE_URL=postgresql://… BENCH_REDIS_URL=redis://…` it writes the PostgreSQL + Redis section.",
      "Each run rewrites only its own section and keeps the rest of this page.",
      "",
      "The machine is shared with other work, so absolute req/s move with its load (given with each run). The",
      "server CPU time per request is the steadier figure, and the Porta/bare ratios are taken back to back.",
      "To see where the time goes, run with `BENCH_PROFILE_DIR=/tmp/prof` (CPU profiles of the first measured",
      "round of each server and scenario) and read them with `node --import tsx bench/profile-summary.ts <file>`.",
      "",
    ].join("\n");
    text = header + "\n" + block + "\n";
  }
  mkdirSync(path.dirname(DOC), { recursive: true });
  writeFileSync(DOC, text);
}

/* ------------------------------------------------------------------ main */

/**
 * Porta serves its production Remix build. When it is missing, another build may be under way
 * (vite empties build/ first), so wait a little for it before building here.
 */
async function ensureBuild() {
  for (let waited = 0; waited < 30 && !existsSync(SERVER_BUILD); waited++) {
    if (waited === 0) log("build/server/index.js is missing; waiting up to 30 s in case a build is under way…");
    await sleep(1_000);
  }
  if (existsSync(SERVER_BUILD)) return;
  log("running `npx remix vite:build`");
  const result = spawnSync("npx", ["remix", "vite:build"], { cwd: ROOT, stdio: "inherit" });
  if (result.status !== 0 || !existsSync(SERVER_BUILD)) throw new Error("the Remix build failed (see above); Porta cannot start without it");
}

async function main() {
  const started = new Date();
  const t0 = performance.now();
  const loadBefore = os.loadavg();
  await ensureBuild();
  // Registers its own clean-ups (database, Redis keys) as soon as each thing exists.
  const stores = await prepareStores();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "porta-bench-"));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  try {
    log(`Porta on ${stores.label}`);
    const [portaPort, barePort] = [await freePort(), await freePort()];
    const seedEnv = { ...(PROFILE_DIR ? { BENCH_PROFILE_DIR: PROFILE_DIR } : {}), SEED_REFRESH_TOKENS: String(REFRESH_TOKENS), SEED_REFRESH_FLOWS: String(REFRESH_FLOWS) };
    const portaArgs = (process.env.BENCH_PORTA_NODE_ARGS ?? "").split(" ").filter(Boolean);
    log(`starting both servers and seeding ${REFRESH_TOKENS} refresh tokens each (${REFRESH_FLOWS} through full flows)…`);
    const startPortaChild = async () => {
      // Others may rebuild (and so briefly remove) build/ while this starts: wait for it and try again.
      for (let attempt = 1; ; attempt++) {
        try {
          // Only what this run chose reaches Porta: a DATABASE_URL or REDIS_URL in the shell must not.
          const env = {
            DATABASE_URL: "",
            REDIS_URL: "",
            REDIS_PREFIX: "",
            ...stores.portaEnv,
            PORT: String(portaPort),
            DATA_DIR: dataDir,
            SEED_ADMIN_LIST_USERS: String(LIST_USERS),
            SEED_LOGIN_USERS: String(LOGIN_USERS),
            ...seedEnv,
          };
          return await startChild("porta", "bench/porta-server.ts", env, portaArgs);
        } catch (error) {
          if (attempt >= 3 || !String(error).includes("Remix build is missing")) throw error;
          log("Porta found no Remix build; waiting for it and starting again");
          await ensureBuild();
        }
      }
    };
    const [porta, bare] = await Promise.all([startPortaChild(), startChild("bare", "bench/bare-provider.ts", { PORT: String(barePort), ...seedEnv })]);
    const info: Record<Target, ServerInfo> = { porta: porta.info, bare: bare.info };
    pids.porta = info.porta.pid;
    pids.bare = info.bare.pid;
    if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
    for (const t of TARGETS) {
      const s = info[t].seeding;
      log(`  ${t}: pid ${info[t].pid}, ${info[t].refreshTokens.length} refresh tokens (${s.flows} flows in ${s.flowSeconds.toFixed(1)} s, ${s.clones} clones in ${s.cloneSeconds.toFixed(1)} s)`);
    }
    const ep: Record<Target, Endpoints> = { porta: await endpointsOf(info.porta), bare: await endpointsOf(info.bare) };

    // Sanity: the grants work before anything is measured.
    for (const t of TARGETS) {
      const cc = await postForm(ep[t].token, ep[t].basic, { grant_type: "client_credentials" });
      if (cc.status !== 200) throw new Error(`${t}: client_credentials failed: ${JSON.stringify(cc.json)}`);
    }
    /** A client_credentials token to introspect, fetched right before use and checked to be active. */
    const introspectableToken = async (t: Target) => {
      const body: Record<string, string> = t === "bare" ? { grant_type: "client_credentials", resource: "urn:bench:opaque" } : { grant_type: "client_credentials" };
      const token = String((await postForm(ep[t].token, ep[t].basic, body)).json.access_token);
      const intro = await postForm(ep[t].introspection, ep[t].basic, { token });
      if (intro.json.active !== true) throw new Error(`${t}: a fresh client_credentials token does not introspect as active: ${JSON.stringify(intro.json)}`);
      return token;
    };
    const userToken = info.porta.userAccessToken;
    if (userToken) {
      const intro = await postForm(ep.porta.introspection, ep.porta.basic, { token: userToken });
      if (intro.json.active !== true) throw new Error(`porta: the user access token does not introspect as active: ${JSON.stringify(intro.json)}`);
    }
    const has = (needle: string) => (body: string) => body.includes(needle);

    await sleep(2_000);
    const idle = await idleCpu(IDLE_SECONDS);
    log(`idle CPU over ${IDLE_SECONDS} s: porta ${idle.porta.toFixed(1)}%, bare ${idle.bare.toFixed(1)}% of one core`);

    const form = (t: Target, url: string, body: string): autocannon.Options => ({
      url,
      method: "POST",
      headers: { authorization: ep[t].basic, "content-type": FORM },
      body,
    });

    log(`client_credentials (${CC_DURATION} s each, ${ROUNDS} rounds)`);
    const clientCredentials = await compare(
      "client-credentials",
      (t) => ({ ...form(t, ep[t].token, "grant_type=client_credentials"), verifyBody: has('"access_token"') }),
      CC_DURATION,
    );
    log(`client_credentials for an API resource beside the plain grant, Porta only (${CC_DURATION} s each, ${ROUNDS} rounds)`);
    const resourceBody = `grant_type=client_credentials&resource=${encodeURIComponent(BENCH_RESOURCE.identifier)}&scope=${encodeURIComponent(BENCH_RESOURCE.scopes.join(" "))}`;
    const probe = await postForm(ep.porta.token, ep.porta.basic, Object.fromEntries(new URLSearchParams(resourceBody)));
    if (probe.status !== 200 || typeof probe.json.access_token !== "string") throw new Error(`porta: the resource-bound grant failed: ${JSON.stringify(probe.json)}`);
    const claims = JSON.parse(Buffer.from(probe.json.access_token.split(".")[1] ?? "", "base64url").toString("utf8")) as { aud?: unknown };
    if (claims.aud !== BENCH_RESOURCE.identifier) throw new Error(`porta: the resource-bound token's aud is ${JSON.stringify(claims.aud)}`);
    const resourcePair = await alternateOnPorta(
      "client-credentials-resource",
      { ...form("porta", ep.porta.token, "grant_type=client_credentials"), verifyBody: has('"access_token"') },
      { ...form("porta", ep.porta.token, resourceBody), verifyBody: has('"access_token"') },
      CC_DURATION,
    );
    const resourceGrant = { plain: resourcePair.a, resource: resourcePair.b };
    log("refresh_token");
    const refresh = await compareRefresh(ep, { porta: info.porta.refreshTokens, bare: info.bare.refreshTokens }, DURATION);
    log(`introspection at ${INTROSPECTION_RATE} req/s`);
    const ccToken = { porta: await introspectableToken("porta"), bare: await introspectableToken("bare") };
    const active = has('"active":true');
    const introspection = await compare(
      "introspection",
      (t) => ({ ...form(t, ep[t].introspection, `token=${encodeURIComponent(ccToken[t])}`), overallRate: INTROSPECTION_RATE, verifyBody: active }),
      DURATION,
    );
    let introspectionUserToken: Throughput | undefined;
    if (userToken) {
      const options = {
        ...form("porta", ep.porta.introspection, `token=${encodeURIComponent(userToken)}`),
        overallRate: INTROSPECTION_RATE,
        verifyBody: active,
      };
      await cannon({ ...options, duration: WARMUP });
      introspectionUserToken = await profiled("porta", "introspection-user-token", 0, () => cannon({ ...options, duration: DURATION }, pids.porta));
      log(describe("porta (user access token)", introspectionUserToken));
    }
    log("discovery");
    const discovery = await compare("discovery", (t) => ({ url: ep[t].discovery, verifyBody: has('"issuer"') }), DURATION);
    log("JWKS");
    const jwks = await compare("jwks", (t) => ({ url: ep[t].jwks, verifyBody: has('"keys"') }), DURATION);

    const listSeed = info.porta.adminList;
    if (!listSeed) throw new Error("Porta did not seed the Admin API list benchmark");
    log(`Admin API list of ${fmt(listSeed.users)} users (seeded in ${listSeed.seedSeconds.toFixed(1)} s), one request at a time`);
    const adminList = await measureAdminList(info.porta.url, listSeed);
    log(`  offset page 1 p95 ${ms(adminList.offsetFirst.p95)} ms, page ${adminList.deepPage} p95 ${ms(adminList.offsetDeep.p95)} ms, cursor p95 ${ms(adminList.cursor.p95)} ms`);

    log(`password logins, ${LOGIN_CONCURRENCY} at a time, beside raw Argon2id verifications`);
    const passwordLogin = await measureLogins({
      info: info.porta,
      concurrency: LOGIN_CONCURRENCY,
      seconds: DURATION,
      rounds: ROUNDS,
      portaCpuSeconds: () => cpuSecondsOf(info.porta.pid),
      portaLapCpuSeconds: () => cpuSecondsPrecise(info.porta.pid),
      bare: { info: info.bare, cpuSeconds: () => cpuSecondsPrecise(info.bare.pid) },
      profiled: (label, round, work) => profiled("porta", label, round, work),
      log,
    });
    const pl = passwordLogin.returning;
    log(
      `  porta: ${pl.perSecond.toFixed(1)} logins/s, ${pl.cpuMsPerLogin.toFixed(1)} ms CPU and ${pl.statementsPerLogin.toFixed(1)} statements per login; raw Argon2id ${passwordLogin.argon2.perSecond.toFixed(1)}/s, ${passwordLogin.argon2.cpuMsPerVerification.toFixed(1)} ms CPU each`,
    );

    const rss = { porta: rssOf(info.porta.pid), bare: rssOf(info.bare.pid) };
    log(`RSS: porta ${rss.porta.rssMb.toFixed(0)} MB (peak ${rss.porta.peakMb.toFixed(0)}), bare ${rss.bare.rssMb.toFixed(0)} MB (peak ${rss.bare.peakMb.toFixed(0)})`);

    const figures: Figures = {
      clientCredentials,
      resourceGrant,
      refresh,
      introspection,
      ...(introspectionUserToken ? { introspectionUserToken } : {}),
      discovery,
      jwks,
      rss,
      idleCpu: idle,
      seeding: { porta: info.porta.seeding, bare: info.bare.seeding },
      refreshPool: { porta: info.porta.refreshTokens.length, bare: info.bare.refreshTokens.length },
      adminList,
      passwordLogin,
    };
    const section = renderSection(stores, figures, { started, load: [loadBefore, os.loadavg()], seconds: (performance.now() - t0) / 1000 });
    writeDoc(stores.section, section);
    log(`\n${section}\n\nwrote ${path.relative(ROOT, DOC)}`);
  } finally {
    await cleanUp();
  }
}

let interrupted = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${signal}: stopping the servers`);
    cleanUp().finally(() => process.exit(130));
  });
}

main().then(
  () => process.exit(0),
  async (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    await cleanUp();
    process.exit(1);
  },
);
