/**
 * The password-login scenario of `npm run bench`: full sign-ins over HTTP as a browser makes
 * them (authorize → login page → password POST → consent if asked → redirect with the code →
 * code exchange at the token endpoint), `concurrency` at a time, beside raw Argon2id
 * verifications at Porta's parameters with as many in flight (bench/argon2-raw.ts, in a child
 * process of its own). The bare provider has no password to check: the raw verification rate is
 * the ceiling a login can approach, since each admitted attempt runs exactly one.
 *
 * Every sign-in is a new browser (no device cookie, so the per-account and per-address limits
 * and their counters are on the path) from its own client address: Porta trusts X-Forwarded-For
 * from loopback only (TRUST_PROXY's default), which is where the runner is, so no limit is
 * loosened. The accounts (porta-server.ts, SEED_LOGIN_USERS) sign in round-robin: each signs in
 * once in the first pass, which asks for consent, and then at most RETURNING_PER_USER times as a
 * returning user whose consent is remembered, below the per-account limit of 10 per 15 minutes.
 */
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { cookieClient, loginEmail, REDIRECT_URI, type ServerInfo } from "./flow";

const FORM = "application/x-www-form-urlencoded";
const SCOPE = "openid profile email";
/** Sign-ins per account after its first, within the per-account limit (10 per 15 min) with one to spare. */
const RETURNING_PER_USER = 8;

export interface LoginRun {
  logins: number;
  failed: number;
  seconds: number;
  perSecond: number;
  cpuSeconds: number;
  cpuMsPerLogin: number;
  /** Prisma statements Porta sent per sign-in (everything it sent meanwhile, divided). */
  statementsPerLogin: number;
  /** Client-side milliseconds per sign-in, by step. */
  stepMs: Record<string, number>;
}

export interface Argon2Run {
  verifications: number;
  seconds: number;
  perSecond: number;
  cpuSeconds: number;
  cpuMsPerVerification: number;
  params: { memoryCost: number; timeCost: number; parallelism: number };
}

/** Porta's CPU per step of a returning sign-in, read between the steps of sign-ins made one at a time. */
export interface StepCpu {
  logins: number;
  cpuMs: Record<string, number>;
}

export interface LoginFigures {
  users: number;
  concurrency: number;
  first: LoginRun;
  returning: LoginRun;
  argon2: Argon2Run;
  steps: StepCpu;
  /** The bare provider's own flow (measureBareFlow), when the runner has one. */
  bareSteps?: StepCpu;
}

export interface LoginBenchOptions {
  info: ServerInfo;
  concurrency: number;
  /** Seconds of returning sign-ins, and as many of raw verifications, split into `rounds` alternating rounds. */
  seconds: number;
  rounds: number;
  /** CPU seconds Porta's process has used so far. */
  portaCpuSeconds(): number;
  /** The same to the nanosecond, for the laps of cpuBySteps (a step takes a few ms; clock ticks are 10 ms). */
  portaLapCpuSeconds(): number;
  /** The bare provider, whose own authorization-code flow is measured beside (measureBareFlow); CPU to the nanosecond. */
  bare?: { info: ServerInfo; cpuSeconds(): number };
  /** Runs `work` under a CPU profile of Porta when profiling is on (first round only). */
  profiled<T>(label: string, round: number, work: () => Promise<T>): Promise<T>;
  log(line: string): void;
}

async function statementCount(info: ServerInfo): Promise<number> {
  if (!info.statementsUrl) return NaN;
  return Number(await (await fetch(info.statementsUrl)).text());
}

/** Where signIn adds Porta's CPU per step: only meaningful while no other sign-in runs. */
interface CpuLaps {
  read(): number;
  ms: Record<string, number>;
}

/** A lap timer: each call adds the wall time (and, with `cpu`, the CPU) since the previous call to `step`. */
function lapper(wall: Record<string, number>, cpu?: CpuLaps): (step: string) => void {
  let t = performance.now();
  let c = cpu?.read() ?? 0;
  return (step) => {
    const now = performance.now();
    wall[step] = (wall[step] ?? 0) + now - t;
    t = now;
    if (cpu) {
      const used = cpu.read();
      cpu.ms[step] = (cpu.ms[step] ?? 0) + 1000 * (used - c);
      c = used;
    }
  };
}

