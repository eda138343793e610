import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createClient, createOrganization, createUser, giveRoleWithPermissions } from "../support/factories";
import { basicAuth, clientConfiguration, CookieJar, followAuthorization, issuerOf, oidcError, pkcePair, postForm, verifyWithJwks, type OrgRef } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

/**
 * Access tokens for an organization's API resources (RFC 8707, decision 077): a client granted a
 * resource through the Admin API gets an ES256 JWT whose `aud` is the resource's identifier and
 * whose scope is at most what it was granted, by the code flow (resource at /auth, and at /token),
 * refresh and client_credentials; any resource it was not granted, an unknown one, an inactive
 * one, or one of another organization is `invalid_target`. A person's token carries only the
 * scopes the person's roles grant as well (a permission named as the scope); a machine's only
 * what its client was granted.
 */
let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
let org: OrgRef;
let other: OrgRef;
let userId: string;

const CB = "https://rp.example.com/cb";
const ORDERS = "https://api.example.com/Orders";
const ORDERS_SCOPES = ["orders:read", "orders:write", "orders:admin"];
let ordersId: string;

beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  const prisma = porta.services.db.prisma;
  org = await createOrganization(prisma);
  other = await createOrganization(prisma);
  userId = (await createUser(prisma, org.id)).id;
  await grantByRole(org.id, userId, "api-user", [...ORDERS_SCOPES, "x", "free:read"]);
  const created = await api.post<{ id: string }>(`/organizations/${org.id}/api-resources`, { identifier: ORDERS, name: "Orders", scopes: ORDERS_SCOPES, accessTokenTtlSeconds: 900 });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  ordersId = created.body.id;
});
afterAll(async () => {
  await porta?.stop();
});

/** Gives the user a role of `organizationId` holding permissions named as `scopes`. */
const grantByRole = (organizationId: string, user: string, roleName: string, scopes: string[]) => giveRoleWithPermissions(porta.services.db.prisma, organizationId, user, roleName, scopes);

async function grant(clientId: string, resourceId: string, scopes: string[]) {
  const res = await api.put(`/clients/${clientId}/api-resources/${resourceId}`, { scopes });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

async function webClient(at: OrgRef = org) {
  const { client, secret } = await createClient(porta.services.db.prisma, at.id);
  return { client, config: await clientConfiguration(porta, at, client, { secret: secret!.value }) };
}

/** The code flow with PKCE; `tokenResource` also sends `resource` at the token endpoint. */
async function codeFlowFor(config: oidc.Configuration, at: OrgRef, params: Record<string, string>, tokenResource?: string, session: { jar?: CookieJar; prompts?: string[]; accountId?: string } = {}) {
  const { verifier, challenge } = await pkcePair();
  const url = oidc.buildAuthorizationUrl(config, { redirect_uri: CB, code_challenge: challenge, code_challenge_method: "S256", ...params });
  const callback = await followAuthorization(porta, at, url, { accountId: userId, ...session });
  if (callback.searchParams.has("error")) return { error: callback.searchParams.get("error")! };
  const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier }, tokenResource ? { resource: tokenResource } : undefined);
  return { tokens };
}

