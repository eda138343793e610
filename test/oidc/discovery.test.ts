import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { invalidateOrganization } from "~/.server/directory/organizations";
import { createOrganization } from "../support/factories";
import { issuerOf } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

let porta: TestPorta;
beforeAll(async () => {
  porta = await startTestPorta();
});
afterAll(async () => {
  await porta?.stop();
});

type Json = Record<string, unknown>;

async function getJson(url: string): Promise<{ status: number; body: Json; contentType: string | null }> {
  const response = await fetch(url, { redirect: "manual" });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Json) : {}, contentType: response.headers.get("content-type") };
}

describe("discovery and JWKS per organization", () => {
  it("describes the organization's own issuer and canonical endpoints", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const issuer = issuerOf(porta, org);
    const { status, body } = await getJson(`${issuer}/.well-known/openid-configuration`);
    expect(status).toBe(200);
    expect(body.issuer).toBe(issuer);
    expect(body).toMatchObject({
      authorization_endpoint: `${issuer}/auth/authorize`,
      token_endpoint: `${issuer}/auth/token`,
      jwks_uri: `${issuer}/.well-known/jwks`,
      userinfo_endpoint: `${issuer}/me`,
      introspection_endpoint: `${issuer}/token/introspection`,
      revocation_endpoint: `${issuer}/token/revocation`,
      end_session_endpoint: `${issuer}/session/end`,
      pushed_authorization_request_endpoint: `${issuer}/auth/par`,
    });
    expect(body.response_types_supported).toEqual(["code"]);
    expect(body.grant_types_supported).toEqual(expect.arrayContaining(["authorization_code", "refresh_token", "client_credentials"]));
    expect(body.code_challenge_methods_supported).toEqual(["S256"]);
    expect(body.scopes_supported).toEqual(expect.arrayContaining(["openid", "offline_access", "profile", "email", "roles"]));
    expect(body.token_endpoint_auth_methods_supported).toEqual(expect.arrayContaining(["none", "client_secret_basic", "client_secret_post"]));
  });

  it("advertises ES256 and nothing else in every *_alg_values_supported", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const { body } = await getJson(`${issuerOf(porta, org)}/.well-known/openid-configuration`);
    const algLists = Object.entries(body).filter(([key]) => key.endsWith("_alg_values_supported") && !key.includes("encryption"));
    expect(algLists.map(([key]) => key)).toEqual(
      expect.arrayContaining([
        "id_token_signing_alg_values_supported",
        "userinfo_signing_alg_values_supported",
        "request_object_signing_alg_values_supported",
        "introspection_signing_alg_values_supported",
        "dpop_signing_alg_values_supported",
      ]),
    );
    for (const [key, value] of algLists) expect(value, key).toEqual(["ES256"]);
    // No encryption is offered either, and no other signing algorithm appears anywhere.
    expect(Object.keys(body).filter((key) => key.includes("encryption"))).toEqual([]);
    expect(JSON.stringify(body)).not.toMatch(/"(?:(?:RS|PS|HS)\d{3}|EdDSA|Ed25519|ES384|ES512|RSA-OAEP[^"]*)"/);
  });

  it("publishes public ES256 keys only", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const { status, body, contentType } = await getJson(`${issuerOf(porta, org)}/.well-known/jwks`);
    expect(status).toBe(200);
    expect(contentType).toMatch(/application\/(jwk-set\+)?json/);
    const keys = body.keys as Json[];
    expect(keys.length).toBeGreaterThanOrEqual(1);
    for (const key of keys) {
      expect(key).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig" });
      expect(typeof key.kid).toBe("string");
      expect(key).not.toHaveProperty("d");
    }
  });

  it("treats slugs case-insensitively, keeping the canonical issuer", async () => {
    const org = await createOrganization(porta.services.db.prisma, { slug: `acme-${Date.now().toString(36)}` });
    const upper = `${porta.baseUrl}/${org.slug.toUpperCase()}`;
    const discovery = await getJson(`${upper}/.well-known/openid-configuration`);
    expect(discovery.status).toBe(200);
    expect(discovery.body.issuer).toBe(issuerOf(porta, org));
    expect(discovery.body.token_endpoint).toBe(`${issuerOf(porta, org)}/auth/token`);
    const jwks = await getJson(`${upper}/.well-known/jwks`);
    expect(jwks.status).toBe(200);
    expect((jwks.body.keys as Json[]).length).toBeGreaterThanOrEqual(1);
  });

  it("answers 404 for an unknown organization", async () => {
    for (const path of ["/.well-known/openid-configuration", "/.well-known/jwks", "/auth/authorize?client_id=x", "/me"]) {
      const response = await fetch(`${porta.baseUrl}/no-such-org${path}`, { redirect: "manual" });
      expect(response.status, path).toBe(404);
    }
    const token = await fetch(`${porta.baseUrl}/no-such-org/auth/token`, { method: "POST", body: new URLSearchParams({ grant_type: "client_credentials" }) });
    expect(token.status).toBe(404);
  });

  it("answers 404 for a suspended and for a deleted organization", async () => {
    const prisma = porta.services.db.prisma;
    const suspended = await createOrganization(prisma, { status: "suspended" });
    const deleted = await createOrganization(prisma, { status: "deleted" });
    for (const org of [suspended, deleted]) {
      expect((await fetch(`${issuerOf(porta, org)}/.well-known/openid-configuration`)).status, org.status).toBe(404);
      expect((await fetch(`${issuerOf(porta, org)}/.well-known/jwks`)).status, org.status).toBe(404);
    }
  });

  it("stops serving an organization once it is suspended, and serves it again once reactivated", async () => {
    const prisma = porta.services.db.prisma;
    const org = await createOrganization(prisma);
    const url = `${issuerOf(porta, org)}/.well-known/openid-configuration`;
    expect((await fetch(url)).status).toBe(200);

    // What the Admin API's suspend does: write, invalidate the cache, drop the provider.
    await prisma.organization.update({ where: { id: org.id }, data: { status: "suspended" } });
    await invalidateOrganization(porta.services.cache, org);
    await porta.services.oidc.invalidate(org.id);
    expect((await fetch(url)).status).toBe(404);

    await prisma.organization.update({ where: { id: org.id }, data: { status: "active" } });
    await invalidateOrganization(porta.services.cache, org);
    await porta.services.oidc.invalidate(org.id);
    expect((await fetch(url)).status).toBe(200);
  });

  it("keeps each organization's discovery to itself", async () => {
    const prisma = porta.services.db.prisma;
    const [a, b] = await Promise.all([createOrganization(prisma), createOrganization(prisma)]);
    const [da, db] = await Promise.all([
      getJson(`${issuerOf(porta, a)}/.well-known/openid-configuration`),
      getJson(`${issuerOf(porta, b)}/.well-known/openid-configuration`),
    ]);
    expect(da.body.issuer).toBe(issuerOf(porta, a));
    expect(db.body.issuer).toBe(issuerOf(porta, b));
    expect(db.body.authorization_endpoint).toBe(`${issuerOf(porta, b)}/auth/authorize`);
  });
});
