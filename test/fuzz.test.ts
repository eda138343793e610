import { mkdirSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { obtainAdminTokens } from "./support/admin-api";
import { addClientSecret, createClient, createOrganization, createUser } from "./support/factories";
import { startTestPorta, type TestPorta } from "./support/porta";
import { createTenant, openLoginPage } from "./login/helpers";
import { csrfOf } from "./support/browser";

/**
 * Hostile input against every Admin API operation (read from the OpenAPI document the server
 * publishes), the protocol endpoints and the login pages: a few thousand requests, each of which
 * must answer below 500, with the area's JSON error body on every 4xx of the API and protocol,
 * while the process stays up. Values come from a seeded generator, so a failure repeats.
 */

/** mulberry32: small, seeded, good enough to pick cases reproducibly. */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const next = random(SEED);
const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!;

const HOSTILE_STRINGS = [
  "\u0000",
  "a\u0000b",
  "\ud800",
  "x\udc00y",
  "",
  " ",
  "a".repeat(70_000),
  "../../etc/passwd",
  "<script>alert(1)</script>",
  "' OR 1=1 --",
  "\r\nX-Injected: 1",
  "%00",
  "%E0%A4%A",
  "\u202eevil",
  "🙂".repeat(50),
  "null",
  "-1",
  "1e309",
  "00000000-0000-0000-0000-000000000000",
  "ffffffff-ffff-ffff-ffff-ffffffffffff",
  "javascript:alert(1)",
  "http://169.254.169.254/latest/meta-data",
];
const HOSTILE_VALUES: unknown[] = [...HOSTILE_STRINGS, -1, 0, 1e308, -1e308, 3.5, true, false, null, [], {}, [null], { a: "\u0000" }, ["\ud800"]];

interface Raw {
  status: number;
  contentType: string;
  body: string;
}

function send(porta: TestPorta, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Raw> {
  const url = new URL(porta.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers["content-type"] ?? ""), body: text }));
    });
    req.on("error", (error: NodeJS.ErrnoException) => {
      // A request line or headers beyond Node's limit (16 kB) are refused with 431 and the
      // connection is closed, possibly before this client has read the answer.
      if ((error.code === "ECONNRESET" || error.code === "EPIPE") && path.length > 16_000) resolve({ status: 431, contentType: "", body: "" });
      else reject(new Error(`${method} ${path.slice(0, 200)} (${body?.length ?? 0} bytes): ${error.code ?? error.message}`));
    });
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** Percent-encoding that also writes an unpaired surrogate (as the CESU-8 bytes a sloppy client sends). */
function pct(text: string): string {
  let out = "";
  for (const char of text) {
    const code = char.codePointAt(0)!;
    out += code >= 0xd800 && code <= 0xdfff ? `%ED%${(0xa0 + ((code >> 6) & 0x1f)).toString(16).toUpperCase()}%${(0x80 + (code & 0x3f)).toString(16).toUpperCase()}` : encodeURIComponent(char);
  }
  return out;
}

/** A URL component: hostile strings percent-encoded, sometimes raw (malformed on purpose). */
function component(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return next() < 0.15 ? pct(text).replace(/%25/g, "%") : pct(text);
}

interface OpenApiOperation {
  operationId: string;
  parameters?: Array<{ name: string; in: string }>;
  requestBody?: { content: Record<string, { schema?: { properties?: Record<string, unknown> } }> };
}

const failures: string[] = [];
let requests = 0;

function judge(label: string, res: Raw, area: "admin" | "protocol" | "page") {
  requests += 1;
  if (res.status >= 500) failures.push(`${label} → ${res.status} ${res.body.slice(0, 200)}`);
  if (res.status >= 400 && area !== "page") {
    let ok: boolean;
    try {
      const body = JSON.parse(res.body) as { error?: unknown };
      ok = area === "admin" ? typeof (body.error as { code?: unknown } | undefined)?.code === "string" : typeof body.error === "string";
    } catch {
      ok = false;
    }
    // A 401 from the protocol's bearer endpoints may carry its error in WWW-Authenticate only.
    if (!ok && !(area === "protocol" && res.status === 401 && res.body === "")) failures.push(`${label} → ${res.status} without a JSON error body: ${res.body.slice(0, 120)}`);
  }
}

let porta: TestPorta;
let token: string;
const ids: Record<string, string[]> = {};