/** An authorization request of the bench client for SCOPE with PKCE (S256), and its verifier. */
function authorizationRequest(endpoint: string, clientId: string): { url: URL; verifier: string } {
  const verifier = randomBytes(32).toString("base64url");
  const url = new URL(endpoint);
  url.search = new URLSearchParams({
    client_id: clientId,
    response_type: "code",
    redirect_uri: REDIRECT_URI,
    scope: SCOPE,
    state: randomBytes(8).toString("base64url"),
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
  }).toString();
  return { url, verifier };
}

/** Redeems `code` at `tokenEndpoint` as the bench client (client_secret_basic); throws unless an ID token comes back. */
async function redeemCode(info: ServerInfo, tokenEndpoint: string, code: string, verifier: string): Promise<void> {
  const token = await fetch(tokenEndpoint, {
    method: "POST",
    headers: {
      authorization: "Basic " + Buffer.from(`${encodeURIComponent(info.clientId)}:${encodeURIComponent(info.secret)}`).toString("base64"),
      "content-type": FORM,
    },
    body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, code_verifier: verifier }),
  });
  const body = (await token.json()) as { id_token?: string; error?: string };
  if (!token.ok || !body.id_token) throw new Error(`code exchange at ${tokenEndpoint} answered ${token.status} ${body.error}`);
}

/** One sign-in of account `user` from client address `ip`, in a browser of its own; returns whether consent was asked. */
async function signIn(info: ServerInfo, user: number, password: string, ip: string, steps: Record<string, number>, cpu?: CpuLaps): Promise<boolean> {
  const go = cookieClient();
  const headers = { "x-forwarded-for": ip };
  const lap = lapper(steps, cpu);
  const { url: authorize, verifier } = authorizationRequest(`${info.issuer}/auth/authorize`, info.clientId);
  const started = await go(authorize.href, { headers });
  await started.arrayBuffer();
  const location = started.headers.get("location");
  if (started.status !== 303 || !location) throw new Error(`authorize answered ${started.status}`);
  lap("authorize");
  const page = new URL(location, authorize).href;
  const pageRes = await go(page, { headers });
  const html = await pageRes.text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  if (pageRes.status !== 200 || !csrf) throw new Error(`login page answered ${pageRes.status}`);
  lap("page");
  let res = await go(page, { method: "POST", headers: { ...headers, "content-type": FORM }, body: new URLSearchParams({ csrf, email: loginEmail(user), password }) });
  if (res.status !== 302 && res.status !== 303) throw new Error(`password POST answered ${res.status}`);
  lap("password");
  let at = page;
  let code: string | null = null;
  let consented = false;
  for (let hop = 0; hop < 8 && !code; hop++) {
    if (res.status === 302 || res.status === 303) {
      await res.arrayBuffer();
      const next = new URL(res.headers.get("location") ?? "", at).href;
      if (next.startsWith(REDIRECT_URI)) {
        code = new URL(next).searchParams.get("code");
        if (!code) throw new Error(`redirected without a code: ${next}`);
        break;
      }
      at = next;
      res = await go(at, { headers });
    } else if (res.status === 200 && !consented) {
      const consentCsrf = /name="csrf" value="([^"]+)"/.exec(await res.text())?.[1];
      if (!consentCsrf) throw new Error("the consent page has no csrf field");
      consented = true;
      at = `${at}/consent`;
      res = await go(at, { method: "POST", headers: { ...headers, "content-type": FORM }, body: new URLSearchParams({ csrf: consentCsrf, decision: "allow" }) });
    } else {
      throw new Error(`unexpected ${res.status} at ${at}`);
    }
  }
  if (!code) throw new Error("no code after 8 hops");
  lap(consented ? "resume+consent" : "resume");
  await redeemCode(info, `${info.issuer}/auth/token`, code, verifier);
  lap("token");
  return consented;
}

/**
 * Sign-ins, `concurrency` at a time, until `untilSeconds` have passed or `accounts` has no account
 * left. Each failure is counted and the first one logged; a run with failures is reported as such.
 */
