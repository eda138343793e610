import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT } from "jose";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens, type ApiResponse } from "../support/admin-api";
import { createClient, createUser, giveRole } from "../support/factories";
import { basicAuth, postForm } from "../support/oidc";
import { startTestPorta, TEST_ADMIN, type TestPorta } from "../support/porta";
import { createTenant, PASSWORD, RP_CALLBACK, signIn, unique, userinfoStatus, type ErrorBody, type Tenant } from "./helpers";

/**
 * The Admin API's authentication: each of the spec's seven checks fails on its own with 401 and
 * the error body, while a real admin token passes them all. Tokens are real ones, obtained
 * through the login pages, or forged with jose.
 */
let porta: TestPorta;
let issuer: string;
let superOrgId: string;
let adminId: string;
let adminToken: string;
let tenant: Tenant;

beforeAll(async () => {
  porta = await startTestPorta();
  issuer = `${porta.baseUrl}/${porta.services.config.superAdminSlug}`;
  const prisma = porta.services.db.prisma;
  superOrgId = (await prisma.organization.findUniqueOrThrow({ where: { slug: porta.services.config.superAdminSlug } })).id;
  adminId = (await prisma.user.findFirstOrThrow({ where: { email: TEST_ADMIN.email } })).id;
  adminToken = (await obtainAdminTokens(porta)).accessToken;
  tenant = await createTenant(porta);
});
afterAll(async () => {
  await porta?.stop();
});

