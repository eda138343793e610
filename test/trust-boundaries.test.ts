import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestBrowser } from "./support/browser";
import { createOrganization } from "./support/factories";
import { startTestPorta, type TestPorta } from "./support/porta";
import { createTenant, openLoginPage } from "./login/helpers";
import { csrfOf } from "./support/browser";

/**
 * Every URL Porta publishes comes from BASE_URL, whatever Host or X-Forwarded-* a client sends,
 * and client addresses come from X-Forwarded-For only through TRUST_PROXY.
 */

const FORGED = {
  host: "evil.example",
  "x-forwarded-host": "evil.example",
  "x-forwarded-proto": "https",
  "x-forwarded-port": "8443",
  forwarded: "host=evil.example;proto=https",
};

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** node:http, because fetch does not let a caller choose the Host header. */
function rawGet(url: string, headers: Record<string, string>): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: "GET", headers }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

function expectNoForeignUrl(text: string) {
  expect(text).not.toContain("evil.example");
  expect(text).not.toContain(":8443");
}

let porta: TestPorta;
beforeAll(async () => {
  porta = await startTestPorta();
});
afterAll(async () => {
  await porta?.stop();
});

describe("URLs come from BASE_URL only", () => {
  it("discovery lists BASE_URL endpoints whatever Host and X-Forwarded-* say, and may be cached", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const issuer = `${porta.baseUrl}/${org.slug}`;
    const res = await rawGet(`${porta.url}/${org.slug}/.well-known/openid-configuration`, FORGED);
    expect(res.status).toBe(200);
    expectNoForeignUrl(res.body);
    const body = JSON.parse(res.body) as Record<string, unknown>;
    expect(body.issuer).toBe(issuer);
    for (const key of [
      "authorization_endpoint",
      "token_endpoint",
      "jwks_uri",
      "userinfo_endpoint",
      "introspection_endpoint",
      "revocation_endpoint",
      "end_session_endpoint",
      "pushed_authorization_request_endpoint",
    ]) {
      expect(String(body[key]), key).toMatch(new RegExp(`^${issuer}/`));
    }
    expect(res.headers["cache-control"]).toMatch(/\bpublic\b/);
    expect(res.headers["cache-control"]).toMatch(/max-age=\d+/);
  });

  it("JWKS answers the same keys to a forged Host, with a Cache-Control a CDN may honour", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const plain = await rawGet(`${porta.url}/${org.slug}/.well-known/jwks`, {});
    const forged = await rawGet(`${porta.url}/${org.slug}/.well-known/jwks`, FORGED);
    expect(forged.status).toBe(200);
    expect(JSON.parse(forged.body)).toEqual(JSON.parse(plain.body));
    expect(forged.headers["cache-control"]).toMatch(/\bpublic\b/);
    expect(forged.headers["cache-control"]).toMatch(/max-age=\d+/);
  });

  it("the authorization redirect and the login page stay on BASE_URL under a forged Host", async () => {
    const tenant = await createTenant(porta);
    const page = await openLoginPage(tenant, { headers: { "x-forwarded-host": "evil.example", "x-forwarded-proto": "https" } });
    expect(page.interactionUrl.startsWith(`${porta.baseUrl}/`)).toBe(true);
    const viaForgedHost = await rawGet(page.interactionUrl.replace(porta.baseUrl, porta.url), { ...FORGED, cookie: page.browser.cookieHeader(page.interactionUrl) });
    expect(viaForgedHost.status).toBe(200);
    expectNoForeignUrl(viaForgedHost.body);
  });

  it("the console's sign-in sends the browser to BASE_URL's authorization endpoint under a forged Host", async () => {
    const res = await rawGet(`${porta.url}/console`, FORGED);
    expect(res.status).toBeGreaterThanOrEqual(300);
    expect(res.status).toBeLessThan(400);
    const location = String(res.headers.location);
    expect(location.startsWith(`${porta.baseUrl}/${porta.services.config.superAdminSlug}/auth/authorize?`)).toBe(true);
    const redirectUri = new URL(location).searchParams.get("redirect_uri");
    expect(redirectUri).toBe(`${porta.baseUrl}/api/oidc/callback`);
    expectNoForeignUrl(location);
  });

  it("a request whose Host is not BASE_URL's still works (the loopback address instead of localhost)", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const res = await fetch(`${porta.url}/${org.slug}/.well-known/openid-configuration`);
    expect(new URL(porta.url).host).not.toBe(new URL(porta.baseUrl).host);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { issuer: string }).issuer).toBe(`${porta.baseUrl}/${org.slug}`);
  });
});

/** The address the audit log records for a failed password login sent with the given headers. */
async function auditedAddress(server: TestPorta, headers: Record<string, string>): Promise<string | null> {
  const tenant = await createTenant(server);
  const browser = new TestBrowser(headers);
  const page = await openLoginPage(tenant, { browser });
  const email = `nobody-${Date.now()}@example.com`;
  await browser.post(page.interactionUrl, { csrf: csrfOf(page.html), email, password: "wrong password 123" });
  const entry = await server.services.db.prisma.auditEntry.findFirst({
    where: { eventType: "auth.login.failure", organizationId: tenant.org.id },
    orderBy: { createdAt: "desc" },
  });
  return entry?.ip ?? null;
}

describe("TRUST_PROXY decides whether X-Forwarded-For is believed", () => {
  it("by default trusts a proxy on the loopback interface only", async () => {
    expect(await auditedAddress(porta, { "x-forwarded-for": "203.0.113.9" })).toBe("203.0.113.9");
  });

  it("with a CIDR list that does not contain the peer, ignores X-Forwarded-For", async () => {
    const strict = await startTestPorta({ env: { TRUST_PROXY: "10.0.0.0/8, 192.168.0.1" } });
    try {
      expect(await auditedAddress(strict, { "x-forwarded-for": "203.0.113.9" })).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
    } finally {
      await strict.stop();
    }
  });

  it("with a hop count, takes the address that many hops back", async () => {
    const hops = await startTestPorta({ env: { TRUST_PROXY: "2" } });
    try {
      expect(await auditedAddress(hops, { "x-forwarded-for": "198.51.100.7, 203.0.113.9, 10.0.0.2" })).toBe("203.0.113.9");
    } finally {
      await hops.stop();
    }
  });
});
