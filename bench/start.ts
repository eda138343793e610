/**
 * `npm run bench:start`: what a start and a restart of the compiled server cost, as `npm start`
 * runs it (`node --liftoff-only scripts/start.mjs`, MALLOC_ARENA_MAX=2), and what the idle process holds.
 * For each mode (embedded, and PostgreSQL + Redis when BENCH_DATABASE_URL and BENCH_REDIS_URL are
 * set) it starts the server on a fresh DATA_DIR (the first start: migrations, bootstrap), then
 * restarts it ROUNDS times on the same data, and reports per start: the CPU seconds the process
 * used until /health answered (user + system, from /proc), and its RSS after IDLE_SECONDS of idling.
 * The builds must be current (`npm run build`); the bench never builds.
 *
 *   BENCH_START_ROUNDS (4)  BENCH_IDLE_SECONDS (30)  BENCH_NODE (the node to run, default this one)
 *   BENCH_NODE_OPTIONS (NODE_OPTIONS for the server, to compare V8 settings)
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const ROUNDS = Number(process.env.BENCH_START_ROUNDS ?? 4);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 30);
const NODE = process.env.BENCH_NODE ?? process.execPath;
const TICKS = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** CPU seconds (user + system) of a process and its children so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}
function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"))!;
  return Number(line.split(/\s+/)[1]) / 1024;
}

interface StartFigures {
  cpuToHealthy: number;
  secondsToHealthy: number;
  idleRssMb: number;
}

async function startOnce(env: Record<string, string>): Promise<StartFigures> {
  const port = await freePort();
  const started = Date.now();
  const child = spawn(NODE, ["--liftoff-only", "scripts/start.mjs"], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", NODE_ENV: "production", MALLOC_ARENA_MAX: "2", LOG_LEVEL: "warn", PORT: String(port), ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const pid = child.pid!;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the server exited: ${output}`);
      const ok = await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false);
      if (ok) break;
      if (Date.now() - started > 180_000) throw new Error(`no health after 180 s: ${output}`);
      await sleep(50);
    }
    const figures = { cpuToHealthy: cpuSeconds(pid), secondsToHealthy: (Date.now() - started) / 1000 };
    await sleep(IDLE_SECONDS * 1000);
    return { ...figures, idleRssMb: rssMb(pid) };
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
  }
}

async function mode(name: string, env: () => Promise<{ env: Record<string, string>; cleanUp: () => Promise<void> }>) {
  const { env: modeEnv, cleanUp } = await env();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "porta-bench-start-"));
  try {
    const runs: StartFigures[] = [];
    for (let round = 0; round <= ROUNDS; round++) runs.push(await startOnce({ ...modeEnv, DATA_DIR: dataDir }));
    const [first, ...restarts] = runs;
    const range = (values: number[], digits: number) => `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;
    console.log(
      `${name}: first start ${first!.cpuToHealthy.toFixed(2)} CPU-s (${first!.secondsToHealthy.toFixed(1)} s); restarts ${range(restarts.map((r) => r.cpuToHealthy), 2)} CPU-s ` +
        `(${range(restarts.map((r) => r.secondsToHealthy), 1)} s); idle RSS after ${IDLE_SECONDS} s ${range(restarts.map((r) => r.idleRssMb), 0)} MB (first start: ${first!.idleRssMb.toFixed(0)} MB)`,
    );
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    await cleanUp();
  }
}

const version = (await new Promise<string>((resolve) => {
  const child = spawn(NODE, ["--version"]);
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.on("exit", () => resolve(out.trim()));
}));
console.log(`Node ${version}; load average ${os.loadavg().map((l) => l.toFixed(2)).join(" / ")}; ${ROUNDS} restarts per mode`);
await mode("embedded", async () => ({ env: {}, cleanUp: async () => {} }));
const databaseUrl = process.env.BENCH_DATABASE_URL;
const redisUrl = process.env.BENCH_REDIS_URL;
if (databaseUrl && redisUrl) {
  await mode("PostgreSQL + Redis", async () => {
    const name = `porta_bench_start_${randomBytes(4).toString("hex")}`;
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(databaseUrl);
    url.pathname = `/${name}`;
    return {
      env: { DATABASE_URL: url.toString(), REDIS_URL: redisUrl },
      cleanUp: async () => {
        const c = new pg.Client({ connectionString: databaseUrl });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await c.end();
      },
    };
  });
}
console.log(`load average after: ${os.loadavg().map((l) => l.toFixed(2)).join(" / ")}`);