describe("tokens for an API resource", () => {
  it("code flow: resource at /auth gives a JWT for the resource with the granted scopes, verified with the organization's JWKS", async () => {
    const { client, config } = await webClient();
    await grant(client.id, ordersId, ["orders:read", "orders:write"]);
    const { tokens } = await codeFlowFor(config, org, { scope: "openid orders:read orders:write orders:admin", resource: ORDERS });
    const { payload, protectedHeader } = await verifyWithJwks(porta, org, tokens!.access_token, { audience: ORDERS, typ: "at+jwt" });
    expect(protectedHeader.alg).toBe("ES256");
    expect(payload).toMatchObject({ iss: issuerOf(porta, org), aud: ORDERS, client_id: client.id, sub: userId });
    // orders:admin was not granted to the client.
    expect(String(payload.scope).split(" ").sort()).toEqual(["orders:read", "orders:write"]);
    // The resource's own lifetime.
    expect(payload.exp! - payload.iat!).toBe(900);
    expect(tokens!.id_token).toBeTruthy();
  });

  it("code flow: resource at /auth and /token, and a refresh keeps the audience", async () => {
    const { client, config } = await webClient();
    await grant(client.id, ordersId, ["orders:read"]);
    const { tokens } = await codeFlowFor(config, org, { scope: "openid offline_access orders:read", resource: ORDERS, prompt: "consent" }, ORDERS);
    const first = await verifyWithJwks(porta, org, tokens!.access_token, { audience: ORDERS });
    expect(first.payload.scope).toBe("orders:read");
    expect(tokens!.refresh_token).toBeTruthy();

    const refreshed = await oidc.refreshTokenGrant(config, tokens!.refresh_token!);
    const again = await verifyWithJwks(porta, org, refreshed.access_token, { audience: ORDERS });
    expect(again.payload).toMatchObject({ aud: ORDERS, scope: "orders:read", sub: userId });
    // Asking for the resource again at refresh works too.
    const named = await oidc.refreshTokenGrant(config, refreshed.refresh_token!, { resource: ORDERS });
    expect((await verifyWithJwks(porta, org, named.access_token, { audience: ORDERS })).payload.aud).toBe(ORDERS);
  });

  it("without a resource, tokens stay the organization's own", async () => {
    const { client, config } = await webClient();
    await grant(client.id, ordersId, ["orders:read"]);
    const { tokens } = await codeFlowFor(config, org, { scope: "openid email" });
    expect((await verifyWithJwks(porta, org, tokens!.access_token)).payload.aud).toBe(issuerOf(porta, org));
  });

  it("refuses a resource the client was not granted, an unknown one and an inactive one with invalid_target", async () => {
    const { config } = await webClient();
    expect(await codeFlowFor(config, org, { scope: "openid orders:read", resource: ORDERS })).toEqual({ error: "invalid_target" });
    expect(await codeFlowFor(config, org, { scope: "openid", resource: "https://api.example.com/unknown" })).toEqual({ error: "invalid_target" });
    // Identifiers compare exactly: another case is another resource.
    expect(await codeFlowFor(config, org, { scope: "openid", resource: ORDERS.toLowerCase() })).toEqual({ error: "invalid_target" });

    const inactive = await api.post<{ id: string }>(`/organizations/${org.id}/api-resources`, { identifier: "https://api.example.com/off", name: "Off", scopes: ["x"] });
    const { client: granted, config: grantedConfig } = await webClient();
    await grant(granted.id, inactive.body.id, ["x"]);
    expect((await codeFlowFor(grantedConfig, org, { scope: "openid x", resource: "https://api.example.com/off" })).tokens).toBeTruthy();
    expect((await api.put(`/api-resources/${inactive.body.id}`, { status: "inactive" })).status).toBe(200);
    expect(await codeFlowFor(grantedConfig, org, { scope: "openid x", resource: "https://api.example.com/off" })).toEqual({ error: "invalid_target" });
  });

  it("a revoked grant is refused at once, and a client of another organization cannot use this one's resource", async () => {
    const { client, config } = await webClient();
    await grant(client.id, ordersId, ["orders:read"]);
    expect((await codeFlowFor(config, org, { scope: "openid orders:read", resource: ORDERS })).tokens).toBeTruthy();
    expect((await api.delete(`/clients/${client.id}/api-resources/${ordersId}`)).status).toBe(204);
    expect(await codeFlowFor(config, org, { scope: "openid orders:read", resource: ORDERS })).toEqual({ error: "invalid_target" });

    // The other organization has no such resource, whatever its clients ask.
    const prisma = porta.services.db.prisma;
    const { client: foreign, secret } = await createClient(prisma, other.id, { grantTypes: ["client_credentials"], scope: "openid" });
    const answer = await postForm(`${issuerOf(porta, other)}/auth/token`, { grant_type: "client_credentials", resource: ORDERS }, { authorization: basicAuth(foreign.id, secret!.value) });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe("invalid_target");
  });
});

