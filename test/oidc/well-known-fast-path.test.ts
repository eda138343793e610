import { createHash } from "node:crypto";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createApplication, createOrganization } from "../support/factories";
import { issuerOf } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

/**
 * Discovery and JWKS answered from precomputed documents before Express (decision 028): the
 * same bytes and headers as the provider's own answer, plus a strong ETag and 304; kept in step
 * with the organization and its keys; and everything unusual still answered by the Express path.
 * A query string sends a request down the Express path, which is how these tests ask the
 * provider itself.
 */
let porta: TestPorta;
let api: ReturnType<typeof adminApi>;

beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
});
afterAll(async () => {
  await porta?.stop();
});

const DOCUMENTS = ["/.well-known/openid-configuration", "/.well-known/jwks"] as const;

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** node:http, so that Host and any other header go out exactly as written. */
function raw(url: string, options: { method?: string; headers?: Record<string, string> } = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? "GET", headers: options.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end();
  });
}

const kids = async (issuer: string) => ((JSON.parse((await raw(`${issuer}/.well-known/jwks`)).body.toString()) as { keys: Array<{ kid: string }> }).keys.map((k) => k.kid));

describe("discovery and JWKS before Express", () => {
  it("answers the provider's own bytes and headers, with a strong ETag and no per-request nonce", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    for (const path of DOCUMENTS) {
      const url = `${issuerOf(porta, org)}${path}`;
      const viaProvider = await raw(`${url}?via=provider`);
      const fast = await raw(url);
      expect(fast.status, path).toBe(200);
      expect(fast.body.equals(viaProvider.body), path).toBe(true);
      expect(viaProvider.headers.etag, path).toBeUndefined();
      expect(fast.headers.etag, path).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
      for (const name of ["content-type", "cache-control", "access-control-allow-origin", "vary", "x-content-type-options", "x-frame-options", "referrer-policy", "cross-origin-resource-policy"]) {
        expect(fast.headers[name], `${path} ${name}`).toBe(viaProvider.headers[name]);
      }
      expect(fast.headers["content-type"]).toBe(path.endsWith("jwks") ? "application/jwk-set+json; charset=utf-8" : "application/json; charset=utf-8");
      expect(fast.headers["cache-control"]).toBe(path.endsWith("jwks") ? "public, max-age=60" : "public, max-age=300");
      expect(fast.headers["content-length"]).toBe(String(fast.body.length));
      expect(fast.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
      const csp = fast.headers["content-security-policy"] as string;
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain("nonce-");
      expect(csp.replace(/;script-src [^;]*/, "")).toBe((viaProvider.headers["content-security-policy"] as string).replace(/;script-src [^;]*/, ""));
      // The same document twice has the same tag.
      expect((await raw(url)).headers.etag).toBe(fast.headers.etag);
    }
  });

  it("answers CORS as the provider does: the caller's origin, or any", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const url = `${issuerOf(porta, org)}/.well-known/openid-configuration`;
    const withOrigin = await raw(url, { headers: { origin: "https://rp.example" } });
    expect(withOrigin.headers["access-control-allow-origin"]).toBe("https://rp.example");
    expect(withOrigin.headers.vary).toBe("Origin");
    expect((await raw(`${url}?via=provider`, { headers: { origin: "https://rp.example" } })).headers["access-control-allow-origin"]).toBe("https://rp.example");
    expect((await raw(url)).headers["access-control-allow-origin"]).toBe("*");
    // A preflight is still the provider's.
    const preflight = await raw(url, { method: "OPTIONS", headers: { origin: "https://rp.example", "access-control-request-method": "GET" } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers["access-control-allow-methods"]).toBe("GET");
  });

  it("answers If-None-Match with 304, and HEAD with the headers alone", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    for (const path of DOCUMENTS) {
      const url = `${issuerOf(porta, org)}${path}`;
      const first = await raw(url);
      const etag = first.headers.etag as string;
      for (const header of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
        const again = await raw(url, { headers: { "if-none-match": header } });
        expect(again.status, `${path} ${header}`).toBe(304);
        expect(again.body.length).toBe(0);
        expect(again.headers.etag).toBe(etag);
        expect(again.headers["cache-control"]).toBe(first.headers["cache-control"]);
      }
      expect((await raw(url, { headers: { "if-none-match": '"stale"' } })).status).toBe(200);

      const head = await raw(url, { method: "HEAD" });
      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);
      expect(head.headers["content-length"]).toBe(String(first.body.length));
      expect(head.headers.etag).toBe(etag);
      expect(head.headers["content-type"]).toBe(first.headers["content-type"]);
    }
  });

  it("does not change a byte for a forged Host, X-Forwarded-Host or Forwarded", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    for (const path of DOCUMENTS) {
      const url = `${issuerOf(porta, org)}${path}`;
      const honest = await raw(url);
      const forgeries: Array<Record<string, string>> = [
        { host: "evil.example" },
        { "x-forwarded-host": "evil.example", "x-forwarded-proto": "https", "x-forwarded-port": "8443" },
        { forwarded: "host=evil.example;proto=https" },
      ];
      for (const headers of forgeries) {
        const forged = await raw(url, { headers });
        expect(forged.status).toBe(200);
        expect(forged.body.equals(honest.body), JSON.stringify(headers)).toBe(true);
        expect(forged.headers.etag).toBe(honest.headers.etag);
      }
      expect(honest.body.toString()).not.toContain("evil.example");
    }
  });

  it("leaves everything unusual to the Express path, as before", async () => {
    const prisma = porta.services.db.prisma;
    const org = await createOrganization(prisma);
    const suspended = await createOrganization(prisma, { status: "suspended" });
    const issuer = issuerOf(porta, org);
    await raw(`${issuer}/.well-known/jwks`);

    for (const path of DOCUMENTS) {
      expect((await raw(`${porta.baseUrl}/no-such-org${path}`)).status).toBe(404);
      expect((await raw(`${issuerOf(porta, suspended)}${path}`)).status).toBe(404);
      // Not a protocol path: a Remix page (404) rather than the document.
      const trailing = await raw(`${issuer}${path}/`);
      expect(trailing.status).toBe(404);
      expect(trailing.headers.etag).toBeUndefined();
      const post = await raw(`${issuer}${path}`, { method: "POST" });
      expect(post.status).not.toBe(200);
      expect(post.headers.etag).toBeUndefined();
      // Percent-encoded paths are not matched here; Express decides, as it did.
      const firstLetterEncoded = path.replace(/\/([a-z])([a-z-]+)$/, (_, first: string, rest: string) => `/%${first.charCodeAt(0).toString(16).toUpperCase()}${rest}`);
      const encoded = await raw(`${issuer}${firstLetterEncoded}`);
      expect(encoded.status).not.toBe(200);
      expect(encoded.headers.etag).toBeUndefined();
    }
    // Upper-case slugs fold, as on the Express path.
    const upper = await raw(`${porta.baseUrl}/${org.slug.toUpperCase()}/.well-known/openid-configuration`);
    const lower = await raw(`${issuer}/.well-known/openid-configuration`);
    expect(upper.status).toBe(200);
    expect(upper.body.equals(lower.body)).toBe(true);
  });

  it("writes one access-log line per request, with the id it answered", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const url = `${issuerOf(porta, org)}/.well-known/jwks`;
    await raw(url);
    const res = await raw(url, { headers: { "x-request-id": "rp-request-0001" } });
    const notModified = await raw(url, { headers: { "if-none-match": res.headers.etag as string } });
    expect(res.headers["x-request-id"]).toBe("rp-request-0001");
    const lines = porta.logs.lines.filter((line) => line.msg === "request" && line.requestId === "rp-request-0001");
    expect(lines).toEqual([expect.objectContaining({ method: "GET", path: `/${org.slug}/.well-known/jwks`, status: 200, durationMs: expect.any(Number) })]);
    const id = notModified.headers["x-request-id"] as string;
    expect(porta.logs.lines.filter((line) => line.msg === "request" && line.requestId === id)).toEqual([expect.objectContaining({ status: 304 })]);
  });
});

