import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { Organization } from "~/generated/prisma/client";
import { createDocumentDirectory, type DocumentDirectory } from "../oidc/edge/document-directory";
import type { ProviderRegistry, TenantProvider } from "../oidc/provider/registry";
import { createDocumentTemplates } from "../oidc/edge/well-known";
import { discoveryUrlOf, noneMatch, wellKnownFirst } from "./well-known-first";

const BASE_URL = "http://id.example.test";
/** Porta's JWKS path; no development interactions (the documents do not depend on them). */
const PROVIDER_OPTIONS = { routes: { jwks: "/.well-known/jwks" }, features: { devInteractions: { enabled: false } } };

async function tenantOf(slug: string): Promise<TenantProvider> {
  const { privateKey } = await generateKeyPair("ES256", { extractable: true });
  const issuer = `${BASE_URL}/${slug}`;
  const provider = new Provider(issuer, { ...PROVIDER_OPTIONS, jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: `${slug}-key`, alg: "ES256", use: "sig" }] } });
  provider.proxy = true;
  return {
    organization: { id: `${slug}-id`, slug } as Organization,
    issuer,
    provider,
    callback: provider.callback(),
    claimsOfSignedJwt: () => Promise.resolve(undefined),
    deliverBackchannelLogout: () => Promise.resolve(false),
    issueImpersonationToken: () => Promise.resolve(undefined),
  };
}

type Registry = Pick<ProviderRegistry, "get" | "peek" | "onDrop" | "describe" | "describePage" | "describeMany" | "buildDetached">;
/** The documents without a provider are test/oidc/well-known-fast-path.test.ts's: here every organization needs its provider. */
const NEEDS_PROVIDER = {
  describe: () => Promise.resolve(undefined),
  describePage: () => Promise.resolve({ described: [], last: undefined }),
  describeMany: () => Promise.resolve(new Map()),
  buildDetached: () => Promise.reject(new Error("not here")),
};

/**
 * A pool of one organization's provider, replaceable as the real registry replaces it on a
 * change; `pooled` false stands for a provider evicted from the pool (still built on `get`).
 */
function poolOf(tenant: TenantProvider) {
  const pool = { tenant, gets: 0, pooled: true, drop: (_organizationId: string) => {} };
  const registry: Registry = {
    get: (slug) => {
      pool.gets++;
      pool.pooled = true;
      return Promise.resolve(slug.toLowerCase() === pool.tenant.organization.slug ? pool.tenant : undefined);
    },
    peek: (slug) => (pool.pooled && slug.toLowerCase() === pool.tenant.organization.slug ? pool.tenant : undefined),
    onDrop: (listener) => void (pool.drop = listener),
    ...NEEDS_PROVIDER,
  };
  return { pool, registry };
}

let server: Server | undefined;
const directories: DocumentDirectory[] = [];
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));
afterEach(() => directories.splice(0).forEach((directory) => directory.close()));

async function serve(registry: Registry) {
  const passed: string[] = [];
  const logger = pino({ level: "silent" });
  const directory = createDocumentDirectory({ registry, templates: createDocumentTemplates(registry, BASE_URL), baseUrl: BASE_URL, maxAgeMs: 60_000, logger });
  directories.push(directory);
  const handler = wellKnownFirst({ registry, directory, baseUrl: BASE_URL, mode: "production", logger }, (req, res) => {
    passed.push(`${req.method} ${req.url}`);
    res.writeHead(418).end();
  });
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, passed };
}

describe("noneMatch", () => {
  it("compares weakly, accepts lists and *, and nothing else", () => {
    expect(noneMatch('"a"', '"a"')).toBe(true);
    expect(noneMatch('W/"a"', '"a"')).toBe(true);
    expect(noneMatch(' "b" , W/"a"', '"a"')).toBe(true);
    expect(noneMatch("*", '"a"')).toBe(true);
    expect(noneMatch('"b"', '"a"')).toBe(false);
    expect(noneMatch("a", '"a"')).toBe(false);
    expect(noneMatch(undefined, '"a"')).toBe(false);
    expect(noneMatch("", '"a"')).toBe(false);
  });
});

