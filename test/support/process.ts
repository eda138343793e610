import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root, where `server.ts` lives. */
export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * A TCP port nobody listens on right now (this module stays free of the server's imports).
 *
 * The port is probed and closed, and the server listens on it later, after its database is
 * ready. A port the kernel chose (`listen(0)`) comes from the ephemeral range, which every
 * other `listen(0)` and outgoing connection of the parallel test files draws from too, and CI
 * once lost a suite to EADDRINUSE in that window. So ports come from below the ephemeral range
 * (32768–60999 on Linux), from a slice of a thousand that belongs to this vitest worker alone.
 */
export async function freePort(): Promise<number> {
  const slice = Number(process.env.VITEST_POOL_ID ?? 0) % 12;
  for (let attempt = 0; attempt < 1_000; attempt++) {
    const port = 20_000 + slice * 1_000 + (nextInSlice++ % 1_000);
    if (await nobodyListensOn(port)) return port;
  }
  throw new Error(`no free port left in 20000 + ${slice * 1_000}..+999`);
}

let nextInSlice = Math.floor(Math.random() * 1_000);

function nobodyListensOn(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen({ port, host: "0.0.0.0", exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

/** Every variable Porta reads; a spawned server gets none of them from the test runner unless given. */
const PORTA_VARIABLES = [
  "NODE_ENV",
  "PORT",
  "BASE_URL",
  "DATABASE_URL",
  "REDIS_URL",
  "DATA_DIR",
  "SUPER_ADMIN_SLUG",
  "ADMIN_BOOTSTRAP_EMAIL",
  "ADMIN_BOOTSTRAP_PASSWORD",
  "ENCRYPTION_KEY",
  "SMTP_HOST",
  "SMTP_PORT",
  "SMTP_USER",
  "SMTP_PASS",
  "SMTP_FROM",
  "LOG_LEVEL",
  "TRUST_PROXY",
  "OIDC_PROVIDER_POOL_MB",
  "SHUTDOWN_DELAY_SECONDS",
  "OUTBOUND_ALLOW_PRIVATE_NETWORKS",
  "AUDIT_SINKS",
];

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Milliseconds from spawn to exit. */
  afterMs: number;
}

export interface ServerProcess {
  child: ChildProcess;
  pid: number;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<Exit>;
  /** Sends a signal if the process still runs. */
  kill(signal?: NodeJS.Signals): void;
}

/**
 * Runs `node --import tsx server.ts` from the repository root, as an operator would, with
 * exactly the Porta variables given (nothing leaks in from the test runner's environment).
 */
export function spawnServer(env: Record<string, string>): ServerProcess {
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !PORTA_VARIABLES.includes(key) && !key.startsWith("VITEST")));
  const started = Date.now();
  const childEnv: NodeJS.ProcessEnv = { ...base, ...env } as NodeJS.ProcessEnv;
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "server.ts"], {
    cwd: REPO_ROOT,
    env: childEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const exited = new Promise<Exit>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal, afterMs: Date.now() - started }));
  });
  if (child.pid === undefined) throw new Error("could not spawn server.ts");
  const pid = child.pid;
  return {
    child,
    pid,
    stdout: () => out,
    stderr: () => err,
    exited,
    kill(signal = "SIGKILL") {
      if (child.exitCode === null && child.signalCode === null) process.kill(pid, signal);
    },
  };
}

/** Resolves with the exit, or with undefined when the process still runs after `ms`. */
export function exitWithin(server: ServerProcess, ms: number): Promise<Exit | undefined> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    server.exited,
    new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Polls GET /health until it answers (any status), or fails with the server's output. */
export async function waitForHealth(url: string, server: ServerProcess | undefined, timeoutMs = 30_000): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (server && (server.child.exitCode !== null || server.child.signalCode !== null)) {
      throw new Error(`server exited before answering: ${server.stderr()}${server.stdout()}`);
    }
    try {
      return await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) });
    } catch {
      if (Date.now() > deadline) throw new Error(`no answer from ${url}/health within ${timeoutMs} ms: ${server?.stderr() ?? ""}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

export interface RedisServer {
  url: string;
  port: number;
  /** The running server's process id (a new one after `start`). */
  readonly pid: number;
  /** Sends a signal to this redis-server (and only to it). */
  signal(signal: NodeJS.Signals): void;
  /** Kills it if it still runs and waits for the exit. */
  stop(): Promise<void>;
  /** Starts it again, empty, on the same port (after `stop`). */
  start(): Promise<void>;
}

interface RedisProcess {
  pid: number;
  running(): boolean;
  exited: Promise<void>;
}

async function spawnRedis(port: number): Promise<RedisProcess> {
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  if (child.pid === undefined) throw new Error("could not spawn redis-server");
  const pid = child.pid;
  const running = () => child.exitCode === null && child.signalCode === null;
  const deadline = Date.now() + 10_000;
  while (!/Ready to accept connections/i.test(output)) {
    if (!running()) throw new Error(`redis-server exited: ${output}`);
    if (Date.now() > deadline) {
      process.kill(pid, "SIGKILL");
      throw new Error(`redis-server did not start: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { pid, running, exited };
}

/**
 * A private redis-server on a free port, so that tests that kill or freeze Redis never touch a
 * shared one. No persistence: it starts empty and leaves no files behind.
 */
export async function startPrivateRedis(): Promise<RedisServer> {
  const port = await freePort();
  let current = await spawnRedis(port);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    get pid() {
      return current.pid;
    },
    signal(signal) {
      if (current.running()) process.kill(current.pid, signal);
    },
    async stop() {
      if (current.running()) process.kill(current.pid, "SIGKILL");
      await current.exited;
    },
    async start() {
      if (current.running()) throw new Error("redis-server is running");
      current = await spawnRedis(port);
    },
  };
}

export interface PostgresServer {
  /** A connection URL for the `postgres` database of this private server. */
  url: string;
  port: number;
  /** Stops it at once (as a crash would: no checkpoint), keeping its data. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops it if it runs and removes its data. */
  dispose(): Promise<void>;
}

const PG_BIN = (() => {
  const root = "/usr/lib/postgresql";
  const version = readdirSync(root).sort((a, b) => Number(b) - Number(a))[0];
  return path.join(root, version!, "bin");
})();

/** Runs a PostgreSQL tool as the `postgres` user (the server refuses to run as root). */
function asPostgres(tool: string, args: string[]): Promise<void> {
  const asRoot = process.getuid?.() === 0;
  const command = asRoot ? "runuser" : path.join(PG_BIN, tool);
  const argv = asRoot ? ["-u", "postgres", "--", path.join(PG_BIN, tool), ...args] : args;
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${tool} ${args.join(" ")} failed (${code}): ${output}`))));
  });
}

/**
 * A private PostgreSQL on a free port in a temporary directory, so that a test can stop and
 * start the database its Porta uses without touching the shared one.
 */
export async function startPrivatePostgres(): Promise<PostgresServer> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), "porta-pg-"));
  chmodSync(dir, 0o777);
  const data = path.join(dir, "data");
  await asPostgres("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off`;
  const start = () => asPostgres("pg_ctl", ["-D", data, "-o", options, "-l", path.join(dir, "log"), "-w", "-t", "30", "start"]);
  let running = false;
  await start();
  running = true;
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    port,
    async kill() {
      if (!running) return;
      await asPostgres("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      running = false;
    },
    async start() {
      if (running) return;
      await start();
      running = true;
    },
    async dispose() {
      if (running) await asPostgres("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => undefined);
      running = false;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
