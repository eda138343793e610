import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expect422 } from "../admin/helpers";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createOrganization, createUser } from "../support/factories";
import { followAuthorization, issuerOf, oidcError, type OrgRef } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

/**
 * Decision 045: a client registers its public keys (inline `jwks` or a `jwksUri`) through the
 * Admin API and then authenticates with `private_key_jwt` and signs its request objects (ES256),
 * end to end with openid-client. The provider fetches a `jwksUri` with a time and size limit and
 * never from a private or loopback address unless the operator allows it.
 */
const CB = "https://rp.example.com/cb";

interface Created {
  id: string;
  tokenEndpointAuthMethod: string;
  jwks: { keys: JWK[] } | null;
  jwksUri: string | null;
  secret?: unknown;
}

async function keyPair() {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: `k-${Math.random().toString(16).slice(2, 10)}`, alg: "ES256", use: "sig" };
  return { privateKey, publicJwk: jwk, privateJwk: { ...(await exportJWK(privateKey)), kid: jwk.kid } };
}

async function configFor(porta: TestPorta, org: OrgRef, clientId: string, privateKey: CryptoKey, kid: string) {
  return oidc.discovery(new URL(issuerOf(porta, org)), clientId, { token_endpoint_auth_signing_alg: "ES256" }, oidc.PrivateKeyJwt({ key: privateKey, kid }), {
    execute: [oidc.allowInsecureRequests],
  });
}