async function run(options: LoginBenchOptions, accounts: () => number | null, untilSeconds: number, nextIp: () => string): Promise<LoginRun> {
  const { info } = options;
  const password = info.loginUsers!.password;
  const steps: Record<string, number> = {};
  const statementsBefore = await statementCount(info);
  const cpuBefore = options.portaCpuSeconds();
  const started = performance.now();
  const deadline = started + untilSeconds * 1000;
  let logins = 0;
  let failed = 0;
  let lastDone = started;
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (performance.now() < deadline) {
        const user = accounts();
        if (user === null) return;
        try {
          await signIn(info, user, password, nextIp(), steps);
          logins++;
          lastDone = performance.now();
        } catch (error) {
          if (failed++ === 0) options.log(`  a sign-in failed: ${String(error)}`);
        }
      }
    }),
  );
  const cpuSeconds = options.portaCpuSeconds() - cpuBefore;
  const statements = (await statementCount(info)) - statementsBefore;
  const seconds = (lastDone - started) / 1000;
  return {
    logins,
    failed,
    seconds,
    perSecond: logins / seconds,
    cpuSeconds,
    cpuMsPerLogin: (1000 * cpuSeconds) / logins,
    statementsPerLogin: statements / logins,
    stepMs: Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, v / Math.max(1, logins)])),
  };
}

function pool(parts: LoginRun[]): LoginRun {
  const sum = (pick: (r: LoginRun) => number) => parts.reduce((n, r) => n + pick(r), 0);
  const logins = sum((r) => r.logins);
  const seconds = sum((r) => r.seconds);
  const cpuSeconds = sum((r) => r.cpuSeconds);
  const stepMs: Record<string, number> = {};
  for (const r of parts) for (const [k, v] of Object.entries(r.stepMs)) stepMs[k] = (stepMs[k] ?? 0) + (v * r.logins) / logins;
  return {
    logins,
    failed: sum((r) => r.failed),
    seconds,
    perSecond: logins / seconds,
    cpuSeconds,
    cpuMsPerLogin: (1000 * cpuSeconds) / logins,
    statementsPerLogin: sum((r) => r.statementsPerLogin * r.logins) / logins,
    stepMs,
  };
}

function rawArgon2(concurrency: number, seconds: number): Promise<Argon2Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "bench/argon2-raw.ts"], {
      env: { ...process.env, ARGON2_CONCURRENCY: String(concurrency), ARGON2_SECONDS: String(seconds) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => (out += chunk));
    child.once("error", reject);
    child.once("exit", (code) => {
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (code !== 0 || !line) reject(new Error(`argon2-raw exited with ${code}`));
      else resolve(JSON.parse(line) as Argon2Run);
    });
  });
}

/** Returning sign-ins made one at a time, so that Porta's CPU between two steps is that step's. */
const SERIAL_LOGINS = 100;

async function cpuBySteps(options: LoginBenchOptions, accounts: () => number, nextIp: () => string): Promise<StepCpu> {
  const cpu: CpuLaps = { read: () => options.portaLapCpuSeconds(), ms: {} };
  const wall: Record<string, number> = {};
  for (let i = 0; i < SERIAL_LOGINS; i++) await signIn(options.info, accounts(), options.info.loginUsers!.password, nextIp(), wall, cpu);
  return { logins: SERIAL_LOGINS, cpuMs: Object.fromEntries(Object.entries(cpu.ms).map(([step, ms]) => [step, ms / SERIAL_LOGINS])) };
}

/**
 * The engine's own flow, for the floor under a sign-in's cost: authorize → the login that the
 * bare provider's stub records at a GET of the interaction (no page, no password) → resume →
 * the consent the stub records → resume → code exchange, one flow at a time in a new browser
 * each, the bare provider's CPU read between steps. It has one hop more than Porta's returning
 * sign-in (whose consent is remembered), so it slightly overstates the floor.
 */
