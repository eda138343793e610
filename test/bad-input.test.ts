import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { adminApi, obtainAdminTokens } from "./support/admin-api";
import { csrfOf } from "./support/browser";
import { addClientSecret, createClient, createOrganization } from "./support/factories";
import { startTestPorta, type TestPorta } from "./support/porta";
import { createTenant, openLoginPage } from "./login/helpers";

/**
 * Hostile input found by fuzzing: each answers a clear 4xx with the project's error body,
 * writes nothing, and is logged as one JSON line without a stack.
 */
let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
// Koa (inside oidc-provider) prints an error it was left with, stack and all, with console.error.
const consoleError = vi.spyOn(console, "error");
beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
});
afterAll(async () => {
  consoleError.mockRestore();
  await porta?.stop();
});

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** node:http sends the path exactly as written (fetch would normalize or refuse it). */
function raw(method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const url = new URL(porta.url);
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const json = (r: Raw) => JSON.parse(r.body) as Record<string, unknown>;

/** Every log line is one JSON object; no stack traces; 4xx never at error level. */
function expectCleanLogs() {
  for (const line of porta.logs.lines) {
    expect(JSON.stringify(line)).not.toMatch(/\\n\s+at /);
    if (typeof line.status === "number" && line.status < 500) expect(line.level as number).toBeLessThan(50);
  }
  expect(porta.logs.lines.filter((l) => (l.level as number) >= 50).map((l) => l.msg)).toEqual([]);
  expect(consoleError.mock.calls.map((args) => String(args[0]).slice(0, 200))).toEqual([]);
}

describe("malformed URLs", () => {
  it.each(["/%C0%AF", "/console/%FF", "/acme/%E0%A4%A", "/interaction/%", "/api/admin/organizations/%ZZ", "/%00"])("%s is a 400, never a 500", async (path) => {
    const res = await raw("GET", path);
    expect(res.status).toBe(400);
  });

  it("answers the Admin API's error body under /api/admin and the protocol's under an organization", async () => {
    const admin = await raw("GET", "/api/admin/organizations/%ZZ");
    expect(json(admin)).toMatchObject({ error: { code: "bad_request" } });
    const org = await createOrganization(porta.services.db.prisma);
    const protocol = await raw("GET", `/${org.slug}/auth/authorize?client_id=%E0%A4%A`);
    expect(protocol.status).toBe(400);
    expect(json(protocol)).toMatchObject({ error: "invalid_request" });
  });
});

describe("text PostgreSQL cannot store (NUL, unpaired surrogates)", () => {
  it("in an Admin API JSON body is 422 naming the field, and nothing is written", async () => {
    const before = await porta.services.db.prisma.organization.count();
    const nul = await api.post("/organizations", { name: "Bad\u0000Name", slug: "nul-org" });
    expect(nul.status).toBe(422);
    expect(nul.body).toMatchObject({ error: { code: "validation_failed", details: [{ field: "name" }] } });
    // JSON.stringify would escape a lone surrogate as \ud800: send the raw text.
    const res = await raw("POST", "/api/admin/organizations", { authorization: `Bearer ${(await obtainAdminTokens(porta)).accessToken}`, "content-type": "application/json" }, '{"name":"Bad\\ud800Name","slug":"lone-org"}');
    expect(res.status).toBe(422);
    expect(json(res)).toMatchObject({ error: { code: "validation_failed", details: [{ field: "name" }] } });
    expect(await porta.services.db.prisma.organization.count()).toBe(before);
    expect(await porta.services.db.prisma.auditEntry.count({ where: { eventType: "organization.created" } })).toBe(0);
  });

  it("in an Admin API query value is 422 naming the parameter", async () => {
    const res = await api.get("/organizations?q=a%00b");
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: { code: "validation_failed", details: [{ field: "query.q" }] } });
  });

  it("in a protocol parameter (client_id at authorize and token) is 400 invalid_request", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const authorize = await raw("GET", `/${org.slug}/auth/authorize?client_id=a%00b&response_type=code&scope=openid&redirect_uri=https%3A%2F%2Frp.example%2Fcb`);
    expect(authorize.status).toBe(400);
    const token = await raw("POST", `/${org.slug}/auth/token`, { "content-type": "application/x-www-form-urlencoded" }, "grant_type=client_credentials&client_id=a%00b&client_secret=x");
    expect(token.status).toBe(400);
    expect(json(token)).toMatchObject({ error: "invalid_request" });
  });
});