beforeAll(async () => {
  porta = await startTestPorta();
  token = (await obtainAdminTokens(porta)).accessToken;
  const prisma = porta.services.db.prisma;
  const org = await createOrganization(prisma);
  const { client } = await createClient(prisma, org.id, { grantTypes: ["client_credentials", "authorization_code", "refresh_token"] });
  await addClientSecret(prisma, client.id);
  const user = await createUser(prisma, org.id, { email: `fuzz-${Date.now()}@example.com`, password: "a fuzz password 123" });
  const application = await prisma.application.findFirst({ where: { organizationId: org.id } });
  ids.organization = [org.id, org.slug];
  ids.client = [client.id];
  ids.user = [user.id];
  ids.application = application ? [application.id] : [];
}, 120_000);

afterAll(async () => {
  // Each failure with the request that caused it, for whoever reads a red CI run.
  mkdirSync("test-results", { recursive: true });
  writeFileSync(`test-results/fuzz-failures-${SEED}.txt`, failures.join("\n"));
  await porta?.stop();
});

/** Ids the path may name: a real one of the right kind, a UUID nobody has, or a hostile value. */
function pathValue(name: string): string {
  const kind = /org/i.test(name) ? "organization" : /client/i.test(name) ? "client" : /user/i.test(name) ? "user" : /app/i.test(name) ? "application" : "";
  const real = ids[kind] ?? [];
  const roll = next();
  if (roll < 0.3 && real.length > 0) return encodeURIComponent(pick(real));
  if (roll < 0.5) return "3f1c8f9e-1234-4abc-8def-0123456789ab";
  return component(pick(HOSTILE_VALUES));
}

function hostileBody(schema: { properties?: Record<string, unknown> } | undefined): string {
  const roll = next();
  if (roll < 0.1) return "{not json";
  if (roll < 0.15) return JSON.stringify(pick(HOSTILE_VALUES));
  const fields = Object.keys(schema?.properties ?? {});
  const body: Record<string, unknown> = {};
  for (const field of fields) if (next() < 0.7) body[field] = pick(HOSTILE_VALUES);
  if (next() < 0.2) body[pick(HOSTILE_STRINGS.filter((s) => s.length < 100)) || "x"] = pick(HOSTILE_VALUES);
  // JSON.stringify escapes lone surrogates as \ud800, which JSON.parse restores: the server sees them.
  return JSON.stringify(body);
}

