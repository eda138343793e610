/**
 * Shared by the two benchmark servers: obtains refresh tokens through real authorization-code
 * flows (authorize → interaction finished in-process → resume → token exchange) over HTTP
 * against the server's own loopback address, and prints the one JSON line the runner reads.
 */
import { createHash, randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import type Provider from "oidc-provider";

export const REDIRECT_URI = "https://rp.example.com/cb";
export const FLOW_SCOPE = "openid offline_access profile email";
/** The API resource the bench client is granted: client_credentials with `resource` gets a JWT for it. */
export const BENCH_RESOURCE = { identifier: "https://api.bench.example/orders", scopes: ["orders:read", "orders:write"] } as const;

export interface ServerInfo {
  /** http://127.0.0.1:PORT */
  url: string;
  /** The organization slug ("" for the bare provider, whose issuer is the origin). */
  slug: string;
  issuer: string;
  clientId: string;
  secret: string;
  pid: number;
  /** Unused refresh tokens, each from its own authorization code. */
  refreshTokens: string[];
  /** An access token issued to the user by the first code exchange. */
  userAccessToken?: string;
  seeding: SeedReport;
  /** Porta only, with SEED_ADMIN_LIST_USERS: the organization and admin token of the list benchmark. */
  adminList?: AdminListSeed;
  /** Porta only: GET answers how many Prisma statements Porta has sent since it started (a loopback port of its own). */
  statementsUrl?: string;
  /** Porta only, with SEED_LOGIN_USERS: the accounts of the password-login benchmark (see login.ts). */
  loginUsers?: LoginUsersSeed;
}

export interface LoginUsersSeed {
  /** Accounts `loginEmail(0)` … `loginEmail(count - 1)` of the bench organization, all with `password`. */
  count: number;
  password: string;
}

export const loginEmail = (i: number) => `login-${i}@bench.example.com`;

export interface AdminListSeed {
  organizationId: string;
  users: number;
  seedSeconds: number;
  /** A service-admin's access token from a real authorization-code flow. */
  accessToken: string;
}

export interface SeedReport {
  /** Refresh tokens obtained through full authorization-code flows, and the seconds that took. */
  flows: number;
  flowSeconds: number;
  /** Milliseconds spent per flow step, summed over all flows (seen from the client side). */
  flowSteps: Record<string, number>;
  /** Further tokens minted by cloneRefreshTokens, and the seconds that took. */
  clones: number;
  cloneSeconds: number;
}

export interface FlowOptions {
  authorizationEndpoint: string;
  tokenEndpoint: string;
  clientId: string;
  secret: string;
  count: number;
  concurrency?: number;
  /** Scopes to ask for; FLOW_SCOPE unless given. */
  scope?: string;
  /** Finishes interaction `uid` (login or consent) inside the server and returns the resume URL. */
  finishInteraction(uid: string): Promise<string>;
}

const b64url = (buf: Buffer) => buf.toString("base64url");

/**
 * fetch, once more when a pooled keep-alive socket turns out to be closed already: the server
 * drops idle sockets after 5 s, and seeding between flows can keep it busy for longer. A reset
 * on a stale socket means the request never reached the server, so sending it again is safe.
 */
export async function fetchOnFreshSocket(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code;
    if (code !== "ECONNRESET" && code !== "UND_ERR_SOCKET") throw error;
    return fetch(url, init);
  }
}

/** A cookie jar per flow worker: every cookie is sent on every request (paths do not clash within one worker). */
export function cookieClient() {
  const jar = new Map<string, string>();
  return async (url: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (jar.size > 0) headers.set("cookie", [...jar].map(([k, v]) => `${k}=${v}`).join("; "));
    const res = await fetchOnFreshSocket(url, { ...init, headers, redirect: "manual" });
    for (const line of res.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (!name) continue;
      if (value === "" || /expires=Thu, 01 Jan 1970/i.test(line)) jar.delete(name);
      else jar.set(name, value);
    }
    return res;
  };
}

export interface FlowResult {
  refreshTokens: string[];
  userAccessToken?: string | undefined;
  steps: Record<string, number>;
}

