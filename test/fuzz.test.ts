import { mkdirSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { obtainAdminTokens } from "./support/admin-api";
import { addClientSecret, createClient, createOrganization, createUser } from "./support/factories";
import { startTestPorta, type TestPorta } from "./support/porta";
import { createTenant, openLoginPage, PASSWORD, passwordLoginToCallback } from "./login/helpers";
import { csrfOf, type TestBrowser } from "./support/browser";
import { DEVICE_CODE_GRANT } from "~/schemas/client";

/**
 * Hostile input against every Admin API operation (read from the OpenAPI document the server
 * publishes), every protocol endpoint (with and without a signed-in browser session) and the
 * login pages: a few thousand requests, each of which must answer below 500, with the area's
 * JSON error body on every 4xx of the API, and the protocol's JSON error or the organization's
 * own page on every 4xx of the protocol, while the process stays up. Bodies include JSON nested
 * thousands deep. Values come from a seeded generator, so a failure repeats.
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
/** JSON nested 20,000 and 5,000 deep, in the open and inside a field (the limit itself: test/bad-input.test.ts). */
const DEEP_BODIES = ["[".repeat(20_000) + "]".repeat(20_000), '{"a":'.repeat(5_000) + "1" + "}".repeat(5_000), `{"name":${"[".repeat(20_000)}${"]".repeat(20_000)}}`];
const HOSTILE_VALUES: unknown[] = [...HOSTILE_STRINGS, -1, 0, 1e308, -1e308, 3.5, true, false, null, [], {}, [null], { a: "\u0000" }, ["\ud800"]];

/** The protocol's form endpoints and their parameters (oidc/edge/mount.ts PROTOCOL_PATH), `token` being the token endpoint's alias. */
const PROTOCOL_FORMS: Array<{ path: string; params: string[] }> = [
  { path: "auth/token", params: ["grant_type", "code", "redirect_uri", "client_id", "client_secret", "code_verifier", "refresh_token", "scope", "resource", "device_code"] },
  { path: "token", params: ["grant_type", "client_id", "client_secret", "scope", "device_code"] },
  { path: "token/introspection", params: ["token", "token_type_hint", "client_id", "client_secret"] },
  { path: "token/revocation", params: ["token", "token_type_hint", "client_id", "client_secret"] },
  { path: "auth/par", params: ["client_id", "response_type", "redirect_uri", "scope", "code_challenge", "request", "client_secret"] },
  { path: "auth/authorize", params: ["client_id", "response_type", "redirect_uri", "scope", "state", "code_challenge", "prompt"] },
  { path: "me", params: ["access_token", "scope"] },
  { path: "session/end", params: ["id_token_hint", "post_logout_redirect_uri", "state", "client_id"] },
  { path: "session/end/confirm", params: ["xsrf", "logout"] },
  { path: "device", params: ["xsrf", "user_code", "confirm", "abort"] },
  { path: "device/auth", params: ["client_id", "client_secret", "scope", "resource"] },
];
/** The protocol's GET endpoints; `{uid}` becomes a hostile or unknown uid. */
const PROTOCOL_GETS: Array<{ path: string; params: string[] }> = [
  { path: "auth/authorize", params: ["client_id", "response_type", "redirect_uri", "scope", "state", "nonce", "code_challenge", "code_challenge_method", "prompt", "login_hint", "ui_locales", "request", "request_uri", "max_age", "claims"] },
  { path: "auth/authorize/{uid}", params: ["x"] },
  { path: ".well-known/openid-configuration", params: ["x"] },
  { path: ".well-known/jwks", params: ["x"] },
  { path: "me", params: ["access_token"] },
  { path: "session/end", params: ["id_token_hint", "post_logout_redirect_uri", "state", "ui_locales"] },
  { path: "session/end/success", params: ["state"] },
  { path: "device", params: ["user_code"] },
  { path: "device/auth", params: ["client_id"] },
  { path: "device/{uid}", params: ["x"] },
];

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

/**
 * `protocol` endpoints answer a 4xx with their JSON error, or, where a person's browser is
 * answered, with the organization's own page (`brand` is the organization's name it shows).
 */
function judge(label: string, res: Raw, area: "admin" | "protocol" | "page", brand?: string) {
  requests += 1;
  if (res.status >= 500) failures.push(`${label} → ${res.status} ${res.body.slice(0, 200)}`);
  // Node itself refuses a request line or headers beyond its limit, before any of Porta's code.
  if (res.status >= 400 && area !== "page" && res.status !== 431) {
    let ok: boolean;
    try {
      const body = JSON.parse(res.body) as { error?: unknown };
      ok = area === "admin" ? typeof (body.error as { code?: unknown } | undefined)?.code === "string" : typeof body.error === "string";
    } catch {
      ok = area === "protocol" && brand !== undefined && /^text\/html/.test(res.contentType) && res.body.includes(brand);
    }
    // A 401 from the protocol's bearer endpoints may carry its error in WWW-Authenticate only.
    if (!ok && !(area === "protocol" && res.status === 401 && res.body === "")) failures.push(`${label} → ${res.status} without a JSON error body or the organization's page: ${res.body.slice(0, 120)}`);
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
      // JSON nested past any limit, where a recursive walk of the body would overflow the stack.
      if (op.requestBody?.content["application/json"]) {
        const concrete = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent((ids[/org/i.test(name) ? "organization" : /client/i.test(name) ? "client" : /user/i.test(name) ? "user" : "application"] ?? [])[0] ?? "x"));
        for (const body of DEEP_BODIES) {
          judge(`${op.operationId} ${method} ${concrete} nested ${body.slice(0, 12)}…`, await send(porta, method, concrete, { authorization: `Bearer ${token}`, "content-type": "application/json" }, body), "admin");
        }
      }
    }
    expect(failures).toEqual([]);
  }, 240_000);

  /**
   * One round over every protocol path (oidc/edge/mount.ts PROTOCOL_PATH): hostile forms and queries,
   * other methods, unknown uids; with `browser`, as that signed-in browser (its cookies, and the
   * device page's real form secret in some of the posts).
   */
  async function protocolRound(slug: string, brand: string, client: string, browser?: TestBrowser, xsrf?: string) {
    const value = (name: string) =>
      name === "client_id" && next() < 0.4
        ? client
        : name === "grant_type" && next() < 0.5
          ? pick(["client_credentials", "authorization_code", "refresh_token", DEVICE_CODE_GRANT])
          : name === "xsrf" && xsrf && next() < 0.6
            ? xsrf
            : name === "user_code" && next() < 0.3
              ? pick(["BCDF-GHJK", "bcdfghjk", "ABCD"])
              : name === "confirm" || name === "abort" || name === "logout"
                ? pick(["yes", "", "1"])
                : pick(HOSTILE_VALUES);
    const cookie = (path: string): Record<string, string> => (browser ? { cookie: browser.cookieHeader(`${porta.baseUrl}${path}`) } : {});
    for (const { path, params } of PROTOCOL_FORMS) {
      const form = params.filter(() => next() < 0.6).map((name) => `${name}=${component(value(name))}`).join("&");
      const target = `/${pick([slug, slug.toUpperCase()])}/${path}`;
      const headers: Record<string, string> = { "content-type": pick(["application/x-www-form-urlencoded", "application/x-www-form-urlencoded", "application/json", "text/plain"]), ...cookie(target) };
      if (next() < 0.3) headers.authorization = `Basic ${Buffer.from(`${client}:${pick(HOSTILE_STRINGS.filter((s) => s.length < 100))}`).toString("base64")}`;
      judge(`POST ${path} ${browser ? "(signed in) " : ""}${form.slice(0, 120)}`, await send(porta, "POST", target, headers, form), "protocol", brand);
    }
    for (const { path, params } of PROTOCOL_GETS) {
      // A uid is never empty: "/device/" is not a protocol path but a page address.
      const concrete = path.replace("{uid}", () => component(pick([...HOSTILE_STRINGS.filter((s) => s.length < 100 && s !== ""), "uid-nobody-has"])));
      const query = params.filter(() => next() < 0.5).map((name) => `${name}=${component(value(name))}`).join("&");
      const target = `/${slug}/${concrete}${query ? `?${query}` : ""}`;
      const headers: Record<string, string> = { ...cookie(target), ...(next() < 0.3 ? { authorization: `Bearer ${pick(HOSTILE_STRINGS.filter((s) => s.length < 100 && /^[\x20-\x7e]*$/.test(s)))}` } : {}) };
      if (next() < 0.5) headers.accept = pick(["text/html", "application/json", "*/*"]);
      judge(`GET ${concrete}?${query.slice(0, 120)} ${browser ? "(signed in)" : ""}`, await send(porta, "GET", target, headers), "protocol", brand);
    }
    // A method the endpoint does not take.
    const { path } = pick([...PROTOCOL_FORMS, ...PROTOCOL_GETS]);
    const method = pick(["PUT", "DELETE", "PATCH", "OPTIONS", "GET", "POST"]);
    const target = `/${slug}/${path.replace("{uid}", "x")}`;
    judge(`${method} ${path}`, await send(porta, method, target, { "content-type": "application/x-www-form-urlencoded", ...cookie(target) }, method === "GET" ? undefined : "a=b"), "protocol", brand);
  }

  it("every protocol endpoint answers below 500 with an OAuth error body or the organization's page", async () => {
    const [orgId, slug] = ids.organization!;
    const org = await porta.services.db.prisma.organization.findUniqueOrThrow({ where: { id: orgId } });
    for (let round = 0; round < 30; round++) await protocolRound(slug!, org.name, ids.client![0]!);
    expect(failures).toEqual([]);
  }, 180_000);

  it("every protocol endpoint answers a signed-in browser below 500 with an OAuth error body or the organization's page", async () => {
    const tenant = await createTenant(porta, { name: "Fuzz Signed In", client: { skipConsent: true, grantTypes: ["authorization_code", "refresh_token", DEVICE_CODE_GRANT] } });
    await createUser(porta.services.db.prisma, tenant.org.id, { email: "signed-in@example.com", password: PASSWORD });
    const page = await openLoginPage(tenant);
    await passwordLoginToCallback(page, "signed-in@example.com", PASSWORD, tenant.redirectUri);
    expect(page.browser.cookie("_session")).toBeTruthy();
    // The code entry page puts a real form secret into the session: some posts carry it.
    const devicePage = await page.browser.get(`${tenant.issuer}/device`);
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(await devicePage.text())?.[1];
    expect(xsrf).toBeTruthy();
    for (let round = 0; round < 10; round++) await protocolRound(tenant.org.slug, tenant.org.name, tenant.client.id, page.browser, xsrf);
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