describe("the device flow without a browser session", () => {
  const form = { "content-type": "application/x-www-form-urlencoded" };

  it("a code posted without the session cookie gets the branded code entry page with 400, and its form works", async () => {
    const org = await createOrganization(porta.services.db.prisma, { name: "Acme Sessionless" });
    for (const body of ["xsrf=x&user_code=ABCD", "xsrf=x&user_code=ABCD&confirm=yes", "xsrf=x&user_code=ABCD&abort=yes", "", "user_code=ABCD"]) {
      const res = await raw("POST", `/${org.slug}/device`, form, body);
      expect(res.status, body).toBe(400);
      expect(res.headers["content-type"], body).toMatch(/^text\/html/);
      expect(res.body, body).toContain("Acme Sessionless");
      expect(res.body, body).toContain("The code could not be checked. Try again.");
      expect(res.body, body).toContain('<form id="op.deviceInputForm"');
    }
    // The page keeps the browser's new session, so the person's next try is checked: a wrong code is named as such.
    const page = await raw("POST", `/${org.slug}/device`, form, "xsrf=x&user_code=ABCD");
    const cookie = [page.headers["set-cookie"] ?? []].flat().map((c) => c.split(";")[0]).join("; ");
    expect(cookie).toContain("_session=");
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(page.body)![1]!;
    const again = await raw("POST", `/${org.slug}/device`, { ...form, cookie }, `xsrf=${xsrf}&user_code=BCDF-GHJK`);
    expect(again.body).toContain("That code is not valid.");
    expectCleanLogs();
  });

  it("a device sign-in resumed without its cookies gets the code entry page with 400", async () => {
    const org = await createOrganization(porta.services.db.prisma, { name: "Acme Resume" });
    for (const path of ["/device/success", "/device/some-uid"]) {
      const res = await raw("GET", `/${org.slug}${path}`);
      expect(res.status, path).toBe(400);
      expect(res.headers["content-type"], path).toMatch(/^text\/html/);
      expect(res.body, path).toContain("Acme Resume");
    }
    expectCleanLogs();
  });

  it("the device authorization endpoint and the other POST-only endpoints answer GET with 405 and a JSON error", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    for (const path of ["/device/auth", "/auth/token", "/token", "/token/introspection", "/token/revocation", "/auth/par", "/session/end/confirm"]) {
      for (const method of ["GET", "PUT", "DELETE"]) {
        const res = await raw(method, `/${org.slug}${path}`);
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(res.headers.allow, `${method} ${path}`).toMatch(/POST/);
        expect(json(res), `${method} ${path}`).toMatchObject({ error: "invalid_request" });
      }
    }
    // A path under a protocol endpoint that no endpoint has is a 404 with the protocol's JSON error.
    for (const [method, path] of [["POST", "/device/x"], ["GET", "/auth/token/x"], ["POST", "/auth/par/x"], ["POST", "/.well-known/jwks"], ["PUT", "/device"]] as const) {
      const res = await raw(method, `/${org.slug}${path}`, form, method === "GET" ? undefined : "a=b");
      expect(res.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
      expect(res.status, `${method} ${path}`).toBeLessThan(500);
      expect(json(res), `${method} ${path}`).toMatchObject({ error: expect.any(String) });
    }
    expectCleanLogs();
  });
});