export async function obtainRefreshTokens(options: FlowOptions): Promise<FlowResult> {
  const basic = "Basic " + Buffer.from(`${encodeURIComponent(options.clientId)}:${encodeURIComponent(options.secret)}`).toString("base64");
  const refreshTokens: string[] = [];
  let userAccessToken: string | undefined;
  let remaining = options.count;
  const steps: Record<string, number> = { authorize: 0, interaction: 0, resume: 0, token: 0 };
  async function timed<T>(step: string, work: Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await work;
    } finally {
      steps[step] = (steps[step] ?? 0) + performance.now() - t0;
    }
  }

  async function oneFlow(go: ReturnType<typeof cookieClient>) {
    const verifier = b64url(randomBytes(32));
    const url = new URL(options.authorizationEndpoint);
    url.search = new URLSearchParams({
      client_id: options.clientId,
      response_type: "code",
      redirect_uri: REDIRECT_URI,
      scope: options.scope ?? FLOW_SCOPE,
      // offline_access is honoured only with prompt=consent, so every flow has a consent step.
      prompt: "consent",
      state: b64url(randomBytes(8)),
      code_challenge: b64url(createHash("sha256").update(verifier).digest()),
      code_challenge_method: "S256",
    }).toString();
    let res = await timed("authorize", go(url.href));
    let code: string | undefined;
    for (let step = 0; step < 6 && !code; step++) {
      const location = res.headers.get("location");
      if (res.status !== 303 && res.status !== 302) throw new Error(`authorize: unexpected ${res.status} ${await res.text()}`);
      if (!location) throw new Error("authorize: redirect without location");
      if (location.startsWith(REDIRECT_URI)) {
        const params = new URL(location).searchParams;
        code = params.get("code") ?? undefined;
        if (!code) throw new Error(`authorize: ${params.get("error")} ${params.get("error_description")}`);
        break;
      }
      const uid = new URL(location, url).pathname.split("/").pop()!;
      const next = await timed("interaction", options.finishInteraction(uid));
      res = await timed("resume", go(next));
    }
    if (!code) throw new Error("authorize: no code after 6 redirects");
    const { tokenRes, body } = await timed(
      "token",
      (async () => {
        const tokenRes = await fetchOnFreshSocket(options.tokenEndpoint, {
          method: "POST",
          headers: { authorization: basic, "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, code_verifier: verifier }),
        });
        const body = (await tokenRes.json()) as { refresh_token?: string; access_token?: string; error?: string; error_description?: string };
        return { tokenRes, body };
      })(),
    );
    if (!tokenRes.ok || !body.refresh_token) throw new Error(`code exchange: ${tokenRes.status} ${body.error} ${body.error_description}`);
    refreshTokens.push(body.refresh_token);
    userAccessToken ??= body.access_token;
  }

  const workers = Array.from({ length: Math.max(1, Math.min(options.concurrency ?? 4, options.count)) }, async () => {
    const go = cookieClient();
    while (remaining > 0) {
      remaining--;
      await oneFlow(go);
    }
  });
  await Promise.all(workers);
  return { refreshTokens, userAccessToken, steps };
}

/**
 * Further refresh tokens for the pool without a full flow each: for every source token (issued
 * by a real code exchange) the provider's own RefreshToken model makes siblings with the same
 * fields oidc-provider copies when it rotates a token, saved through the server's own adapter
 * (PostgreSQL for Porta, memory for the bare provider). Each is a distinct, unused token of
 * the same grant, account and session.
 */
export async function cloneRefreshTokens(provider: Provider, sources: string[], count: number, concurrency = 8): Promise<string[]> {
  if (count <= 0) return [];
  if (sources.length === 0) throw new Error("cloning needs at least one refresh token from a real flow");
  const originals = await Promise.all(
    sources.map(async (value) => {
      const token = await provider.RefreshToken.find(value);
      if (!token) throw new Error("a seeded refresh token was not found");
      const client = await provider.Client.find(token.clientId!);
      if (!client) throw new Error("the seeded token's client was not found");
      return { token, client };
    }),
  );
  const clones: string[] = [];
  let next = 0;
  const workers = Array.from({ length: concurrency }, async () => {
    while (next < count) {
      const { token, client } = originals[next++ % originals.length]!;
      const sibling = new provider.RefreshToken({
        accountId: token.accountId,
        acr: token.acr,
        amr: token.amr,
        authTime: token.authTime,
        claims: token.claims,
        client,
        expiresWithSession: token.expiresWithSession,
        iiat: token.iiat,
        grantId: token.grantId!,
        gty: token.gty!,
        nonce: token.nonce,
        resource: token.resource,
        rotations: token.rotations,
        scope: token.scope!,
        sessionUid: token.sessionUid,
        sid: token.sid,
        rar: token.rar,
        "x5t#S256": token["x5t#S256"],
        jkt: token.jkt,
        attestationJkt: token.attestationJkt,
      });
      clones.push(await sibling.save());
    }
  });
  await Promise.all(workers);
  return clones;
}