describe("fuzzing with hostile values", () => {
  it("every Admin API operation from the OpenAPI document answers below 500 with a JSON error body", async () => {
    const doc = JSON.parse((await send(porta, "GET", "/api/admin/openapi.json", { authorization: `Bearer ${token}` })).body) as { paths: Record<string, Record<string, OpenApiOperation>> };
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method: method.toUpperCase(), op })));
    expect(operations.length).toBeGreaterThan(90);
    for (const { path, method, op } of operations) {
      for (let round = 0; round < 16; round++) {
        const concrete = path.replace(/\{(\w+)\}/g, (_, name: string) => pathValue(name));
        const queryNames = (op.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
        const query = [...queryNames, ...(next() < 0.2 ? ["unknown"] : [])]
          .filter(() => next() < 0.6)
          .map((name) => `${name}=${component(pick(HOSTILE_VALUES))}`)
          .join("&");
        const target = query ? `${concrete}?${query}` : concrete;
        const json = op.requestBody?.content["application/json"];
        const body = method === "GET" || method === "DELETE" ? undefined : json ? hostileBody(json.schema) : pick(HOSTILE_STRINGS);
        const headers: Record<string, string> = { authorization: `Bearer ${token}` };
        if (body !== undefined) headers["content-type"] = json ? "application/json" : pick(["image/png", "text/plain", "application/json"]);
        if (next() < 0.1) headers["if-match"] = pick(['"v1"', "garbage", '"v-1"', "*"]);
        judge(`${op.operationId} ${method} ${target.slice(0, 160)}`, await send(porta, method, target, headers, body), "admin");
      }
    }
    expect(failures).toEqual([]);
  }, 240_000);

  it("the protocol endpoints answer below 500 with an OAuth error body", async () => {
    const [orgId] = ids.organization!;
    const slug = ids.organization![1]!;
    const client = ids.client![0]!;
    const forms: Array<{ path: string; params: string[] }> = [
      { path: "auth/token", params: ["grant_type", "code", "redirect_uri", "client_id", "client_secret", "code_verifier", "refresh_token", "scope", "resource"] },
      { path: "token/introspection", params: ["token", "token_type_hint", "client_id", "client_secret"] },
      { path: "token/revocation", params: ["token", "token_type_hint", "client_id", "client_secret"] },
      { path: "auth/par", params: ["client_id", "response_type", "redirect_uri", "scope", "code_challenge", "request", "client_secret"] },
    ];
    const gets: Array<{ path: string; params: string[] }> = [
      { path: "auth/authorize", params: ["client_id", "response_type", "redirect_uri", "scope", "state", "nonce", "code_challenge", "code_challenge_method", "prompt", "login_hint", "ui_locales", "request", "request_uri", "max_age", "claims"] },
      { path: ".well-known/openid-configuration", params: ["x"] },
      { path: ".well-known/jwks", params: ["x"] },
      { path: "me", params: ["access_token"] },
      { path: "session/end", params: ["id_token_hint", "post_logout_redirect_uri", "state"] },
    ];
    const value = (name: string) => (name === "client_id" && next() < 0.4 ? client : name === "grant_type" && next() < 0.5 ? pick(["client_credentials", "authorization_code", "refresh_token"]) : pick(HOSTILE_VALUES));
    for (let round = 0; round < 40; round++) {
      for (const { path, params } of forms) {
        const form = params.filter(() => next() < 0.6).map((name) => `${name}=${component(value(name))}`).join("&");
        const headers: Record<string, string> = { "content-type": pick(["application/x-www-form-urlencoded", "application/json", "text/plain"]) };
        if (next() < 0.3) headers.authorization = `Basic ${Buffer.from(`${client}:${pick(HOSTILE_STRINGS.filter((s) => s.length < 100))}`).toString("base64")}`;
        judge(`POST ${path} ${form.slice(0, 120)}`, await send(porta, "POST", `/${pick([slug, slug.toUpperCase()])}/${path}`, headers, form), "protocol");
      }
      for (const { path, params } of gets) {
        const query = params.filter(() => next() < 0.5).map((name) => `${name}=${component(value(name))}`).join("&");
        const headers: Record<string, string> = next() < 0.3 ? { authorization: `Bearer ${pick(HOSTILE_STRINGS.filter((s) => s.length < 100 && /^[\x20-\x7e]*$/.test(s)))}` } : {};
        const res = await send(porta, "GET", `/${slug}/${path}${query ? `?${query}` : ""}`, headers);
        // An authorization error the provider can send back to a verified redirect_uri is a redirect; a page explains the rest.
        judge(`GET ${path}?${query.slice(0, 120)}`, res, path === "auth/authorize" || path === "session/end" ? "page" : "protocol");
      }
    }
    expect(orgId).toBeTruthy();
    expect(failures).toEqual([]);
  }, 180_000);

  it("the login pages answer below 500 to hostile form fields and addresses", async () => {
    const tenant = await createTenant(porta);
    for (let round = 0; round < 25; round++) {
      const page = await openLoginPage(tenant);
      const csrf = next() < 0.7 ? csrfOf(page.html) : String(pick(HOSTILE_STRINGS));
      const base = new URL(page.interactionUrl).pathname;
      for (const suffix of ["", "/magic-link", "/forgot-password", "/reset-password", "/two-factor", "/consent", "/magic-link/verify"]) {
        const form = ["email", "password", "code", "token", "decision", "givenName"].filter(() => next() < 0.7).map((name) => `${name}=${component(pick(HOSTILE_VALUES))}`);
        const body = [`csrf=${pct(csrf)}`, ...form].join("&");
        const headers = { "content-type": pick(["application/x-www-form-urlencoded", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json"]), cookie: page.browser.cookieHeader(page.interactionUrl) };
        judge(`POST ${suffix} ${body.slice(0, 120)}`, await send(porta, "POST", `${base}${suffix}`, headers, body), "page");
      }
      judge(`GET /interaction/<hostile>`, await send(porta, "GET", `/interaction/${component(pick(HOSTILE_VALUES))}`, {}), "page");
      judge(`GET /<hostile>/invitation`, await send(porta, "GET", `/${component(pick(HOSTILE_VALUES))}/invitation?token=${component(pick(HOSTILE_VALUES))}`, {}), "page");
    }
    expect(failures).toEqual([]);
  }, 180_000);

  it("sent a few thousand requests, and the process is still up", async () => {
    expect(requests).toBeGreaterThan(2_000);
    const health = await send(porta, "GET", "/health", {});
    expect(health.status).toBe(200);
    // Every refusal was logged as one JSON line below error level, without a stack.
    const errors = porta.logs.lines.filter((line) => (line.level as number) >= 50);
    expect(errors.map((line) => `${String(line.msg)} ${JSON.stringify(line.err ?? "").slice(0, 200)}`)).toEqual([]);
  });
});