export async function measureBareFlow(info: ServerInfo, cpuSeconds: () => number, flows = SERIAL_LOGINS): Promise<StepCpu> {
  const cpu: CpuLaps = { read: cpuSeconds, ms: {} };
  for (let i = 0; i < flows; i++) {
    const go = cookieClient();
    const lap = lapper({}, cpu);
    const { url: authorize, verifier } = authorizationRequest(`${info.issuer}/auth`, info.clientId);
    let res = await go(authorize.href);
    await res.arrayBuffer();
    lap("authorize");
    let code: string | null = null;
    let at = authorize.href;
    for (let hop = 0; hop < 8 && !code; hop++) {
      const location = res.headers.get("location");
      if ((res.status !== 302 && res.status !== 303) || !location) throw new Error(`bare flow: ${res.status} at ${at}`);
      const next = new URL(location, at).href;
      if (next.startsWith(REDIRECT_URI)) {
        code = new URL(next).searchParams.get("code");
        if (!code) throw new Error(`bare flow redirected without a code: ${next}`);
        break;
      }
      at = next;
      res = await go(at);
      await res.arrayBuffer();
      lap(new URL(at).pathname.startsWith("/interaction/") ? "interaction (stub)" : "resume");
    }
    if (!code) throw new Error("bare flow: no code after 8 hops");
    await redeemCode(info, `${info.issuer}/token`, code, verifier);
    lap("token");
  }
  return { logins: flows, cpuMs: Object.fromEntries(Object.entries(cpu.ms).map(([step, v]) => [step, v / flows])) };
}

export async function measureLogins(options: LoginBenchOptions): Promise<LoginFigures> {
  const users = options.info.loginUsers?.count ?? 0;
  if (users === 0) throw new Error("Porta seeded no accounts for the password-login benchmark (SEED_LOGIN_USERS)");
  let ip = 0;
  // A distinct client address per sign-in: 10.0.0.1, 10.0.0.2, …
  const nextIp = () => {
    ip++;
    return `10.${(ip >> 16) & 255}.${(ip >> 8) & 255}.${ip & 255}`;
  };
  let firstNext = 0;
  options.log(`  first sign-in of each of ${users} accounts (consent asked)…`);
  const first = await run(options, () => (firstNext < users ? firstNext++ : null), 3_600, nextIp);
  if (first.failed > 0) throw new Error(`${first.failed} first sign-ins failed`);

  let returningNext = 0;
  const returning = () => {
    if (returningNext >= users * RETURNING_PER_USER) throw new Error(`every account signed in ${RETURNING_PER_USER + 1} times; raise BENCH_LOGIN_USERS`);
    return returningNext++ % users;
  };
  // A short warm-up, then ABBA rounds: logins, raw, raw, logins, … so that drift hits both alike.
  await run(options, returning, 1, nextIp);
  const steps = await cpuBySteps(options, returning, nextIp);
  const bareSteps = options.bare ? await measureBareFlow(options.bare.info, options.bare.cpuSeconds) : undefined;
  const slice = Math.max(2, options.seconds / options.rounds);
  const logins: LoginRun[] = [];
  const raws: Argon2Run[] = [];
  for (let round = 0; round < options.rounds; round++) {
    const measureLogin = async () => logins.push(await options.profiled("password-login", round, () => run(options, returning, slice, nextIp)));
    const measureRaw = async () => raws.push(await rawArgon2(options.concurrency, slice));
    if (round % 2 === 0) {
      await measureLogin();
      await measureRaw();
    } else {
      await measureRaw();
      await measureLogin();
    }
  }
  const verifications = raws.reduce((n, r) => n + r.verifications, 0);
  const rawSeconds = raws.reduce((n, r) => n + r.seconds, 0);
  const rawCpu = raws.reduce((n, r) => n + r.cpuSeconds, 0);
  return {
    users,
    concurrency: options.concurrency,
    first,
    returning: pool(logins),
    steps,
    ...(bareSteps ? { bareSteps } : {}),
    argon2: {
      verifications,
      seconds: rawSeconds,
      perSecond: verifications / rawSeconds,
      cpuSeconds: rawCpu,
      cpuMsPerVerification: (1000 * rawCpu) / verifications,
      params: raws[0]!.params,
    },
  };
}

const total = (steps: StepCpu) => Object.values(steps.cpuMs).reduce((a, b) => a + b, 0);
const fmt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "n/a");

