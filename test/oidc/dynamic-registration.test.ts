import { exportJWK, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createOrganization, createUser } from "../support/factories";
import { clientConfiguration, codeFlow, issuerOf, type OrgRef } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";
import { getOrganizationBySlug } from "~/.server/directory/organizations";
import { registrationPolicyOf } from "~/schemas/registration";

/**
 * Dynamic client registration (RFC 7591 / RFC 7592, decision 054): off until an
 * administrator turns it on for an organization; then a client registers with an initial access
 * token, signs a person in like any other client, and reads, changes and deletes itself with its
 * registration access token. Everything it does is on the audit record.
 */
const CB = "http://127.0.0.1:33418/callback";
let porta: TestPorta;
let api: ReturnType<typeof adminApi>;

beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
});
afterAll(async () => {
  await porta?.stop();
});

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

async function send(method: string, url: string, body?: unknown, token?: string, raw?: string): Promise<Answer> {
  const res = await fetch(url, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined || raw !== undefined ? { "content-type": "application/json" } : {}) },
    body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

const register = (org: Pick<OrgRef, "slug">, metadata: unknown, token?: string) => send("POST", `${issuerOf(porta, org)}/register`, metadata, token);

async function discovery(org: Pick<OrgRef, "slug">): Promise<Record<string, unknown>> {
  return (await fetch(`${issuerOf(porta, org)}/.well-known/openid-configuration`)).json() as Promise<Record<string, unknown>>;
}

async function enable(org: OrgRef, policy: Record<string, unknown> = {}) {
  const res = await api.put(`/organizations/${org.id}/registration-policy`, { enabled: true, ...policy });
  expect(res.status).toBe(200);
}

async function issueToken(org: OrgRef, body: Record<string, unknown> = {}): Promise<{ id: string; token: string }> {
  const res = await api.post<{ id: string; token: string; status: string }>(`/organizations/${org.id}/registration-tokens`, body);
  expect(res.status).toBe(201);
  expect(res.body.status).toBe("active");
  return res.body;
}