describe("without building the organization's provider (decision 034)", () => {
  it("answers an organization the pool does not hold byte for byte as its provider, custom claims and several keys included", async () => {
    const prisma = porta.services.db.prisma;
    const org = await createOrganization(prisma);
    const app = await createApplication(prisma, org.id);
    expect((await api.post(`/applications/${app.id}/claims`, { claimName: "badge", claimType: "string", scope: "site" })).status).toBe(201);
    // Its active key (an organization without one gets it from its provider's build), and a staged one.
    await porta.services.keys.providerJwks(org.id);
    expect((await api.post(`/organizations/${org.id}/keys`)).status).toBe(201);
    const issuer = issuerOf(porta, org);
    await porta.services.oidc.invalidate(org.id);

    const fast = await Promise.all(DOCUMENTS.map((path) => raw(`${issuer}${path}`)));
    expect(porta.services.oidc.peek(org.slug)).toBeUndefined();
    const own = await Promise.all(DOCUMENTS.map((path) => raw(`${issuer}${path}?via=provider`)));
    expect(porta.services.oidc.peek(org.slug)).toBeDefined();
    for (const [i, answer] of fast.entries()) {
      expect(answer.status).toBe(200);
      expect(answer.body.toString()).toBe(own[i]!.body.toString());
      expect(answer.headers["content-type"]).toBe(own[i]!.headers["content-type"]);
    }
    expect((JSON.parse(fast[1]!.body.toString()) as { keys: unknown[] }).keys).toHaveLength(2);
    expect(fast[0]!.body.toString()).toContain('"badge"');
  });
});