/** GET /organizations with these request headers. */
async function callWith(headers: Record<string, string>): Promise<ApiResponse> {
  const res = await fetch(`${porta.url}/api/admin/organizations`, { headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}
const callWithToken = (token: string) => callWith({ authorization: `Bearer ${token}` });

function expect401(res: ApiResponse, label = "") {
  expect(res.status, label).toBe(401);
  const body = res.body as ErrorBody;
  expect(body, label).toEqual({ error: { code: "unauthorized", message: expect.any(String) } });
  expect(res.headers.get("www-authenticate"), label).toMatch(/^Bearer /);
  expect(res.headers.get("content-type"), label).toMatch(/application\/json/);
}

/** Another service-admin of the super-admin organization, with a real token of their own. */
async function secondAdmin() {
  const prisma = porta.services.db.prisma;
  const user = await createUser(prisma, superOrgId, { email: `${unique("admin")}@porta.test`, password: PASSWORD });
  const role = await giveRole(prisma, superOrgId, user.id, "service-admin");
  const { accessToken } = await obtainAdminTokens(porta, { email: user.email, password: PASSWORD });
  // The token works before the one thing a test changes.
  expect((await callWithToken(accessToken)).status).toBe(200);
  return { user, role, accessToken };
}

const forgedClaims = () => ({ scope: "openid profile email roles", client_id: "porta-admin" });
async function forge(alg: "RS256" | "HS256" | "ES256", key: CryptoKey | Uint8Array, kid: string) {
  return new SignJWT(forgedClaims())
    .setProtectedHeader({ alg, kid, typ: "at+jwt" })
    .setIssuer(issuer)
    .setSubject(adminId)
    .setAudience(issuer)
    .setJti(randomUUID())
    .setIssuedAt()
    .setExpirationTime("10m")
    .sign(key);
}

it("a real admin token passes every check, and GET /api/admin/metadata needs none", async () => {
  expect((await callWithToken(adminToken)).status).toBe(200);
  const header = decodeProtectedHeader(adminToken);
  expect(header).toMatchObject({ alg: "ES256", typ: "at+jwt" });
  // An access token for the Admin API, issued to the shared admin client with the admin scope.
  expect(decodeJwt(adminToken)).toMatchObject({ iss: issuer, sub: adminId, aud: `${porta.baseUrl}/api/admin`, client_id: "porta-admin" });
  expect(String(decodeJwt(adminToken).scope).split(" ").sort()).toEqual(["email", "openid", "profile", "roles"]);
  // It still works at the super-admin organization's userinfo endpoint.
  const userinfo = await fetch(`${issuer}/me`, { headers: { authorization: `Bearer ${adminToken}` } });
  expect(userinfo.status).toBe(200);
  expect(await userinfo.json()).toMatchObject({ sub: adminId, email: TEST_ADMIN.email, roles: ["service-admin"] });

  const metadata = await fetch(`${porta.url}/api/admin/metadata`);
  expect(metadata.status).toBe(200);
  // The release label (package.json's version) too: the service says which release it is without a token.
  const release = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
  expect(await metadata.json()).toEqual({ issuer, orgSlug: porta.services.config.superAdminSlug, clientId: "porta-admin", release });
});

describe("each check fails with 401 and the error body", () => {
  it("1. no bearer token", async () => {
    expect401(await callWith({}));
  });

  it("1. a malformed Authorization header", async () => {
    for (const value of ["Basic YWRtaW46YWRtaW4=", "Bearer", "Bearer ", `Bearer ${adminToken} extra`, `Token ${adminToken}`, `Bearer ${adminToken.replace(/\./g, " ")}`, "Bearer abc$def"]) {
      expect401(await callWith({ authorization: value }), value.slice(0, 30));
    }
    // The same token is fine when well-formed.
    expect((await callWithToken(adminToken)).status).toBe(200);
  });

  it("2. a JWT signed RS256 or HS256 (with the right iss and sub), or ES256 with a foreign key", async () => {
    const kid = decodeProtectedHeader(adminToken).kid!;
    const rsa = await generateKeyPair("RS256");
    expect401(await callWithToken(await forge("RS256", rsa.privateKey, kid)), "RS256");
    // HS256 keyed with Porta's own public key: the classic algorithm-confusion forgery.
    const jwks = (await (await fetch(`${issuer}/.well-known/jwks`)).json()) as { keys: Array<Record<string, unknown>> };
    const publicJwk = jwks.keys.find((k) => k.kid === kid)!;
    expect401(await callWithToken(await forge("HS256", new TextEncoder().encode(JSON.stringify(publicJwk)), kid)), "HS256 public key");
    expect401(await callWithToken(await forge("HS256", new TextEncoder().encode("a shared secret of thirty-two bytes!"), kid)), "HS256");
    const ec = await generateKeyPair("ES256");
    expect((await exportJWK(ec.publicKey)).crv).toBe("P-256");
    expect401(await callWithToken(await forge("ES256", ec.privateKey, kid)), "ES256 foreign key");
    // A real token with its signature altered.
    const [h, p, s] = adminToken.split(".");
    const flipped = `${h}.${p}.${s!.slice(0, -4)}${s!.slice(-4) === "AAAA" ? "BBBB" : "AAAA"}`;
    expect401(await callWithToken(flipped), "altered signature");
  });

  it("2. a revoked token", async () => {
    // Another admin's token: revoking an access token ends every token of its grant.
    const { accessToken } = await secondAdmin();
    const res = await fetch(`${issuer}/token/revocation`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: accessToken, token_type_hint: "access_token", client_id: "porta-admin" }).toString(),
    });
    expect(res.status).toBe(200);
    expect401(await callWithToken(accessToken));
    // Other grants' tokens are unaffected.
    expect((await callWithToken(adminToken)).status).toBe(200);
  });

  it("3. a real token of another organization (iss of that organization)", async () => {
    const prisma = porta.services.db.prisma;
    const user = await createUser(prisma, tenant.org.id, { email: `${unique("member")}@example.com`, password: PASSWORD });
    const { accessToken } = await signIn(tenant, { email: user.email, password: PASSWORD });
    // Signed by Porta, valid where it was issued, naming an existing user.
    expect(decodeProtectedHeader(accessToken).alg).toBe("ES256");
    expect(decodeJwt(accessToken)).toMatchObject({ iss: tenant.issuer, sub: user.id });
    expect(await userinfoStatus(tenant, accessToken)).toBe(200);
    expect401(await callWithToken(accessToken));
  });

  it("3. a token of another client of the super-admin organization, even with the admin scope", async () => {
    const prisma = porta.services.db.prisma;
    const superOrg = { id: superOrgId, slug: porta.services.config.superAdminSlug };
    const { client, secret } = await createClient(prisma, superOrgId, { redirectUris: [RP_CALLBACK], scope: "openid profile email roles offline_access" });
    const other: Tenant = { org: superOrg, clientId: client.id, secret: secret!.value, issuer };
    const { user } = await secondAdmin();
    for (const scope of ["openid", "openid profile email roles"]) {
      const { accessToken } = await signIn(other, { email: user.email, password: PASSWORD }, scope);
      // A real token of the super-admin organization, naming a service-admin, valid where it was issued.
      expect(decodeJwt(accessToken)).toMatchObject({ iss: issuer, sub: user.id, client_id: client.id, aud: issuer });
      expect(await userinfoStatus(other, accessToken)).toBe(200);
      expect401(await callWithToken(accessToken), scope);
    }
    // Introspection by a confidential client of the organization knows the Admin API's tokens.
    const introspected = await postForm(`${issuer}/token/introspection`, { token: adminToken }, { authorization: basicAuth(client.id, secret!.value) });
    expect(introspected.body).toMatchObject({ active: true, client_id: "porta-admin", sub: adminId, aud: `${porta.baseUrl}/api/admin` });
  });

  it("3. a shared admin client token without the admin scope, or for another resource", async () => {
    const { user } = await secondAdmin();
    const credentials = { email: user.email, password: PASSWORD };
    for (const scope of ["openid", "openid profile email", "openid email roles"]) {
      const { accessToken } = await obtainAdminTokens(porta, credentials, { scope });
      expect(decodeJwt(accessToken)).toMatchObject({ aud: `${porta.baseUrl}/api/admin`, client_id: "porta-admin" });
      expect401(await callWithToken(accessToken), scope);
    }
    // The organization's own resource instead of the Admin API's.
    const { accessToken } = await obtainAdminTokens(porta, credentials, { extra: { resource: issuer } });
    expect(decodeJwt(accessToken)).toMatchObject({ aud: issuer, client_id: "porta-admin" });
    expect401(await callWithToken(accessToken), "resource = issuer");
  });

  it("3. an ID token or a refresh token presented as bearer", async () => {
    const { user } = await secondAdmin();
    const { idToken, refreshToken } = await obtainAdminTokens(porta, { email: user.email, password: PASSWORD });
    // The ID token is signed by the same keys, with the right iss and sub.
    expect(decodeJwt(idToken!)).toMatchObject({ iss: issuer, sub: user.id, aud: "porta-admin" });
    expect401(await callWithToken(idToken!), "ID token");
    expect401(await callWithToken(refreshToken!), "refresh token");
  });

  it("3. a client an operator marked may call it, until the mark is removed", async () => {
    const api = adminApi(porta, adminToken);
    const created = await api.post<{ id: string; secret: { value: string } }>("/clients", {
      organizationId: superOrgId,
      name: "Ops automation",
      clientType: "confidential",
      redirectUris: [RP_CALLBACK],
      scope: "openid profile email roles offline_access",
      adminApiAccess: true,
    });
    expect(created.status).toBe(201);
    const ops: Tenant = { org: { id: superOrgId, slug: porta.services.config.superAdminSlug }, clientId: created.body.id, secret: created.body.secret.value, issuer };
    const { user } = await secondAdmin();
    const { accessToken, refreshToken, config } = await signIn(ops, { email: user.email, password: PASSWORD }, "openid profile email roles offline_access", { prompt: "consent" });
    // No resource parameter: an admin client's tokens are for the Admin API by default.
    expect(decodeJwt(accessToken)).toMatchObject({ aud: `${porta.baseUrl}/api/admin`, client_id: ops.clientId, sub: user.id });
    expect((await callWithToken(accessToken)).status).toBe(200);
    const refreshed = await oidc.refreshTokenGrant(config, refreshToken!);
    expect((await callWithToken(refreshed.access_token)).status).toBe(200);

    expect((await api.put(`/clients/${ops.clientId}`, { adminApiAccess: false })).status).toBe(200);
    expect401(await callWithToken(refreshed.access_token), "unmarked");
    // Its next sign-in gets tokens for the organization's own resource, which the Admin API refuses.
    const { accessToken: later } = await signIn(ops, { email: user.email, password: PASSWORD }, "openid profile email roles");
    expect(decodeJwt(later).aud).toBe(issuer);
    expect401(await callWithToken(later), "signed in while unmarked");
  });

  it("3. the token of a deactivated admin client", async () => {
    const api = adminApi(porta, adminToken);
    const created = await api.post<{ id: string; secret: { value: string } }>("/clients", {
      organizationId: superOrgId,
      name: "Ops automation 2",
      clientType: "confidential",
      redirectUris: [RP_CALLBACK],
      scope: "openid profile email roles",
      adminApiAccess: true,
    });
    const ops: Tenant = { org: { id: superOrgId, slug: porta.services.config.superAdminSlug }, clientId: created.body.id, secret: created.body.secret.value, issuer };
    const { user } = await secondAdmin();
    const { accessToken } = await signIn(ops, { email: user.email, password: PASSWORD }, "openid profile email roles");
    expect((await callWithToken(accessToken)).status).toBe(200);
    expect((await api.post(`/clients/${ops.clientId}/deactivate`)).status).toBe(200);
    expect401(await callWithToken(accessToken));
  });

  it("4. the user named by sub no longer exists", async () => {
    const { user, accessToken } = await secondAdmin();
    await porta.services.db.prisma.user.delete({ where: { id: user.id } });
    expect401(await callWithToken(accessToken));
  });

  it("5. the user is inactive", async () => {
    const prisma = porta.services.db.prisma;
    const { user, accessToken } = await secondAdmin();
    await prisma.user.update({ where: { id: user.id }, data: { status: "inactive" } });
    expect401(await callWithToken(accessToken));
    await prisma.user.update({ where: { id: user.id }, data: { status: "active" } });
    expect((await callWithToken(accessToken)).status).toBe(200);
  });

  it("6. a user of another organization holding a role named service-admin there", async () => {
    const prisma = porta.services.db.prisma;
    const user = await createUser(prisma, tenant.org.id, { email: `${unique("fake-admin")}@example.com`, password: PASSWORD });
    await giveRole(prisma, tenant.org.id, user.id, "service-admin");
    const { accessToken } = await signIn(tenant, { email: user.email, password: PASSWORD });
    expect(decodeJwt(accessToken).sub).toBe(user.id);
    expect401(await callWithToken(accessToken));
  });

  it("6. the token's user moved to another organization", async () => {
    const prisma = porta.services.db.prisma;
    const { user, accessToken } = await secondAdmin();
    await prisma.user.update({ where: { id: user.id }, data: { organizationId: tenant.org.id } });
    expect401(await callWithToken(accessToken));
    await prisma.user.update({ where: { id: user.id }, data: { organizationId: superOrgId } });
    expect((await callWithToken(accessToken)).status).toBe(200);
  });

  it("7. the user lacks the service-admin role", async () => {
    const prisma = porta.services.db.prisma;
    const { user, role, accessToken } = await secondAdmin();
    await prisma.userRole.delete({ where: { userId_roleId: { userId: user.id, roleId: role.id } } });
    expect401(await callWithToken(accessToken));
    await prisma.userRole.create({ data: { userId: user.id, roleId: role.id } });
    expect((await callWithToken(accessToken)).status).toBe(200);
  });
});

it("the OpenAPI document needs a token too", async () => {
  expect401(await adminApi(porta, undefined).get("/openapi.json"));
  expect((await adminApi(porta, adminToken).get("/openapi.json")).status).toBe(200);
});