describe("hostile resource and scope values at the token endpoint", () => {
  it("answers a clear OAuth error and issues nothing for a fragment, a relative or non-http resource, control characters, NUL or a lone surrogate", async () => {
    const prisma = porta.services.db.prisma;
    const { client, secret } = await createClient(prisma, org.id, { grantTypes: ["client_credentials"], scope: "openid" });
    await grant(client.id, ordersId, ["orders:read"]);
    const token = (form: Record<string, string>) => postForm(`${issuerOf(porta, org)}/auth/token`, { grant_type: "client_credentials", ...form }, { authorization: basicAuth(client.id, secret!.value) });
    const cases: Array<[Record<string, string>, string]> = [
      [{ resource: `${ORDERS}#fragment`, scope: "orders:read" }, "invalid_target"],
      [{ resource: "/Orders", scope: "orders:read" }, "invalid_target"],
      [{ resource: "urn:example:orders", scope: "orders:read" }, "invalid_target"],
      [{ resource: ORDERS.toLowerCase(), scope: "orders:read" }, "invalid_target"],
      // A NUL never reaches the provider: the edge refuses the request as a whole.
      [{ resource: `${ORDERS}\u0000`, scope: "orders:read" }, "invalid_request"],
      [{ resource: ORDERS, scope: "orders:read\u0001" }, "invalid_scope"],
      [{ resource: ORDERS, scope: "orders:\ud800read" }, "invalid_scope"],
    ];
    for (const [form, error] of cases) {
      const answer = await token(form);
      expect(answer.status, JSON.stringify(form)).toBe(400);
      expect(answer.body.error, JSON.stringify(form)).toBe(error);
      expect(answer.body.access_token).toBeUndefined();
    }
    // The same client, asking properly, still gets its token.
    const good = await token({ resource: ORDERS, scope: "orders:read" });
    expect(good.status).toBe(200);
  });
});

describe("client_credentials for an API resource", () => {
  it("issues a JWT for the resource with the requested scopes it was granted", async () => {
    const prisma = porta.services.db.prisma;
    const { client, secret } = await createClient(prisma, org.id, { grantTypes: ["client_credentials"], scope: "openid" });
    await grant(client.id, ordersId, ["orders:read"]);
    const config = await clientConfiguration(porta, org, client, { secret: secret!.value });
    const tokens = await oidc.clientCredentialsGrant(config, { resource: ORDERS, scope: "orders:read orders:write" });
    expect(tokens.scope).toBe("orders:read");
    const { payload } = await verifyWithJwks(porta, org, tokens.access_token, { audience: ORDERS, typ: "at+jwt" });
    expect(payload).toMatchObject({ aud: ORDERS, sub: client.id, client_id: client.id, scope: "orders:read" });

    // A scope no resource or the organization defines stays invalid_scope; an ungranted resource invalid_target.
    expect((await oidcError(oidc.clientCredentialsGrant(config, { resource: ORDERS, scope: "nope" }))).error).toBe("invalid_scope");
    const { client: plain, secret: plainSecret } = await createClient(prisma, org.id, { grantTypes: ["client_credentials"], scope: "openid" });
    const plainConfig = await clientConfiguration(porta, org, plain, { secret: plainSecret!.value });
    expect((await oidcError(oidc.clientCredentialsGrant(plainConfig, { resource: ORDERS, scope: "orders:read" }))).error).toBe("invalid_target");
  });
});