describe("deeply nested JSON", () => {
  const deepArray = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
  const deepObject = (depth: number) => '{"a":'.repeat(depth) + "1" + "}".repeat(depth);

  it("an Admin API body nested thousands deep is a 400 with the error body, cheaply, and nothing is written", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const { client } = await createClient(porta.services.db.prisma, org.id);
    const token = (await obtainAdminTokens(porta)).accessToken;
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const before = await porta.services.db.prisma.auditEntry.count();
    const cpu = process.cpuUsage();
    let requests = 0;
    for (const [method, path] of [["POST", "/api/admin/organizations"], ["PUT", `/api/admin/clients/${client.id}`], ["POST", "/api/admin/imports/preview"], ["POST", "/api/admin/bulk"]] as const) {
      // The last is a megabyte of brackets (the Admin API's limit), which JSON.parse alone took 1.5 s of CPU to read.
      for (const body of [deepArray(20_000), deepObject(5_000), `{"name":${deepArray(100)}}`, `{"package":${deepObject(200)}}`, deepArray(499_999)]) {
        const res = await raw(method, path, headers, body);
        requests += 1;
        expect(res.status, `${method} ${path} ${body.slice(0, 30)}`).toBe(400);
        expect(json(res), `${method} ${path}`).toMatchObject({ error: { code: "bad_request", message: expect.stringMatching(/nest/) } });
      }
    }
    const used = process.cpuUsage(cpu);
    // Each was refused after one linear pass over the body (before: 0.8-8 s of CPU and a stack overflow each).
    expect((used.user + used.system) / 1000 / requests).toBeLessThan(150);
    expect(await porta.services.db.prisma.auditEntry.count()).toBe(before);
    expectCleanLogs();
  });

  it("a body nested to the limit is still read (a claim value 60 levels deep)", async () => {
    const res = await api.post("/organizations", { name: "Nested but fine", slug: "nested-fine", extra: JSON.parse(deepObject(60)) as unknown });
    // The body is read and checked against the schema, which does not know the field.
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: { code: "validation_failed" } });
  });

  it("a client registration nested thousands deep is 400 invalid_client_metadata", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    await porta.services.db.prisma.organization.update({ where: { id: org.id }, data: { registrationPolicy: { enabled: true, requireInitialAccessToken: false } } });
    for (const body of [`{"redirect_uris":${deepArray(20_000)}}`, `{"client_name":"x","jwks":${deepObject(5_000)}}`]) {
      const res = await raw("POST", `/${org.slug}/register`, { "content-type": "application/json" }, body);
      expect(res.status).toBe(400);
      expect(json(res)).toMatchObject({ error: "invalid_client_metadata" });
    }
    expectCleanLogs();
  });
});

describe("bodies the endpoints do not take", () => {
  it("a form over 56 kB at introspection and revocation is 413", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const { client } = await createClient(porta.services.db.prisma, org.id, { grantTypes: ["client_credentials"] });
    const secret = await addClientSecret(porta.services.db.prisma, client.id);
    const body = `token=${"a".repeat(70_000)}`;
    for (const path of ["token/introspection", "token/revocation", "auth/token"]) {
      const res = await raw("POST", `/${org.slug}/${path}`, { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${Buffer.from(`${client.id}:${secret.value}`).toString("base64")}` }, body);
      expect(res.status, path).toBe(413);
      expect(json(res), path).toMatchObject({ error: "invalid_request" });
    }
  });

  it("JSON posted to a login page is 415, not a 500", async () => {
    const tenant = await createTenant(porta);
    const page = await openLoginPage(tenant);
    const path = new URL(page.interactionUrl).pathname;
    const res = await raw("POST", path, { "content-type": "application/json", cookie: page.browser.cookieHeader(page.interactionUrl) }, JSON.stringify({ csrf: csrfOf(page.html), email: "a@example.com", password: "x" }));
    expect(res.status).toBe(415);
  });

  it("a cross-origin POST with a valid CSRF token is 403", async () => {
    const tenant = await createTenant(porta);
    const page = await openLoginPage(tenant);
    const res = await page.browser.post(page.interactionUrl, { csrf: csrfOf(page.html), email: "a@example.com", password: "whatever 123" }, { origin: "https://evil.example" });
    expect(res.status).toBe(403);
  });

  it("logs each of these as one JSON line, never a stack, never at error level", () => {
    expectCleanLogs();
  });
});