const AGENT = { client_name: "Agent", redirect_uris: [CB], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"], scope: "openid offline_access" };

describe("dynamic client registration", () => {
  it("changing the policy leaves no stale copy of the organization in the cache (its version moved on)", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const cached = () => getOrganizationBySlug(porta.services.db.prisma, porta.services.cache, org.slug);
    const before = (await cached())!;
    await enable(org);
    const after = (await cached())!;
    expect(after.version).toBe(before.version + 1);
    expect(registrationPolicyOf(after.registrationPolicy).enabled).toBe(true);
  });

  it("is off by default: the endpoint is 404 and discovery does not name it", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    expect((await register(org, AGENT)).status).toBe(404);
    // Made without the provider (a pool miss), from the template of organizations without registration.
    await porta.services.keys.providerJwks(org.id);
    await porta.services.oidc.invalidate(org.id);
    expect((await discovery(org)).registration_endpoint).toBeUndefined();
    expect(porta.services.oidc.peek(org.slug)).toBeUndefined();
    const policy = await api.get<{ enabled: boolean; requireInitialAccessToken: boolean; allowedGrantTypes: string[] }>(`/organizations/${org.id}/registration-policy`);
    expect(policy.body).toMatchObject({ enabled: false, requireInitialAccessToken: true, allowedGrantTypes: ["authorization_code", "refresh_token"] });
  });

  it("registers a client with an initial access token, which then signs a person in with PKCE, and appears among the organization's clients", async () => {
    const prisma = porta.services.db.prisma;
    const org = await createOrganization(prisma);
    const userId = (await createUser(prisma, org.id)).id;
    await enable(org);
    // Discovery names the endpoint both when made without the provider (a pool miss) and by the provider itself.
    await porta.services.keys.providerJwks(org.id);
    await porta.services.oidc.invalidate(org.id);
    const fast = await discovery(org);
    expect(porta.services.oidc.peek(org.slug)).toBeUndefined();
    expect(fast.registration_endpoint).toBe(`${issuerOf(porta, org)}/register`);
    expect(fast).toEqual(await (await fetch(`${issuerOf(porta, org)}/.well-known/openid-configuration?via=provider`)).json());
    const { id: tokenId, token } = await issueToken(org);

    const res = await register(org, AGENT, token);
    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const clientId = res.body.client_id as string;
    expect(res.body).toMatchObject({ redirect_uris: [CB], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"], response_types: ["code"] });
    expect(res.body.client_secret).toBeUndefined();
    expect(res.body.registration_access_token).toEqual(expect.any(String));
    expect(res.body.registration_client_uri).toBe(`${issuerOf(porta, org)}/register/${clientId}`);

    const config = await clientConfiguration(porta, org, { id: clientId });
    const tokens = await codeFlow(porta, org, config, { accountId: userId, scope: "openid offline_access", redirectUri: CB, params: { prompt: "consent" } });
    expect(tokens.access_token).toBeTruthy();
    expect(tokens.refresh_token).toBeTruthy();

    const listed = await api.get<{ data: Array<{ id: string; dynamicallyRegistered: boolean }> }>(`/clients?organizationId=${org.id}`);
    expect(listed.body.data).toEqual([expect.objectContaining({ id: clientId, dynamicallyRegistered: true })]);
    const entry = await prisma.auditEntry.findFirst({ where: { eventType: "client.registered", targetId: clientId } });
    expect(entry).toMatchObject({ organizationId: org.id, actorType: "anonymous" });
    expect((entry!.data as { initialAccessTokenId: string }).initialAccessTokenId).toBe(tokenId);
    expect(JSON.stringify(entry!.data)).not.toContain(res.body.registration_access_token as string);
    const tokenList = await api.get<{ data: Array<{ id: string; uses: number }> }>(`/organizations/${org.id}/registration-tokens`);
    expect(tokenList.body.data).toEqual([expect.objectContaining({ id: tokenId, uses: 1 })]);
  });

  it("gives a confidential client its secret once, and the client authenticates with it", async () => {
    const prisma = porta.services.db.prisma;
    const org = await createOrganization(prisma);
    const userId = (await createUser(prisma, org.id)).id;
    await enable(org);
    const { token } = await issueToken(org);
    const res = await register(org, { redirect_uris: ["https://agent.example.com/cb"], scope: "openid" }, token);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ token_endpoint_auth_method: "client_secret_basic", client_secret_expires_at: 0, client_name: "Registered client" });
    const config = await clientConfiguration(porta, org, { id: res.body.client_id as string }, { secret: res.body.client_secret as string });
    const tokens = await codeFlow(porta, org, config, { accountId: userId, scope: "openid", redirectUri: "https://agent.example.com/cb" });
    expect(tokens.id_token).toBeTruthy();

    // A client that signs with its own key registers the public half and gets no secret.
    const { publicKey } = await generateKeyPair("ES256", { extractable: true });
    const jwk = { ...(await exportJWK(publicKey)), kid: "agent-1" };
    const signer = await register(org, { redirect_uris: ["https://agent.example.com/cb"], token_endpoint_auth_method: "private_key_jwt", jwks: { keys: [jwk] } }, token);
    expect(signer.status).toBe(201);
    expect(signer.body).toMatchObject({ token_endpoint_auth_method: "private_key_jwt", jwks: { keys: [expect.objectContaining({ kid: "agent-1" })] } });
    expect(signer.body.client_secret).toBeUndefined();
    const keyless = await register(org, { redirect_uris: ["https://agent.example.com/cb"], token_endpoint_auth_method: "private_key_jwt" }, token);
    expect(keyless).toMatchObject({ status: 400, body: { error: "invalid_client_metadata" } });
  });

  it("reads, updates and deletes the client with its registration access token (RFC 7592), audited", async () => {
    const prisma = porta.services.db.prisma;
    const org = await createOrganization(prisma);
    await enable(org);
    const { token } = await issueToken(org);
    const created = await register(org, AGENT, token);
    const uri = created.body.registration_client_uri as string;
    const rat = created.body.registration_access_token as string;
    const clientId = created.body.client_id as string;

    const read = await send("GET", uri, undefined, rat);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ client_id: clientId, client_name: "Agent", redirect_uris: [CB] });
    const wrong = await send("GET", uri, undefined, token);
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("www-authenticate")).toMatch(/^Bearer /);

    const other = "http://localhost:9000/cb";
    const updated = await send("PUT", uri, { ...AGENT, client_id: clientId, client_name: "Agent 2", redirect_uris: [CB, other] }, rat);
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ client_name: "Agent 2", redirect_uris: [CB, other] });
    const rotated = updated.body.registration_access_token as string;
    expect(rotated).toEqual(expect.any(String));
    expect((await send("GET", uri, undefined, rat)).status).toBe(401);
    expect((await api.get<{ name: string }>(`/clients/${clientId}`)).body.name).toBe("Agent 2");

    const badUpdate = await send("PUT", uri, { ...AGENT, client_id: clientId, token_endpoint_auth_method: "client_secret_basic" }, rotated);
    expect(badUpdate.status).toBe(400);
    expect(badUpdate.body.error).toBe("invalid_client_metadata");

    expect((await send("DELETE", uri, undefined, rotated)).status).toBe(204);
    expect((await send("GET", uri, undefined, rotated)).status).toBe(401);
    expect((await api.get(`/clients/${clientId}`)).status).toBe(404);
    const events = (await prisma.auditEntry.findMany({ where: { targetId: clientId }, orderBy: { createdAt: "asc" } })).map((e) => [e.eventType, e.actorType]);
    expect(events).toEqual([
      ["client.registered", "anonymous"],
      ["client.registration_updated", "client"],
      ["client.registration_deleted", "client"],
    ]);
  });

  it("refuses redirect URIs and grant types the policy does not allow", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    await enable(org);
    const { token } = await issueToken(org);
    for (const uri of ["http://agent.example.com/cb", "https://agent.example.com/cb#frag", "https://*.example.com/cb", "com.example.app:/cb", "not a url"]) {
      const res = await register(org, { ...AGENT, redirect_uris: [uri] }, token);
      expect(res.status, uri).toBe(400);
      expect(res.body.error, uri).toBe("invalid_redirect_uri");
    }
    const credentials = await register(org, { ...AGENT, token_endpoint_auth_method: "client_secret_basic", grant_types: ["client_credentials"] }, token);
    expect(credentials.status).toBe(400);
    expect(credentials.body).toMatchObject({ error: "invalid_client_metadata", error_description: expect.stringContaining("client_credentials") });
    const implicit = await register(org, { ...AGENT, grant_types: ["implicit"] }, token);
    expect(implicit.body.error).toBe("invalid_client_metadata");
    const postMethod = await register(org, { ...AGENT, token_endpoint_auth_method: "client_secret_post" }, token);
    expect(postMethod.body.error).toBe("invalid_client_metadata");
    const statement = await register(org, { ...AGENT, software_statement: "not-a-jwt" }, token);
    expect(statement.body.error).toBe("invalid_software_statement");
    // Nothing was made, and each refusal used no registration of the token.
    expect(await porta.services.db.prisma.client.count({ where: { organizationId: org.id } })).toBe(0);
    const refused = await porta.services.db.prisma.auditEntry.count({ where: { organizationId: org.id, eventType: "client.registration_refused" } });
    expect(refused).toBe(9);
  });

  it("refuses a missing, unknown, expired, revoked or used-up initial access token with 401", async () => {
    const prisma = porta.services.db.prisma;
    const org = await createOrganization(prisma);
    await enable(org);
    const refused = async (token?: string) => {
      const res = await register(org, AGENT, token);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe(token ? `Bearer error="invalid_token", error_description="${String(res.body.error_description)}"` : "Bearer");
      expect(res.body.error).toBe("invalid_token");
    };
    await refused(undefined);
    await refused("no-such-token");

    const expired = await issueToken(org);
    await prisma.registrationToken.update({ where: { id: expired.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    await refused(expired.token);

    const revoked = await issueToken(org, { label: "For the agents" });
    expect((await api.delete<{ status: string }>(`/organizations/${org.id}/registration-tokens/${revoked.id}`)).body.status).toBe("revoked");
    await refused(revoked.token);
    // The audit log names a token by its label, else by the characters an operator sees.
    const named = await api.get<{ data: Array<{ names: { target: { name: string | null } | null } }> }>(`/audit?targetType=registration_token&targetId=${revoked.id}`);
    expect(named.body.data.map((e) => e.names.target?.name)).toEqual(["For the agents", "For the agents"]);
    const unnamed = await api.get<{ data: Array<{ names: { target: { name: string | null } | null } }> }>(`/audit?targetType=registration_token&targetId=${expired.id}`);
    expect(unnamed.body.data.map((e) => e.names.target?.name)).toEqual([`…${expired.token.slice(-4)}`]);

    const once = await issueToken(org, { maxUses: 1 });
    expect((await register(org, AGENT, once.token)).status).toBe(201);
    await refused(once.token);
    // Racing for the last use: exactly one registration has it.
    const twice = await issueToken(org, { maxUses: 2 });
    const raced = await Promise.all([0, 1, 2, 3].map(() => register(org, AGENT, twice.token)));
    expect(raced.map((r) => r.status).sort()).toEqual([201, 201, 401, 401]);

    // Another organization's token is no token here.
    const elsewhere = await createOrganization(prisma);
    await enable(elsewhere);
    await refused((await issueToken(elsewhere)).token);

    const audited = await prisma.auditEntry.findMany({ where: { eventType: { in: ["registration_token.created", "registration_token.revoked"] }, organizationId: org.id } });
    expect(audited.map((e) => e.eventType).sort()).toEqual(["registration_token.created", "registration_token.created", "registration_token.created", "registration_token.created", "registration_token.revoked"]);
  });

  it("answers a browser's CORS preflight and calls from any origin (no cookies are involved)", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    await enable(org, { requireInitialAccessToken: false });
    const preflight = await fetch(`${issuerOf(porta, org)}/register`, {
      method: "OPTIONS",
      headers: { origin: "https://inspector.example", "access-control-request-method": "POST", "access-control-request-headers": "content-type, authorization" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("Authorization");
    const res = await fetch(`${issuerOf(porta, org)}/register`, {
      method: "POST",
      headers: { origin: "https://inspector.example", "content-type": "application/json" },
      body: JSON.stringify(AGENT),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-credentials")).toBeNull();
  });

  it("registers without a token when the policy is open", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    await enable(org, { requireInitialAccessToken: false });
    expect((await register(org, AGENT)).status).toBe(201);
    // Turned off again: gone from discovery and the endpoint, at once.
    expect((await api.put(`/organizations/${org.id}/registration-policy`, { enabled: false })).status).toBe(200);
    expect((await register(org, AGENT)).status).toBe(404);
    expect((await discovery(org)).registration_endpoint).toBeUndefined();
  });

  it("answers hostile input with 4xx, never 500", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    await enable(org);
    const { token } = await issueToken(org);
    const nul = await register(org, { ...AGENT, client_name: "bad\u0000name" }, token);
    expect(nul.status).toBe(400);
    expect(nul.body.error).toBe("invalid_client_metadata");
    const notJson = await send("POST", `${issuerOf(porta, org)}/register`, undefined, token, "{not json");
    expect(notJson.status).toBe(400);
    const array = await register(org, [AGENT], token);
    expect(array.status).toBe(400);
    const huge = await send("POST", `${issuerOf(porta, org)}/register`, undefined, token, JSON.stringify({ ...AGENT, client_name: "x".repeat(200_000) }));
    expect(huge.status).toBe(413);
    const longName = await register(org, { ...AGENT, client_name: "x".repeat(5000) }, token);
    expect(longName.status).toBe(400);
    const wrongTypes = await register(org, { ...AGENT, redirect_uris: "https://a.example.com/cb", jwks: { keys: [{ kty: "RSA" }] } }, token);
    expect(wrongTypes.status).toBe(400);
    const badJwks = await register(org, { ...AGENT, token_endpoint_auth_method: "private_key_jwt", jwks: { keys: [{ kty: "RSA" }] } }, token);
    expect(badJwks.status).toBe(400);
    expect(badJwks.body.error).toBe("invalid_client_metadata");
  });

  it("refuses an administrator turning registration on for the super-admin organization", async () => {
    const superAdmin = await porta.services.db.prisma.organization.findUniqueOrThrow({ where: { slug: porta.services.config.superAdminSlug } });
    const res = await api.put(`/organizations/${superAdmin.id}/registration-policy`, { enabled: true });
    expect(res.status).toBe(409);
  });

  it("limits registration requests per address", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    await enable(org, { requireInitialAccessToken: false });
    expect((await api.put("/config/rateLimits.clientRegistration.perIp", { value: { points: 2, windowMinutes: 15 } })).status).toBe(200);
    expect((await register(org, AGENT)).status).toBe(201);
    expect((await register(org, AGENT)).status).toBe(201);
    const limited = await register(org, AGENT);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
