import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrganization } from "../support/factories";
import { issuerOf } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

/**
 * RFC 8414 authorization server metadata of each organization, at both addresses MCP clients
 * try: the path-inserted form (§3.1) /.well-known/oauth-authorization-server/{slug}, and the
 * issuer-relative /{slug}/.well-known/oauth-authorization-server. Both are the organization's
 * discovery document, answered by the same fast path with the same ETag, 304, Cache-Control and
 * CORS, and, for anything unusual, the same Express path.
 */
let porta: TestPorta;

beforeAll(async () => {
  porta = await startTestPorta();
});
afterAll(async () => {
  await porta?.stop();
});

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

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

const metadataUrls = (slug: string) => [`${porta.baseUrl}/.well-known/oauth-authorization-server/${slug}`, `${porta.baseUrl}/${slug}/.well-known/oauth-authorization-server`];

describe("RFC 8414 authorization server metadata", () => {
  it("answers the organization's discovery document at both addresses, with its issuer exactly", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const issuer = issuerOf(porta, org);
    const discovery = await raw(`${issuer}/.well-known/openid-configuration`);
    expect(discovery.status).toBe(200);
    for (const url of metadataUrls(org.slug)) {
      const answer = await raw(url, { headers: { origin: "https://mcp-client.example" } });
      expect(answer.status, url).toBe(200);
      expect(answer.body.equals(discovery.body), url).toBe(true);
      const metadata = JSON.parse(answer.body.toString()) as Record<string, unknown>;
      expect(metadata.issuer).toBe(issuer);
      expect(metadata).toMatchObject({
        authorization_endpoint: `${issuer}/auth/authorize`,
        token_endpoint: `${issuer}/auth/token`,
        jwks_uri: `${issuer}/.well-known/jwks`,
        authorization_response_iss_parameter_supported: true,
        response_types_supported: ["code"],
      });
      expect(metadata.code_challenge_methods_supported).toContain("S256");
      expect(answer.headers.etag).toBe(discovery.headers.etag);
      expect(answer.headers["cache-control"]).toBe("public, max-age=300");
      expect(answer.headers["content-type"]).toBe("application/json; charset=utf-8");
      expect(answer.headers["access-control-allow-origin"]).toBe("https://mcp-client.example");
      expect(answer.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);

      const again = await raw(url, { headers: { "if-none-match": answer.headers.etag as string } });
      expect(again.status, url).toBe(304);
      expect(again.body.length).toBe(0);
      const head = await raw(url, { method: "HEAD" });
      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);
    }
  });

  it("answers an organization the pool does not hold, from the directory", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    await porta.services.keys.providerJwks(org.id);
    await porta.services.oidc.invalidate(org.id);
    const [inserted, relative] = await Promise.all(metadataUrls(org.slug).map((url) => raw(url)));
    expect(porta.services.oidc.peek(org.slug)).toBeUndefined();
    const own = await raw(`${issuerOf(porta, org)}/.well-known/openid-configuration?via=provider`);
    expect(inserted!.status).toBe(200);
    expect(inserted!.body.toString()).toBe(own.body.toString());
    expect(relative!.body.toString()).toBe(own.body.toString());
  });

  it("names the registration endpoint once the organization's registration policy is on", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    // Before any request reads the organization, so no cache holds the policy that was.
    await porta.services.db.prisma.organization.update({ where: { id: org.id }, data: { registrationPolicy: { enabled: true, requireInitialAccessToken: false } } });
    for (const url of metadataUrls(org.slug)) {
      const metadata = JSON.parse((await raw(url)).body.toString()) as Record<string, unknown>;
      expect(metadata.registration_endpoint, url).toBe(`${issuerOf(porta, org)}/register`);
    }
  });

  it("behaves as discovery for unknown and suspended organizations, a query string, a trailing slash and other methods", async () => {
    const prisma = porta.services.db.prisma;
    const org = await createOrganization(prisma);
    const suspended = await createOrganization(prisma, { status: "suspended" });
    const discovery = await raw(`${issuerOf(porta, org)}/.well-known/openid-configuration`);
    for (const url of [...metadataUrls("no-such-org"), ...metadataUrls(suspended.slug)]) {
      expect((await raw(url)).status, url).toBe(404);
      expect((await raw(url, { method: "HEAD" })).status, url).toBe(404);
    }
    for (const url of metadataUrls(org.slug)) {
      // A query string goes down the Express path to the provider, as discovery's does.
      const viaProvider = await raw(`${url}?via=provider`);
      expect(viaProvider.status, url).toBe(200);
      expect(viaProvider.body.equals(discovery.body)).toBe(true);
      expect(viaProvider.headers.etag).toBeUndefined();
      const trailing = await raw(`${url}/`);
      expect(trailing.status, url).toBe(404);
      expect(trailing.headers.etag).toBeUndefined();
      const post = await raw(url, { method: "POST" });
      expect(post.status, url).not.toBe(200);
    }
    // Upper-case slugs fold, as on discovery.
    const [upper] = metadataUrls(org.slug.toUpperCase());
    const answer = await raw(upper!);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body.toString())).toMatchObject({ issuer: issuerOf(porta, org) });
    // Not a slug at all: not rewritten, the pages' 404.
    expect((await raw(`${porta.baseUrl}/.well-known/oauth-authorization-server/%00`)).status).not.toBe(200);
    expect((await raw(`${porta.baseUrl}/.well-known/oauth-authorization-server`)).status).toBe(404);
  });
});