/**
 * The refresh-token pool of a server: `flows` tokens from real authorization-code flows, the
 * rest (up to `count`) cloned from them (see cloneRefreshTokens).
 */
export async function seedRefreshPool(
  provider: Provider,
  options: FlowOptions & { flows: number },
): Promise<{ refreshTokens: string[]; userAccessToken?: string | undefined; report: SeedReport }> {
  const report: SeedReport = { flows: 0, flowSeconds: 0, flowSteps: {}, clones: 0, cloneSeconds: 0 };
  if (options.count <= 0) return { refreshTokens: [], report };
  const flows = Math.max(1, Math.min(options.flows, options.count));
  let t0 = performance.now();
  const viaFlows = await obtainRefreshTokens({ ...options, count: flows });
  report.flows = viaFlows.refreshTokens.length;
  report.flowSeconds = (performance.now() - t0) / 1000;
  report.flowSteps = viaFlows.steps;
  t0 = performance.now();
  const clones = await cloneRefreshTokens(provider, viaFlows.refreshTokens, options.count - flows);
  report.clones = clones.length;
  report.cloneSeconds = (performance.now() - t0) / 1000;
  return { refreshTokens: [...viaFlows.refreshTokens, ...clones], userAccessToken: viaFlows.userAccessToken, report };
}

/** The runner reads the first stdout line that is a JSON object. */
export function announce(info: ServerInfo) {
  process.stdout.write(JSON.stringify(info) + "\n");
}

/** Stops the server on SIGTERM/SIGINT (the runner sends SIGTERM by PID). */
export function onStop(stop: () => Promise<void>) {
  let stopping = false;
  const handler = () => {
    if (stopping) return;
    stopping = true;
    const force = setTimeout(() => process.exit(0), 5_000);
    force.unref();
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`stop failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", handler);
  process.on("SIGINT", handler);
}

/**
 * With BENCH_PROFILE_DIR set, SIGUSR2 toggles a CPU profile of this process: the first signal
 * starts it, the next one writes `${BENCH_PROFILE_DIR}/<label>.cpuprofile`, where the label is
 * read from `${BENCH_PROFILE_DIR}/label` (the runner writes it before the signal).
 */
/**
 * Runs `work` under a CPU profile of the server `pid` (which called profileOnSignal), written as
 * <BENCH_PROFILE_DIR>/<name>-<label>.cpuprofile; without BENCH_PROFILE_DIR it only runs `work`.
 */
export async function underProfile<T>(pid: number, label: string, work: () => Promise<T>): Promise<T> {
  const dir = process.env.BENCH_PROFILE_DIR;
  if (!dir) return work();
  const { writeFileSync } = await import("node:fs");
  writeFileSync(`${dir}/label`, label);
  process.kill(pid, "SIGUSR2");
  await new Promise((resolve) => setTimeout(resolve, 300));
  try {
    return await work();
  } finally {
    process.kill(pid, "SIGUSR2");
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

export async function profileOnSignal(name: string) {
  const dir = process.env.BENCH_PROFILE_DIR;
  if (!dir) return;
  const { Session } = await import("node:inspector/promises");
  const { readFileSync, writeFileSync } = await import("node:fs");
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 200 });
  let running = false;
  let busy = Promise.resolve();
  process.on("SIGUSR2", () => {
    busy = busy.then(async () => {
      if (!running) {
        await session.post("Profiler.start");
        running = true;
        return;
      }
      const { profile } = await session.post("Profiler.stop");
      running = false;
      let label = "profile";
      try {
        label = readFileSync(`${dir}/label`, "utf8").trim() || label;
      } catch {
        // no label written
      }
      writeFileSync(`${dir}/${name}-${label}.cpuprofile`, JSON.stringify(profile));
    });
  });
}