/** The password-login part of a docs/benchmarks.md section. */
export function loginLines(f: LoginFigures): string[] {
  const { first, returning: r, argon2: a } = f;
  const rate = r.perSecond / a.perSecond;
  const cost = a.cpuMsPerVerification / r.cpuMsPerLogin;
  const steps = (run: LoginRun) =>
    Object.entries(run.stepMs)
      .map(([k, v]) => `${k} ${v.toFixed(1)}`)
      .join(", ");
  const failed = (run: LoginRun) => (run.failed > 0 ? ` (${run.failed} failed)` : "");
  return [
    `### Password logins beside raw Argon2id (m=${a.params.memoryCost} KiB, t=${a.params.timeCost}, p=${a.params.parallelism})`,
    "",
    `Full sign-ins over HTTP, ${f.concurrency} at a time, each in a new browser from its own client address (X-Forwarded-For, trusted from loopback only):` +
      " authorize → login page → password POST → consent when asked → redirect with the code → code exchange (client_secret_basic, PKCE)." +
      ` Raw: Porta's own verify function on a hash with Porta's parameters, ${f.concurrency} verifications in flight, in a process of its own; rounds alternate (logins, raw, raw, logins).` +
      ` ${fmt(f.users)} accounts; the first sign-in of each asks for consent, the measured ones are returning sign-ins whose consent is remembered.`,
    "",
    "| Measurement | per second | server CPU ms each | SQL statements each | Porta/raw (rate) | Porta/raw (CPU) | Target | Verdict |",
    "|---|---:|---:|---:|---:|---:|---|---|",
    `| password login, returning user (${fmt(r.logins)} in ${r.seconds.toFixed(1)} s)${failed(r)} | ${r.perSecond.toFixed(1)} | ${r.cpuMsPerLogin.toFixed(1)} | ${r.statementsPerLogin.toFixed(1)} | ${rate.toFixed(2)}× | ${cost.toFixed(2)}× | ≥ 0.9× raw | ${rate >= 0.9 ? "**met**" : "**not met**"} |`,
    `| password login, first sign-in with consent (${fmt(first.logins)} in ${first.seconds.toFixed(1)} s)${failed(first)} | ${first.perSecond.toFixed(1)} | ${first.cpuMsPerLogin.toFixed(1)} | ${first.statementsPerLogin.toFixed(1)} | ${(first.perSecond / a.perSecond).toFixed(2)}× | ${(a.cpuMsPerVerification / first.cpuMsPerLogin).toFixed(2)}× | — | |`,
    `| raw Argon2id verifications (${fmt(a.verifications)} in ${a.seconds.toFixed(1)} s) | ${a.perSecond.toFixed(1)} | ${a.cpuMsPerVerification.toFixed(1)} | — | 1× | 1× | | |`,
    "",
    `Client-side ms per returning sign-in by step: ${steps(r)}; first sign-in: ${steps(first)}. CPU ratio: raw CPU per verification / Porta's CPU per login (all threads of each process, so Argon2's thread-pool time counts on both sides).`,
    "",
    `Porta's CPU ms per returning sign-in by step, ${f.steps.logins} sign-ins one at a time (the CPU of the process's threads read between steps): ` +
      Object.entries(f.steps.cpuMs)
        .map(([k, v]) => `${k} ${v.toFixed(1)}`)
        .join(", ") +
      `; total ${total(f.steps).toFixed(1)}, of which one Argon2id verification is ~${a.cpuMsPerVerification.toFixed(1)} (raw, above) in the password step.`,
    ...(f.bareSteps
      ? [
          "",
          `The bare provider's own flow, ${f.bareSteps.logins} one at a time (authorize → login recorded by a stub, with no page and no password → resume → consent recorded by the stub → resume → code exchange), its CPU ms by step: ` +
            Object.entries(f.bareSteps.cpuMs)
              .map(([k, v]) => `${k} ${v.toFixed(1)}`)
              .join(", ") +
            `; total ${total(f.bareSteps).toFixed(1)}. A sign-in that cost one Argon2id verification plus exactly this would reach ${(a.cpuMsPerVerification / (a.cpuMsPerVerification + total(f.bareSteps))).toFixed(2)}× raw by CPU; Porta's sign-in costs ${(total(f.steps) - a.cpuMsPerVerification).toFixed(1)} ms besides Argon2id (one at a time), ${((total(f.steps) - a.cpuMsPerVerification) / total(f.bareSteps)).toFixed(1)}× the engine's flow.`,
        ]
      : []),
  ];
}