describe("wellKnownFirst", () => {
  it("answers both documents as the provider would, then from the pool entry without asking the registry again", async () => {
    const tenant = await tenantOf("acme");
    const { pool, registry } = poolOf(tenant);
    const { url, passed } = await serve(registry);

    const discovery = await fetch(`${url}/acme/.well-known/openid-configuration`);
    expect(discovery.status).toBe(200);
    const doc = (await discovery.json()) as Record<string, unknown>;
    expect(doc.issuer).toBe(`${BASE_URL}/acme`);
    expect(doc.jwks_uri).toBe(`${BASE_URL}/acme/.well-known/jwks`);
    const jwks = await fetch(`${url}/acme/.well-known/jwks`);
    expect(jwks.headers.get("content-type")).toBe("application/jwk-set+json; charset=utf-8");
    expect(((await jwks.json()) as { keys: Array<{ kid: string; d?: string }> }).keys).toEqual([expect.objectContaining({ kid: "acme-key" })]);
    expect(((await (await fetch(`${url}/acme/.well-known/jwks`)).json()) as { keys: Array<{ d?: string }> }).keys[0]!.d).toBeUndefined();

    const gets = pool.gets;
    expect((await fetch(`${url}/ACME/.well-known/openid-configuration`)).status).toBe(200);
    expect(pool.gets).toBe(gets);
    expect(passed).toEqual([]);
  });

  it("serves the documents of the provider now in the pool: a replaced provider brings its own", async () => {
    const { pool, registry } = poolOf(await tenantOf("acme"));
    const { url } = await serve(registry);
    const kidsNow = async () => ((await (await fetch(`${url}/acme/.well-known/jwks`)).json()) as { keys: Array<{ kid: string }> }).keys.map((k) => k.kid);
    const first = await fetch(`${url}/acme/.well-known/jwks`);
    const etag = first.headers.get("etag")!;
    expect(await kidsNow()).toEqual(["acme-key"]);

    const replacement = await tenantOf("acme");
    replacement.provider = new Provider(replacement.issuer, {
      ...PROVIDER_OPTIONS,
      jwks: { keys: [{ ...(await exportJWK((await generateKeyPair("ES256", { extractable: true })).privateKey)), kid: "rotated", alg: "ES256", use: "sig" }] },
    });
    replacement.provider.proxy = true;
    replacement.callback = replacement.provider.callback();
    pool.tenant = replacement;

    expect(await kidsNow()).toEqual(["rotated"]);
    expect((await fetch(`${url}/acme/.well-known/jwks`, { headers: { "if-none-match": etag } })).status).toBe(200);
  });

  it("answers an organization whose provider left the pool without building it again, until the organization changes", async () => {
    const { pool, registry } = poolOf(await tenantOf("acme"));
    const { url, passed } = await serve(registry);
    const first = await fetch(`${url}/acme/.well-known/openid-configuration`);
    const body = await first.text();
    expect(pool.gets).toBe(1);

    pool.pooled = false;
    const again = await fetch(`${url}/acme/.well-known/openid-configuration`, { headers: { origin: "https://rp.example" } });
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(body);
    expect(again.headers.get("etag")).toBe(first.headers.get("etag"));
    expect(again.headers.get("access-control-allow-origin")).toBe("https://rp.example");
    expect((await fetch(`${url}/acme/.well-known/jwks`)).status).toBe(200);
    expect(pool.gets).toBe(1);

    // Another organization's change leaves acme's documents; acme's own change drops them.
    pool.drop("other-id");
    await fetch(`${url}/acme/.well-known/openid-configuration`);
    expect(pool.gets).toBe(1);
    pool.pooled = false;
    pool.drop("acme-id");
    await fetch(`${url}/acme/.well-known/openid-configuration`);
    expect(pool.gets).toBe(2);

    // Suspended (the registry no longer answers): the Express path answers, not the kept documents.
    pool.pooled = false;
    pool.drop("*");
    pool.tenant = await tenantOf("renamed");
    expect((await fetch(`${url}/acme/.well-known/jwks`)).status).toBe(418);
    expect(passed).toEqual(["GET /acme/.well-known/jwks"]);
  });

  it("answers RFC 8414 metadata at both addresses as the discovery document, and hands their unusual forms on as discovery", async () => {
    const { registry } = poolOf(await tenantOf("acme"));
    const { url, passed } = await serve(registry);
    const discovery = await fetch(`${url}/acme/.well-known/openid-configuration`);
    const body = await discovery.text();
    for (const path of ["/.well-known/oauth-authorization-server/acme", "/acme/.well-known/oauth-authorization-server"]) {
      const answer = await fetch(`${url}${path}`);
      expect(answer.status, path).toBe(200);
      expect(await answer.text()).toBe(body);
      expect(answer.headers.get("etag")).toBe(discovery.headers.get("etag"));
    }
    expect((await fetch(`${url}/.well-known/oauth-authorization-server/acme?x=1`)).status).toBe(418);
    expect(passed).toEqual(["GET /acme/.well-known/openid-configuration?x=1"]);
  });

  it("hands everything else to the next handler untouched", async () => {
    const { registry } = poolOf(await tenantOf("acme"));
    const { url, passed } = await serve(registry);
    const cases: Array<[string, string]> = [
      ["POST", "/acme/.well-known/jwks"],
      ["OPTIONS", "/acme/.well-known/jwks"],
      ["GET", "/acme/.well-known/jwks?x=1"],
      ["GET", "/acme/.well-known/jwks/"],
      ["GET", "/acme/.well-known/oauth-protected-resource"],
      ["GET", "/other/.well-known/jwks"],
      ["GET", "/-bad-/.well-known/jwks"],
      ["GET", "/acme/auth/authorize"],
      ["GET", "/.well-known/jwks"],
    ];
    for (const [method, path] of cases) expect((await fetch(`${url}${path}`, { method })).status, `${method} ${path}`).toBe(418);
    expect(passed).toEqual(cases.map(([method, path]) => `${method} ${path}`));
  });

  it("hands the request on when the registry fails (the Express path answers 503 there)", async () => {
    const { url, passed } = await serve({ get: () => Promise.reject(new Error("database down")), peek: () => undefined, onDrop: () => {}, ...NEEDS_PROVIDER });
    expect((await fetch(`${url}/acme/.well-known/openid-configuration`)).status).toBe(418);
    expect(passed).toEqual(["GET /acme/.well-known/openid-configuration"]);
  });
});

describe("discoveryUrlOf: RFC 8414 metadata addresses", () => {
  it("maps both forms to the organization's discovery address, keeping what follows", () => {
    expect(discoveryUrlOf("/.well-known/oauth-authorization-server/acme")).toBe("/acme/.well-known/openid-configuration");
    expect(discoveryUrlOf("/acme/.well-known/oauth-authorization-server")).toBe("/acme/.well-known/openid-configuration");
    expect(discoveryUrlOf("/.well-known/oauth-authorization-server/ACME?x=1")).toBe("/ACME/.well-known/openid-configuration?x=1");
    expect(discoveryUrlOf("/acme/.well-known/oauth-authorization-server/")).toBe("/acme/.well-known/openid-configuration/");
  });

  it("leaves everything else alone", () => {
    for (const url of [
      "/.well-known/oauth-authorization-server",
      "/.well-known/oauth-authorization-server/",
      "/.well-known/oauth-authorization-server/%00",
      "/.well-known/oauth-authorization-serverx/acme",
      "/acme/.well-known/openid-configuration",
      "/a/b/.well-known/oauth-authorization-server",
      "/.well-known/oauth-protected-resource/acme",
    ]) {
      expect(discoveryUrlOf(url), url).toBeNull();
    }
  });
});