describe("the directory of every organization's documents (decision 062)", () => {
  it("answers organizations no request has touched from memory once filled: no statement, the provider's own bytes", async () => {
    const prisma = porta.services.db.prisma;
    const orgs = await Promise.all([1, 2, 3].map(() => createOrganization(prisma)));
    // Their active keys, as an organization gets them when created through the Admin API.
    for (const org of orgs) await porta.services.keys.providerJwks(org.id);
    porta.services.documents.fillInBackground();
    await porta.services.documents.filled();
    expect(porta.services.oidc.peek(orgs[0]!.slug)).toBeUndefined();

    const statements: string[] = [];
    const stop = porta.services.db.onQuery((sql) => statements.push(sql));
    const fast = await Promise.all(orgs.flatMap((org) => DOCUMENTS.map((path) => raw(`${issuerOf(porta, org)}${path}`))));
    stop();
    expect(statements).toEqual([]);
    expect(fast.map((answer) => answer.status)).toEqual(Array(6).fill(200));
    const own = await Promise.all(DOCUMENTS.map((path) => raw(`${issuerOf(porta, orgs[1]!)}${path}?via=provider`)));
    expect(fast[2]!.body.toString()).toBe(own[0]!.body.toString());
    expect(fast[3]!.body.toString()).toBe(own[1]!.body.toString());
    expect(fast[2]!.headers.etag).toBe(`"${createHash("sha256").update(own[0]!.body).digest("base64url")}"`);
  });
});

describe("kept in step with the organization and its keys", () => {
  it("publishes a rotated key at once, with a new ETag", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const issuer = issuerOf(porta, org);
    const before = await raw(`${issuer}/.well-known/jwks`);
    const oldKids = await kids(issuer);
    expect(oldKids).toHaveLength(1);

    const generated = await api.post<{ kid: string }>(`/organizations/${org.id}/keys`);
    expect(generated.status).toBe(201);
    const afterGenerate = await kids(issuer);
    expect(afterGenerate).toEqual(expect.arrayContaining([...oldKids, generated.body.kid]));
    const stale = await raw(`${issuer}/.well-known/jwks`, { headers: { "if-none-match": before.headers.etag as string } });
    expect(stale.status).toBe(200);
    expect(stale.headers.etag).not.toBe(before.headers.etag);

    const rotated = await api.post<{ kid: string }>(`/organizations/${org.id}/keys/rotate`);
    expect(rotated.status).toBe(200);
    const published = await raw(`${issuer}/.well-known/jwks`);
    expect((JSON.parse(published.body.toString()) as { keys: Array<{ kid: string }> }).keys.map((k) => k.kid)).toContain(rotated.body.kid);
    expect(published.body.equals((await raw(`${issuer}/.well-known/jwks?via=provider`)).body)).toBe(true);
  });

  it("changes discovery with a custom claim, and stops at a suspension", async () => {
    const prisma = porta.services.db.prisma;
    const org = await createOrganization(prisma);
    const app = await createApplication(prisma, org.id);
    const url = `${issuerOf(porta, org)}/.well-known/openid-configuration`;
    const before = await raw(url);
    expect(before.body.toString()).not.toContain("cost_center");

    expect((await api.post(`/applications/${app.id}/claims`, { claimName: "cost_center", claimType: "string", scope: "finance" })).status).toBe(201);
    const after = await raw(url);
    const doc = JSON.parse(after.body.toString()) as { claims_supported: string[]; scopes_supported: string[] };
    expect(doc.claims_supported).toContain("cost_center");
    expect(doc.scopes_supported).toContain("finance");
    expect(after.headers.etag).not.toBe(before.headers.etag);
    expect(after.body.equals((await raw(`${url}?via=provider`)).body)).toBe(true);

    expect((await api.post(`/organizations/${org.id}/suspend`)).status).toBe(200);
    expect((await raw(url)).status).toBe(404);
    expect((await raw(url, { method: "HEAD" })).status).toBe(404);
    expect((await api.post(`/organizations/${org.id}/activate`)).status).toBe(200);
    expect((await raw(url)).status).toBe(200);
  });
});