describe("consent for an API resource", () => {
  it("asks the person for a resource's scopes, unless the resource needs no consent", async () => {
    const FREE = "https://api.example.com/free";
    const free = await api.post<{ id: string }>(`/organizations/${org.id}/api-resources`, { identifier: FREE, name: "Free", scopes: ["free:read"], consentRequired: false });
    expect(free.status).toBe(201);
    const { client, config } = await webClient();
    await grant(client.id, ordersId, ["orders:read"]);
    await grant(client.id, free.body.id, ["free:read"]);
    const jar = new CookieJar();
    const first: string[] = [];
    await codeFlowFor(config, org, { scope: "openid" }, undefined, { jar, prompts: first });
    expect(first).toEqual(["login", "consent"]);

    // The sign-in's grant has openid: the consent-free resource asks nothing more.
    const second: string[] = [];
    const { tokens } = await codeFlowFor(config, org, { scope: "openid free:read", resource: FREE }, undefined, { jar, prompts: second });
    expect(second).toEqual([]);
    expect((await verifyWithJwks(porta, org, tokens!.access_token, { audience: FREE })).payload.scope).toBe("free:read");

    // A resource that needs consent asks for its scopes.
    const third: string[] = [];
    await codeFlowFor(config, org, { scope: "openid orders:read", resource: ORDERS }, undefined, { jar, prompts: third });
    expect(third).toEqual(["consent"]);
  });
});

describe("a person's roles limit a resource's scopes", () => {
  const scopesOf = (payload: Record<string, unknown>) => (typeof payload.scope === "string" ? payload.scope.split(" ").filter(Boolean).sort() : []);

  it("grants the scopes the person's roles hold and leaves out the others, at the code grant and at each refresh", async () => {
    const prisma = porta.services.db.prisma;
    const { client, config } = await webClient();
    await grant(client.id, ordersId, ["orders:read", "orders:write"]);
    const reader = (await createUser(prisma, org.id)).id;
    const role = await grantByRole(org.id, reader, "orders-reader", ["orders:read"]);

    const { tokens } = await codeFlowFor(config, org, { scope: "openid offline_access orders:read orders:write", resource: ORDERS, prompt: "consent" }, undefined, { accountId: reader });
    const first = await verifyWithJwks(porta, org, tokens!.access_token, { audience: ORDERS });
    expect(first.payload.sub).toBe(reader);
    expect(scopesOf(first.payload)).toEqual(["orders:read"]);

    // Roles are read at each token: a permission taken from the role is gone at the next refresh.
    await prisma.rolePermission.deleteMany({ where: { roleId: role.id } });
    const refreshed = await oidc.refreshTokenGrant(config, tokens!.refresh_token!);
    expect(scopesOf((await verifyWithJwks(porta, org, refreshed.access_token, { audience: ORDERS })).payload)).toEqual([]);
  });

  it("a person without a role holding the scope gets a token without it", async () => {
    const prisma = porta.services.db.prisma;
    const { client, config } = await webClient();
    await grant(client.id, ordersId, ["orders:read"]);
    const nobody = (await createUser(prisma, org.id)).id;
    const { tokens } = await codeFlowFor(config, org, { scope: "openid orders:read", resource: ORDERS }, undefined, { accountId: nobody });
    const { payload } = await verifyWithJwks(porta, org, tokens!.access_token, { audience: ORDERS });
    expect(payload.sub).toBe(nobody);
    expect(scopesOf(payload)).toEqual([]);
  });

  it("a role of another organization grants nothing here, even when a row ties the person to it", async () => {
    const prisma = porta.services.db.prisma;
    const { client, config } = await webClient();
    await grant(client.id, ordersId, ["orders:read", "orders:write"]);
    const person = (await createUser(prisma, org.id)).id;
    await grantByRole(org.id, person, "orders-reader-2", ["orders:read"]);
    // The Admin API refuses such an assignment (422); written directly, it must still not count.
    await grantByRole(other.id, person, "foreign-writer", ["orders:write"]);
    const { tokens } = await codeFlowFor(config, org, { scope: "openid orders:read orders:write", resource: ORDERS }, undefined, { accountId: person });
    expect(scopesOf((await verifyWithJwks(porta, org, tokens!.access_token, { audience: ORDERS })).payload)).toEqual(["orders:read"]);
  });

  it("another organization's resource identifier is invalid_target", async () => {
    const FOREIGN = "https://api.example.com/foreign";
    const foreign = await api.post<{ id: string }>(`/organizations/${other.id}/api-resources`, { identifier: FOREIGN, name: "Foreign", scopes: ["orders:read"] });
    expect(foreign.status).toBe(201);
    const { client: foreignClient } = await webClient(other);
    await grant(foreignClient.id, foreign.body.id, ["orders:read"]);
    const { config } = await webClient();
    expect(await codeFlowFor(config, org, { scope: "openid orders:read", resource: FOREIGN })).toEqual({ error: "invalid_target" });
  });

  it("a machine client's token is limited by its grant only", async () => {
    const prisma = porta.services.db.prisma;
    const { client, secret } = await createClient(prisma, org.id, { grantTypes: ["client_credentials"], scope: "openid" });
    await grant(client.id, ordersId, ["orders:read", "orders:admin"]);
    const config = await clientConfiguration(porta, org, client, { secret: secret!.value });
    const tokens = await oidc.clientCredentialsGrant(config, { resource: ORDERS, scope: "orders:read orders:admin" });
    expect(tokens.scope?.split(" ").sort()).toEqual(["orders:admin", "orders:read"]);
  });

  it("a refresh keeps its resource: narrower scopes work, wider ones and another resource are refused", async () => {
    const OTHER_API = "https://api.example.com/second";
    const second = await api.post<{ id: string }>(`/organizations/${org.id}/api-resources`, { identifier: OTHER_API, name: "Second", scopes: ["orders:read"] });
    expect(second.status).toBe(201);
    const { client, config } = await webClient();
    await grant(client.id, ordersId, ["orders:read", "orders:write", "orders:admin"]);
    await grant(client.id, second.body.id, ["orders:read"]);
    const { tokens } = await codeFlowFor(config, org, { scope: "openid offline_access orders:read orders:write", resource: ORDERS, prompt: "consent" });
    expect(scopesOf((await verifyWithJwks(porta, org, tokens!.access_token, { audience: ORDERS })).payload)).toEqual(["orders:read", "orders:write"]);

    const narrower = await oidc.refreshTokenGrant(config, tokens!.refresh_token!, { scope: "orders:read" });
    const narrowed = await verifyWithJwks(porta, org, narrower.access_token, { audience: ORDERS });
    expect(scopesOf(narrowed.payload)).toEqual(["orders:read"]);

    // orders:admin is granted to the client and held by the person, but was not in the refresh token.
    expect((await oidcError(oidc.refreshTokenGrant(config, narrower.refresh_token!, { scope: "orders:read orders:admin" }))).error).toBe("invalid_scope");
    // The refresh token itself still carries what it was issued with.
    const again = await oidc.refreshTokenGrant(config, narrower.refresh_token!);
    expect(scopesOf((await verifyWithJwks(porta, org, again.access_token, { audience: ORDERS })).payload)).toEqual(["orders:read", "orders:write"]);
    // Another resource, even one the client was granted, is not the refresh token's.
    expect((await oidcError(oidc.refreshTokenGrant(config, again.refresh_token!, { resource: OTHER_API }))).error).toBe("invalid_target");
  });
});