/** A relying party's key endpoint on this machine (loopback: what the SSRF guard refuses by default). */
function serveJwks(jwks: { keys: JWK[] }): Promise<{ url: string; close(): Promise<void>; hits: () => number }> {
  let hits = 0;
  const server: Server = createServer((_req, res) => {
    hits++;
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify(jwks));
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`, hits: () => hits, close: () => new Promise((done) => server.close(() => done())) }),
    ),
  );
}

describe("client keys", () => {
  let porta: TestPorta;
  let api: ReturnType<typeof adminApi>;
  let org: OrgRef;
  let userId: string;

  beforeAll(async () => {
    porta = await startTestPorta({ env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: "true" } });
    api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
    org = await createOrganization(porta.services.db.prisma);
    userId = (await createUser(porta.services.db.prisma, org.id)).id;
  });
  afterAll(async () => {
    await porta?.stop();
  });

  it("registers public keys for private_key_jwt (no secret is minted) and authenticates a client_credentials grant with them", async () => {
    const { privateKey, publicJwk } = await keyPair();
    const created = await api.post<Created>("/clients", {
      organizationId: org.id,
      name: "Signed machine",
      clientType: "confidential",
      tokenEndpointAuthMethod: "private_key_jwt",
      jwks: { keys: [publicJwk] },
      grantTypes: ["client_credentials"],
      scope: "email",
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ tokenEndpointAuthMethod: "private_key_jwt", jwks: { keys: [publicJwk] }, jwksUri: null });
    expect(created.body.secret).toBeUndefined();

    const config = await configFor(porta, org, created.body.id, privateKey, publicJwk.kid);
    const tokens = await oidc.clientCredentialsGrant(config);
    expect(tokens.access_token).toBeTruthy();

    // Another key, even with the right kid, is not the client.
    const stranger = await keyPair();
    const forged = await configFor(porta, org, created.body.id, stranger.privateKey, publicJwk.kid);
    expect((await oidcError(oidc.clientCredentialsGrant(forged))).error).toBe("invalid_client");
  });

  it("accepts a signed request object (JAR) from a client with keys, end to end", async () => {
    const { privateKey, publicJwk } = await keyPair();
    const created = await api.post<Created>("/clients", {
      organizationId: org.id,
      name: "Signed web",
      clientType: "confidential",
      tokenEndpointAuthMethod: "private_key_jwt",
      jwks: { keys: [publicJwk] },
      redirectUris: [CB],
      scope: "openid email",
    });
    expect(created.status).toBe(201);
    const config = await configFor(porta, org, created.body.id, privateKey, publicJwk.kid);
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = await oidc.buildAuthorizationUrlWithJAR(
      config,
      { redirect_uri: CB, scope: "openid email", state, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256" },
      { key: privateKey, kid: publicJwk.kid },
    );
    expect(url.searchParams.get("request")).toBeTruthy();
    const callback = await followAuthorization(porta, org, url, { accountId: userId });
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
    expect(tokens.claims()?.sub).toBe(userId);
  });

  it("fetches keys from a jwksUri when the operator allows private networks", async () => {
    const { privateKey, publicJwk } = await keyPair();
    const endpoint = await serveJwks({ keys: [publicJwk] });
    try {
      const created = await api.post<Created>("/clients", {
        organizationId: org.id,
        name: "Published keys",
        clientType: "confidential",
        tokenEndpointAuthMethod: "private_key_jwt",
        jwksUri: endpoint.url,
        grantTypes: ["client_credentials"],
        scope: "email",
      });
      expect(created.status).toBe(201);
      const config = await configFor(porta, org, created.body.id, privateKey, publicJwk.kid);
      expect((await oidc.clientCredentialsGrant(config)).access_token).toBeTruthy();
      expect(endpoint.hits()).toBeGreaterThan(0);
    } finally {
      await endpoint.close();
    }
  });

  it("refuses what is not a public P-256 key set, or does not fit the client (422, nothing written)", async () => {
    const { publicJwk, privateJwk } = await keyPair();
    const base = { organizationId: org.id, name: "Bad keys", clientType: "confidential", grantTypes: ["client_credentials"], scope: "email" };
    const before = await porta.services.db.prisma.client.count({ where: { organizationId: org.id } });
    expect422(await api.post("/clients", { ...base, tokenEndpointAuthMethod: "private_key_jwt", jwks: { keys: [privateJwk] } }), "jwks.keys.0.d", "private key");
    expect422(await api.post("/clients", { ...base, jwks: { keys: [{ kty: "RSA", n: "abc", e: "AQAB" }] } }), "jwks.keys.0.kty", "RSA");
    expect422(await api.post("/clients", { ...base, jwks: { keys: [{ ...publicJwk, crv: "P-384" }] } }), "jwks.keys.0.crv", "P-384");
    expect422(await api.post("/clients", { ...base, jwks: { keys: [] } }), "jwks.keys", "empty");
    expect422(await api.post("/clients", { ...base, jwks: { keys: [publicJwk, publicJwk] } }), "jwks", "repeated");
    expect422(await api.post("/clients", { ...base, jwks: { keys: [publicJwk] }, jwksUri: "https://rp.example.com/jwks" }), "jwksUri", "both");
    expect422(await api.post("/clients", { ...base, jwksUri: "http://rp.example.com/jwks" }), "jwksUri", "http");
    expect422(await api.post("/clients", { ...base, tokenEndpointAuthMethod: "private_key_jwt" }), "jwks", "no keys");
    expect422(await api.post("/clients", { ...base, clientType: "public", tokenEndpointAuthMethod: "private_key_jwt", grantTypes: ["authorization_code"], redirectUris: [CB], scope: "openid" }), "tokenEndpointAuthMethod", "public");
    expect(await porta.services.db.prisma.client.count({ where: { organizationId: org.id } })).toBe(before);
  });

  it("updates and removes keys; a private_key_jwt client cannot lose its last key source", async () => {
    const first = await keyPair();
    const created = await api.post<Created>("/clients", {
      organizationId: org.id,
      name: "Rotating",
      clientType: "confidential",
      tokenEndpointAuthMethod: "private_key_jwt",
      jwks: { keys: [first.publicJwk] },
      grantTypes: ["client_credentials"],
      scope: "email",
    });
    const second = await keyPair();
    const rotated = await api.call<Created>("PUT", `/clients/${created.body.id}`, { jwks: { keys: [second.publicJwk] } });
    expect(rotated.status).toBe(200);
    expect(rotated.body.jwks?.keys[0]?.kid).toBe(second.publicJwk.kid);
    const config = await configFor(porta, org, created.body.id, second.privateKey, second.publicJwk.kid);
    expect((await oidc.clientCredentialsGrant(config)).access_token).toBeTruthy();
    const old = await configFor(porta, org, created.body.id, first.privateKey, first.publicJwk.kid);
    expect((await oidcError(oidc.clientCredentialsGrant(old))).error).toBe("invalid_client");
    expect422(await api.call("PUT", `/clients/${created.body.id}`, { jwks: null }), "jwks");
  });
});

describe("client keys without OUTBOUND_ALLOW_PRIVATE_NETWORKS", () => {
  let porta: TestPorta;
  beforeAll(async () => {
    porta = await startTestPorta();
  });
  afterAll(async () => {
    await porta?.stop();
  });

  it("never fetches a jwksUri on a loopback address: the client cannot authenticate", async () => {
    const api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
    const org = await createOrganization(porta.services.db.prisma);
    const { privateKey, publicJwk } = await keyPair();
    const endpoint = await serveJwks({ keys: [publicJwk] });
    try {
      const created = await api.post<Created>("/clients", {
        organizationId: org.id,
        name: "Internal keys",
        clientType: "confidential",
        tokenEndpointAuthMethod: "private_key_jwt",
        jwksUri: endpoint.url,
        grantTypes: ["client_credentials"],
        scope: "email",
      });
      expect(created.status).toBe(201);
      const config = await configFor(porta, org, created.body.id, privateKey, publicJwk.kid);
      expect((await oidcError(oidc.clientCredentialsGrant(config))).error).toBe("invalid_client");
      expect(endpoint.hits()).toBe(0);
    } finally {
      await endpoint.close();
    }
  });
});
