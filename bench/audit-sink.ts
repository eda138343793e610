/**
 * `npm run bench:audit-sink`: what a deployment audit sink that is down costs a password sign-in
 * (decision 092). Porta (bench/porta-server.ts, embedded by default; BENCH_DATABASE_URL is not
 * read here) is started twice, one after the other, with the same seed: without a sink, and with
 * AUDIT_SINKS naming a JSON-lines sink on a closed port of this machine. Each run measures
 * returning sign-ins as `npm run bench` does (bench/login.ts) and prints sign-ins per second,
 * Porta's CPU per sign-in, statements per sign-in and the client-side time of each step.
 *
 * The two alternate (none, down, none, down) so that a busy neighbour on the machine weighs on both.
 *
 * Knobs (env): BENCH_LOGIN_USERS (60), BENCH_LOGIN_CONCURRENCY (8), BENCH_DURATION (8 s), BENCH_ROUNDS (2), BENCH_PAIRS (2).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { ServerInfo } from "./flow";
import { measureLogins, type LoginFigures } from "./login";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const envNumber = (name: string, fallback: number) => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};
const USERS = envNumber("BENCH_LOGIN_USERS", 60);
const CONCURRENCY = envNumber("BENCH_LOGIN_CONCURRENCY", 8);
const SECONDS = envNumber("BENCH_DURATION", 8);
const ROUNDS = envNumber("BENCH_ROUNDS", 2);
const PAIRS = envNumber("BENCH_PAIRS", 2);
const CLOCK_TICKS = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

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

function startPorta(env: Record<string, string>): Promise<{ info: ServerInfo; child: ChildProcess }> {
  const child = spawn(process.execPath, ["--import", "tsx", "bench/porta-server.ts"], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: "", REDIS_URL: "", ...env, NODE_ENV: "production" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let buffered = "";
    let done = false;
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (chunk: string) => {
      if (done) return;
      buffered += chunk;
      for (const line of buffered.split("\n")) {
        if (!line.trim().startsWith("{")) continue;
        try {
          const info = JSON.parse(line) as ServerInfo;
          done = true;
          resolve({ info, child });
          return;
        } catch {
          // not the whole line yet
        }
      }
    });
    child.once("exit", (code) => !done && reject(new Error(`porta exited (${code}) before it was ready`)));
  });
}

async function run(label: string, extraEnv: Record<string, string>): Promise<LoginFigures> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "porta-bench-sink-"));
  const port = await freePort();
  const { info, child } = await startPorta({ PORT: String(port), DATA_DIR: dataDir, SEED_LOGIN_USERS: String(USERS), SEED_REFRESH_TOKENS: "1", SEED_REFRESH_FLOWS: "1", SEED_ADMIN_LIST_USERS: "0", ...extraEnv });
  try {
    console.error(`${label}: measuring`);
    return await measureLogins({
      info,
      concurrency: CONCURRENCY,
      seconds: SECONDS,
      rounds: ROUNDS,
      portaCpuSeconds: () => cpuSecondsOf(info.pid),
      portaLapCpuSeconds: () => cpuSecondsPrecise(info.pid),
      profiled: (_label, _round, work) => work(),
      log: (line) => console.error(`  ${line}`),
    });
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main() {
  const closed = await freePort();
  const rows: string[] = [];
  const row = (label: string, f: LoginFigures) =>
    `| ${label} | ${f.returning.perSecond.toFixed(1)} | ${f.returning.cpuMsPerLogin.toFixed(1)} | ${f.returning.statementsPerLogin.toFixed(1)} | ${f.returning.failed} | ${Object.entries(f.returning.stepMs)
      .map(([step, ms]) => `${step} ${ms.toFixed(1)}`)
      .join(", ")} |`;
  for (let pair = 1; pair <= PAIRS; pair++) {
    rows.push(row(`none (${pair})`, await run(`no sink (${pair})`, {})));
    rows.push(
      row(
        `JSON lines on a closed port (${pair})`,
        await run(`sink down (${pair})`, {
          OUTBOUND_ALLOW_PRIVATE_NETWORKS: "true",
          AUDIT_SINKS: JSON.stringify([{ name: "down", kind: "jsonl", url: `http://127.0.0.1:${closed}/ingest` }]),
        }),
      ),
    );
  }
  console.log(`Returning password sign-ins, ${CONCURRENCY} at a time, ${USERS} accounts, ${SECONDS} s in ${ROUNDS} rounds per run, embedded database, ${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(1)}:\n`);
  console.log("| audit sink | sign-ins/s | Porta CPU ms/sign-in | statements/sign-in | failed | client ms per step |");
  console.log("|---|---|---|---|---|---|");
  for (const line of rows) console.log(line);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