describe("API resources open to dynamically registered clients", () => {
  /** A public client registered at the organization's open registration endpoint, as an MCP client registers itself. */
  async function register(at: OrgRef, extra: Record<string, string> = {}) {
    const answer = await fetch(`${issuerOf(porta, at)}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: [CB], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"], client_name: "An MCP client", ...extra }),
    });
    return { status: answer.status, body: (await answer.json()) as { client_id: string; scope?: string; error?: string } };
  }
  async function registeredClient(at: OrgRef, extra: Record<string, string> = {}) {
    const { status, body } = await register(at, extra);
    expect(status, JSON.stringify(body)).toBe(201);
    return { client: { id: body.client_id, scope: body.scope }, config: await clientConfiguration(porta, at, { id: body.client_id }) };
  }

  it("gives a registered client a token for a resource open to it, with the scopes it asks that the resource defines, and consent asked", async () => {
    const prisma = porta.services.db.prisma;
    const open = await createOrganization(prisma);
    await prisma.organization.update({ where: { id: open.id }, data: { registrationPolicy: { enabled: true, requireInitialAccessToken: false } } });
    const openUserId = (await createUser(prisma, open.id)).id;
    // A person's token carries only the scopes their roles grant, open resource or not.
    await grantByRole(open.id, openUserId, "mcp-user", ["tools:read", "tools:call"]);
    const MCP = "http://localhost:3961/mcp";
    const CLOSED = "https://api.example.com/closed";
    const mcp = await api.post<{ id: string; openToDynamicClients: boolean }>(`/organizations/${open.id}/api-resources`, { identifier: MCP, name: "MCP", scopes: ["tools:read", "tools:call"], openToDynamicClients: true });
    expect(mcp.status, JSON.stringify(mcp.body)).toBe(201);
    expect(mcp.body.openToDynamicClients).toBe(true);
    expect((await api.post(`/organizations/${open.id}/api-resources`, { identifier: CLOSED, name: "Closed", scopes: ["x"] })).status).toBe(201);

    // MCP clients register with the scopes they will ask for (the 401's scope): the resource's
    // scopes are granted per resource at the token, not kept in the client's own scope.
    const { client, config } = await registeredClient(open, { scope: "openid tools:call" });
    expect(client.scope).toBe("openid");
    expect((await registeredClient(open, { scope: "tools:call tools:read" })).client.scope).not.toContain("tools:");
    // A scope neither the organization nor an open resource defines is still refused.
    expect(await register(open, { scope: "x" })).toMatchObject({ status: 400, body: { error: "invalid_client_metadata" } });
    const prompts: string[] = [];
    const { verifier, challenge } = await pkcePair();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: CB, code_challenge: challenge, code_challenge_method: "S256", scope: "tools:call other", resource: MCP });
    const callback = await followAuthorization(porta, open, url, { accountId: openUserId, prompts });
    expect(callback.searchParams.get("error")).toBeNull();
    expect(prompts).toEqual(["login", "consent"]);
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier });
    const { payload } = await verifyWithJwks(porta, open, tokens.access_token, { audience: MCP, typ: "at+jwt" });
    expect(payload).toMatchObject({ aud: MCP, client_id: client.id, sub: openUserId, scope: "tools:call" });

    // A resource not open to them is still invalid_target, and so is the open one for a client an administrator made.
    const closed = await oidc.buildAuthorizationUrl(config, { redirect_uri: CB, code_challenge: challenge, code_challenge_method: "S256", scope: "x", resource: CLOSED });
    expect((await followAuthorization(porta, open, closed, { accountId: openUserId })).searchParams.get("error")).toBe("invalid_target");
    const { config: madeConfig } = await webClient(open);
    const made = oidc.buildAuthorizationUrl(madeConfig, { redirect_uri: CB, code_challenge: challenge, code_challenge_method: "S256", scope: "tools:call", resource: MCP });
    expect((await followAuthorization(porta, open, made, { accountId: openUserId })).searchParams.get("error")).toBe("invalid_target");
  });

  it("is off by default, and cannot be combined with skipping consent", async () => {
    const plain = await api.post<{ id: string; openToDynamicClients: boolean }>(`/organizations/${org.id}/api-resources`, { identifier: "https://api.example.com/plain", name: "Plain", scopes: ["p"] });
    expect(plain.body.openToDynamicClients).toBe(false);
    const both = await api.post<{ error: { details: Array<{ field: string }> } }>(`/organizations/${org.id}/api-resources`, {
      identifier: "https://api.example.com/both",
      name: "Both",
      openToDynamicClients: true,
      consentRequired: false,
    });
    expect(both.status).toBe(422);
    expect(both.body.error.details.map((d) => d.field)).toContain("openToDynamicClients");
    const free = await api.post<{ id: string }>(`/organizations/${org.id}/api-resources`, { identifier: "https://api.example.com/free2", name: "Free", consentRequired: false });
    expect((await api.put(`/api-resources/${free.body.id}`, { openToDynamicClients: true })).status).toBe(422);
    expect((await api.put(`/api-resources/${plain.body.id}`, { openToDynamicClients: true })).status).toBe(200);
    expect((await api.put(`/api-resources/${plain.body.id}`, { consentRequired: false })).status).toBe(422);
  });
});
