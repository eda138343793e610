import { createHash, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens, type ApiResponse } from "../support/admin-api";
import { createApplication, createOrganization } from "../support/factories";
import { basicAuth, postForm } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";
import { loginControls, openLoginPage } from "../login/helpers";
import { BAD_CURSOR, expect422, expectError, FORGED_CURSOR, OVERSIZE } from "./helpers";
import { expectAllRejected, resourceFingerprint, withoutPermission } from "./resources";
import type { Page } from "~/.server/admin/http/pagination";

/**
 * Clients through the Admin API, against a real server with a real admin token: every
 * operation, secrets shown once and stored hashed, the login-method override, ETags, 422 for
 * bad input that writes nothing, the permission check, and what each change does at the
 * organization's token endpoint and login page.
 */
interface Client {
  id: string;
  organizationId: string;
  applicationId: string | null;
  name: string;
  clientType: "confidential" | "public";
  applicationType: string;
  tokenEndpointAuthMethod: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  grantTypes: string[];
  scope: string;
  loginMethods: string[] | null;
  effectiveLoginMethods: string[];
  adminApiAccess: boolean;
  allowedCorsOrigins: string[];
  skipConsent: boolean;
  accessTokenTtlSeconds: number | null;
  refreshTokenTtlSeconds: number | null;
  status: string;
  secret?: { id: string; value: string; hint: string };
}
interface Secret {
  id: string;
  hint: string;
  label: string | null;
  status: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  value?: string;
}
interface History {
  data: Array<{ eventType: string; actorType: string; data: Record<string, unknown> }>;
}

const RP = "https://rp.example.com/cb";
let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
let org: Awaited<ReturnType<typeof createOrganization>>;

beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  org = await createOrganization(porta.services.db.prisma, { defaultLoginMethods: ["magic_link"] });
});
afterAll(async () => {
  await porta?.stop();
});

async function create(body: Record<string, unknown>): Promise<ApiResponse<Client>> {
  const res = await api.post<Client>("/clients", { organizationId: org.id, name: "Machine", ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res;
}

const machine = () => create({ clientType: "confidential", grantTypes: ["client_credentials"], scope: "email" });

const tokenStatus = async (clientId: string, secret: string) => {
  const res = await postForm(`${porta.baseUrl}/${org.slug}/token`, { grant_type: "client_credentials" }, { authorization: basicAuth(clientId, secret) });
  return res.status === 200 ? 200 : `${res.status} ${String(res.body.error)}`;
};

describe("clients", () => {
  it("creates a confidential client whose secret is shown once, stored hashed and works at /{slug}/token", async () => {
    const created = await machine();
    const { secret, ...client } = created.body;
    expect(created.headers.get("etag")).toBe('"v1"');
    expect(client).toMatchObject({
      organizationId: org.id,
      applicationId: null,
      clientType: "confidential",
      tokenEndpointAuthMethod: "client_secret_basic",
      grantTypes: ["client_credentials"],
      scope: "email",
      loginMethods: null,
      effectiveLoginMethods: ["magic_link"],
      adminApiAccess: false,
      status: "active",
    });
    expect(client.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(secret).toEqual({ id: expect.any(String), value: expect.any(String), hint: secret!.value.slice(-4) });
    expect(secret!.value.length).toBeGreaterThanOrEqual(43);

    const stored = await porta.services.db.prisma.clientSecret.findUniqueOrThrow({ where: { id: secret!.id } });
    expect(stored.secretHash).toBe(createHash("sha256").update(secret!.value).digest("hex"));
    expect(JSON.stringify(stored)).not.toContain(secret!.value);

    expect(await tokenStatus(client.id, secret!.value)).toBe(200);
    const read = await api.get<Client>(`/clients/${client.id}`);
    expect(read.body).toEqual(client);
    expect(JSON.stringify(read.body)).not.toContain(secret!.value);

    // Neither the audit log nor the server's log ever holds the value.
    const audit = await porta.services.db.prisma.auditEntry.findMany({ where: { targetId: client.id } });
    expect(audit.map((a) => a.eventType)).toEqual(["client.created"]);
    expect(JSON.stringify(audit)).not.toContain(secret!.value);
    expect(porta.logs.text()).not.toContain(secret!.value);
  });

  it("generates further secrets, lists them without values, and revokes one at once", async () => {
    const { body: client } = await machine();
    const first = client.secret!;
    const second = await api.post<Secret>(`/clients/${client.id}/secrets`, { label: "rotation", expiresAt: "2999-01-01T00:00:00Z" });
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({ label: "rotation", status: "active", expiresAt: "2999-01-01T00:00:00.000Z", revokedAt: null });
    expect(second.body.hint).toBe(second.body.value!.slice(-4));
    const third = await api.post<Secret>(`/clients/${client.id}/secrets`);
    expect(third.status).toBe(201);

    for (const value of [first.value, second.body.value!, third.body.value!]) expect(await tokenStatus(client.id, value)).toBe(200);

    const list = await api.get<Page<Secret>>(`/clients/${client.id}/secrets`);
    expect(list.body.total).toBe(3);
    for (const s of list.body.data) {
      expect(Object.keys(s).sort()).toEqual(["createdAt", "expiresAt", "hint", "id", "label", "revokedAt", "status"]);
    }
    const listed = JSON.stringify(list.body);
    for (const value of [first.value, second.body.value!, third.body.value!]) expect(listed).not.toContain(value);

    expect((await api.delete(`/clients/${client.id}/secrets/${first.id}`)).status).toBe(204);
    expect(await tokenStatus(client.id, first.value)).toBe("401 invalid_client");
    expect(await tokenStatus(client.id, second.body.value!)).toBe(200);
    const afterRevoke = await api.get<Page<Secret>>(`/clients/${client.id}/secrets`);
    const revoked = afterRevoke.body.data.find((s) => s.id === first.id)!;
    expect(revoked.status).toBe("revoked");
    expect(revoked.revokedAt).not.toBeNull();
    expect((await api.delete(`/clients/${client.id}/secrets/${first.id}`)).status).toBe(204);
    expectError(await api.delete(`/clients/${client.id}/secrets/${randomUUID()}`), 404, "not_found");

    const history = await api.get<History>(`/clients/${client.id}/history?limit=10`);
    expect(history.body.data.map((e) => e.eventType)).toEqual([
      "client.secret_revoked",
      "client.secret_revoked",
      "client.secret_generated",
      "client.secret_generated",
      "client.created",
    ]);
    const everything = JSON.stringify(await porta.services.db.prisma.auditEntry.findMany({ where: { targetId: client.id } }));
    for (const value of [first.value, second.body.value!, third.body.value!]) expect(everything).not.toContain(value);
  });

  it("creates public clients without secrets", async () => {
    const res = await create({
      clientType: "public",
      applicationType: "native",
      redirectUris: ["http://127.0.0.1/callback", "com.example.app:/oauth"],
      scope: "openid profile",
    });
    expect(res.body.secret).toBeUndefined();
    expect(res.body).toMatchObject({ clientType: "public", tokenEndpointAuthMethod: "none", grantTypes: ["authorization_code", "refresh_token"] });
    expectError(await api.post(`/clients/${res.body.id}/secrets`), 409, "public_client");
    expect(await porta.services.db.prisma.clientSecret.count({ where: { clientId: res.body.id } })).toBe(0);
    const web = await create({ clientType: "public", redirectUris: ["http://localhost:5173/cb", RP] });
    expect(web.body.applicationType).toBe("web");
  });

  it("updates with If-Match: one of two writers with the same ETag wins, the other gets 409", async () => {
    const { body: client } = await create({ clientType: "confidential", redirectUris: [RP] });
    const results = await Promise.all(
      [["https://a.example.com/cb"], ["https://b.example.com/cb"]].map((redirectUris) => api.put(`/clients/${client.id}`, { redirectUris }, { "if-match": '"v1"' })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    expectError(results.find((r) => r.status === 409)!, 409, "etag_mismatch");
    const winner = results.find((r) => r.status === 200)! as ApiResponse<Client>;
    expect(winner.headers.get("etag")).toBe('"v2"');

    const updated = await api.put<Client>(`/clients/${client.id}`, { name: "Renamed", scope: " openid   email ", loginMethods: ["password"] }, { "if-match": '"v2"' });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: "Renamed", scope: "openid email", loginMethods: ["password"], effectiveLoginMethods: ["password"] });
    // The rules hold for the client as it would be after the change.
    expect422(await api.put(`/clients/${client.id}`, { redirectUris: [] }), "redirectUris");
    expect422(await api.put(`/clients/${client.id}`, { scope: "email" }), "scope");
    expect422(await api.put(`/clients/${client.id}`, { applicationType: "native", redirectUris: ["http://rp.example.com/cb"] }), "redirectUris.0");
    expectError(await api.delete(`/clients/${client.id}`, { "if-match": '"v2"' }), 409, "etag_mismatch");
    expect((await api.get(`/clients/${client.id}`)).headers.get("etag")).toBe('"v3"');
  });

  it("sets CORS origins, skip-consent and token lifetimes with If-Match, audited, and goes back to the defaults with null", async () => {
    const { body: created } = await create({ clientType: "public", redirectUris: [RP], allowedCorsOrigins: ["https://spa.example.com"], skipConsent: true, accessTokenTtlSeconds: 600 });
    expect(created).toMatchObject({ allowedCorsOrigins: ["https://spa.example.com"], skipConsent: true, accessTokenTtlSeconds: 600, refreshTokenTtlSeconds: null });
    const change = { allowedCorsOrigins: ["https://spa.example.com", "http://localhost:5173"], skipConsent: false, accessTokenTtlSeconds: null, refreshTokenTtlSeconds: 7200 };
    const updated = await api.put<Client>(`/clients/${created.id}`, change, { "if-match": '"v1"' });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body).toMatchObject(change);
    expect(updated.headers.get("etag")).toBe('"v2"');
    expectError(await api.put(`/clients/${created.id}`, { skipConsent: true }, { "if-match": '"v1"' }), 409, "etag_mismatch");
    expect((await api.get<Client>(`/clients/${created.id}`)).body).toMatchObject(change);
    const history = await api.get<History>(`/clients/${created.id}/history`);
    expect(history.body.data.find((e) => e.eventType === "client.updated")?.data).toMatchObject({ change });
    // A client made without them has the defaults.
    const { body: plain } = await create({ clientType: "confidential", redirectUris: [RP] });
    expect(plain).toMatchObject({ allowedCorsOrigins: [], skipConsent: false, accessTokenTtlSeconds: null, refreshTokenTtlSeconds: null });
  });

  it("a change of the origins or the lifetime holds at the token endpoint at once", async () => {
    const { body: client } = await machine();
    const secret = client.secret!.value;
    const fromSpa = async () => {
      const res = await postForm(`${porta.baseUrl}/${org.slug}/auth/token`, { grant_type: "client_credentials" }, { authorization: basicAuth(client.id, secret), origin: "https://spa.example.com" });
      return { status: res.status, allowed: res.headers.get("access-control-allow-origin"), expiresIn: res.body.expires_in };
    };
    expect(await fromSpa()).toMatchObject({ status: 400, allowed: null });
    expect((await api.put(`/clients/${client.id}`, { allowedCorsOrigins: ["https://spa.example.com"], accessTokenTtlSeconds: 300 })).status).toBe(200);
    expect(await fromSpa()).toEqual({ status: 200, allowed: "https://spa.example.com", expiresIn: 300 });
    expect((await api.put(`/clients/${client.id}`, { allowedCorsOrigins: [], accessTokenTtlSeconds: null })).status).toBe(200);
    expect(await fromSpa()).toMatchObject({ status: 400, allowed: null });
  });

  it("refuses bad CORS origins, lifetimes out of bounds and skip-consent for a native client with 422, writing nothing", async () => {
    const { body: client } = await create({ clientType: "public", redirectUris: [RP] });
    const c = `/clients/${client.id}`;
    const base = { organizationId: org.id, name: "x", clientType: "public", redirectUris: [RP] };
    await expectAllRejected(porta, api, [
      { label: "origin with a path", method: "PUT", path: c, body: { allowedCorsOrigins: ["https://spa.example.com/app"] }, field: "allowedCorsOrigins.0" },
      { label: "origin with a trailing slash", method: "PUT", path: c, body: { allowedCorsOrigins: ["https://spa.example.com/"] }, field: "allowedCorsOrigins.0" },
      { label: "origin wildcard", method: "PUT", path: c, body: { allowedCorsOrigins: ["*"] }, field: "allowedCorsOrigins.0" },
      { label: "origin http non-loopback", method: "PUT", path: c, body: { allowedCorsOrigins: ["http://spa.example.com"] }, field: "allowedCorsOrigins.0" },
      { label: "origin other scheme", method: "PUT", path: c, body: { allowedCorsOrigins: ["ftp://spa.example.com"] }, field: "allowedCorsOrigins.0" },
      { label: "origin repeated", method: "PUT", path: c, body: { allowedCorsOrigins: ["https://a.example.com", "https://a.example.com"] }, field: "allowedCorsOrigins" },
      { label: "origins not a list", method: "POST", path: "/clients", body: { ...base, allowedCorsOrigins: "https://a.example.com" }, field: "allowedCorsOrigins" },
      { label: "skip-consent not a boolean", method: "PUT", path: c, body: { skipConsent: "yes" }, field: "skipConsent" },
      { label: "skip-consent native", method: "POST", path: "/clients", body: { ...base, applicationType: "native", redirectUris: ["http://127.0.0.1:7000/cb"], skipConsent: true }, field: "skipConsent" },
      { label: "native after skip-consent", method: "PUT", path: c, body: { applicationType: "native", redirectUris: ["http://127.0.0.1:7000/cb"], skipConsent: true }, field: "skipConsent" },
      { label: "access lifetime too short", method: "PUT", path: c, body: { accessTokenTtlSeconds: 59 }, field: "accessTokenTtlSeconds" },
      { label: "access lifetime too long", method: "PUT", path: c, body: { accessTokenTtlSeconds: 86_401 }, field: "accessTokenTtlSeconds" },
      { label: "access lifetime fraction", method: "PUT", path: c, body: { accessTokenTtlSeconds: 90.5 }, field: "accessTokenTtlSeconds" },
      { label: "access lifetime text", method: "POST", path: "/clients", body: { ...base, accessTokenTtlSeconds: "3600" }, field: "accessTokenTtlSeconds" },
      { label: "refresh lifetime beyond the grant", method: "PUT", path: c, body: { refreshTokenTtlSeconds: 14 * 24 * 3600 + 1 }, field: "refreshTokenTtlSeconds" },
      { label: "refresh lifetime negative", method: "PUT", path: c, body: { refreshTokenTtlSeconds: -1 }, field: "refreshTokenTtlSeconds" },
    ]);
    expect((await api.get(c)).headers.get("etag")).toBe('"v1"');
  });

  it("sets and clears the login-method override, and the login page follows", async () => {
    const { body: client } = await create({ clientType: "confidential", redirectUris: [RP], loginMethods: ["password"] });
    expect(client).toMatchObject({ loginMethods: ["password"], effectiveLoginMethods: ["password"] });
    const tenant = { org, client: { id: client.id }, secret: client.secret!.value, issuer: `${porta.baseUrl}/${org.slug}`, redirectUri: RP };
    const passwordOnly = await openLoginPage(tenant);
    expect(loginControls(passwordOnly.html, passwordOnly.uid)).toMatchObject({ passwordField: true, magicLinkButton: false });

    const cleared = await api.delete<Client>(`/clients/${client.id}/login-methods`);
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ loginMethods: null, effectiveLoginMethods: ["magic_link"] });
    expect(cleared.headers.get("etag")).toBe('"v2"');
    const inherited = await openLoginPage(tenant);
    expect(loginControls(inherited.html, inherited.uid)).toMatchObject({ passwordField: false, magicLinkButton: true });

    const both = await api.put<Client>(`/clients/${client.id}/login-methods`, { loginMethods: ["magic_link", "password"] }, { "if-match": '"v2"' });
    expect(both.status).toBe(200);
    expect(both.body).toMatchObject({ loginMethods: ["magic_link", "password"], effectiveLoginMethods: ["password", "magic_link"] });
    const page = await openLoginPage(tenant);
    expect(loginControls(page.html, page.uid)).toMatchObject({ passwordField: true, magicLinkButton: true });
    expectError(await api.put(`/clients/${client.id}/login-methods`, { loginMethods: ["password"] }, { "if-match": '"v2"' }), 409, "etag_mismatch");

    const before = await resourceFingerprint(porta);
    for (const [body, field] of [
      [{ loginMethods: [] }, "loginMethods"],
      [{ loginMethods: ["sms"] }, "loginMethods.0"],
      [{ loginMethods: ["password", "password"] }, "loginMethods"],
      [{ loginMethods: "password" }, "loginMethods"],
      [{}, "loginMethods"],
    ] as const) {
      expect422(await api.put(`/clients/${client.id}/login-methods`, body), field, JSON.stringify(body));
    }
    expect(await resourceFingerprint(porta)).toEqual(before);
    const events = (await api.get<History>(`/clients/${client.id}/history`)).body.data.map((e) => e.eventType);
    expect(events).toEqual(["client.login_methods_updated", "client.login_methods_cleared", "client.created"]);
  });

  it("deactivates, activates and deletes clients, with effect at the token endpoint", async () => {
    const { body: client } = await machine();
    const secret = client.secret!.value;
    const off = await api.post<Client>(`/clients/${client.id}/deactivate`);
    expect(off.body.status).toBe("inactive");
    expect(await tokenStatus(client.id, secret)).toBe("401 invalid_client");
    const on = await api.post<Client>(`/clients/${client.id}/activate`, undefined, { "if-match": '"v2"' });
    expect(on.body.status).toBe("active");
    expect(await tokenStatus(client.id, secret)).toBe(200);

    expect((await api.delete(`/clients/${client.id}`)).status).toBe(204);
    expect(await tokenStatus(client.id, secret)).toBe("401 invalid_client");
    expectError(await api.get(`/clients/${client.id}`), 404, "not_found");
    expect(await porta.services.db.prisma.clientSecret.count({ where: { clientId: client.id } })).toBe(0);
    const events = await porta.services.db.prisma.auditEntry.findMany({ where: { targetId: client.id }, orderBy: { id: "asc" } });
    expect(events.map((e) => e.eventType)).toEqual(["client.created", "client.deactivated", "client.activated", "client.deleted"]);
  });

  it("lists clients by organization and application, in pages and by cursor", async () => {
    const app = await createApplication(porta.services.db.prisma, org.id);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await create({ clientType: "confidential", applicationId: app.id, grantTypes: ["client_credentials"] })).body.id);
    const byApp = await api.get<Page<Client>>(`/clients?applicationId=${app.id}`);
    expect(byApp.body.total).toBe(3);
    expect(byApp.body.data.map((c) => c.id)).toEqual(ids);
    expect(byApp.body.data.every((c) => c.secret === undefined)).toBe(true);
    const byOrg = await api.get<Page<Client>>(`/clients?organizationId=${org.id}&pageSize=2&page=2&order=desc`);
    expect(byOrg.body).toMatchObject({ page: 2, pageSize: 2 });
    expect(byOrg.body.data.every((c) => c.organizationId === org.id)).toBe(true);
    const walked: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await api.get<Page<Client>>(`/clients?applicationId=${app.id}&limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      walked.push(...page.body.data.map((c) => c.id));
      cursor = page.body.cursor;
    } while (cursor);
    expect(walked).toEqual(ids);
    // An application of another organization cannot hold this organization's client.
    const foreign = await createApplication(porta.services.db.prisma, (await createOrganization(porta.services.db.prisma)).id);
    expect422(await api.put(`/clients/${ids[0]}`, { applicationId: foreign.id }), "applicationId");
    expect((await api.put<Client>(`/clients/${ids[0]}`, { applicationId: null })).body.applicationId).toBeNull();
  });

  it("protects the shared admin client and answers 404 for unknown clients", async () => {
    expect((await api.get<Client>("/clients/porta-admin")).body.clientType).toBe("public");
    for (const [method, path] of [
      ["DELETE", "/clients/porta-admin"],
      ["POST", "/clients/porta-admin/deactivate"],
      ["PUT", "/clients/porta-admin/login-methods"],
    ] as const) {
      expectError(await api.call(method, path, method === "PUT" ? { loginMethods: ["magic_link"] } : undefined), 409, "protected_client");
    }
    for (const [method, path] of [
      ["GET", "/clients/nope"],
      ["PUT", "/clients/nope"],
      ["DELETE", "/clients/nope"],
      ["POST", "/clients/nope/activate"],
      ["GET", "/clients/nope/history"],
      ["GET", "/clients/nope/secrets"],
      ["POST", "/clients/nope/secrets"],
      ["DELETE", `/clients/nope/secrets/${randomUUID()}`],
      ["DELETE", "/clients/nope/login-methods"],
    ] as const) {
      expectError(await api.call(method, path, method === "PUT" ? { name: "x" } : undefined), 404, "not_found", `${method} ${path}`);
    }
  });

  it("marks clients as administration clients: the Admin API's in the super-admin organization, the organization's own door elsewhere", async () => {
    expect((await api.get<Client>("/clients/porta-admin")).body.adminApiAccess).toBe(true);
    const superAdminId = porta.bootstrap.organizationId;
    const admin = { organizationId: superAdminId, name: "Ops tool", clientType: "confidential", redirectUris: [RP], scope: "openid profile email roles" };

    const marked = await api.post<Client>("/clients", { ...admin, adminApiAccess: true });
    expect(marked.status, JSON.stringify(marked.body)).toBe(201);
    expect(marked.body.adminApiAccess).toBe(true);
    expect((await api.get<Client>(`/clients/${marked.body.id}`)).body.adminApiAccess).toBe(true);
    const unmarked = await api.put<Client>(`/clients/${marked.body.id}`, { adminApiAccess: false });
    expect(unmarked.status).toBe(200);
    expect(unmarked.body.adminApiAccess).toBe(false);
    const remarked = await api.put<Client>(`/clients/${marked.body.id}`, { adminApiAccess: true });
    expect(remarked.body.adminApiAccess).toBe(true);
    const audit = await porta.services.db.prisma.auditEntry.findMany({ where: { targetId: marked.body.id }, orderBy: { createdAt: "asc" } });
    expect(audit.map((a) => (a.data as { change?: { adminApiAccess?: boolean } }).change?.adminApiAccess)).toEqual([true, false, true]);
    // Unmarked by default, in the super-admin organization too.
    expect((await api.post<Client>("/clients", admin)).body.adminApiAccess).toBe(false);

    // Another organization's client may be marked too: it gets tokens for that organization's
    // own administration door (decision 090), never for the Admin API.
    const elsewhereMarked = await api.post<Client>("/clients", { organizationId: org.id, name: "Elsewhere", clientType: "confidential", redirectUris: [RP], scope: "openid profile email roles", adminApiAccess: true });
    expect(elsewhereMarked.status, JSON.stringify(elsewhereMarked.body)).toBe(201);
    expect(elsewhereMarked.body.adminApiAccess).toBe(true);

    const before = await resourceFingerprint(porta);
    const { body: elsewhere } = await create({ clientType: "confidential", redirectUris: [RP], scope: "openid profile email roles" });
    const afterCreate = await resourceFingerprint(porta);
    expect422(await api.put(`/clients/${elsewhere.id}`, { adminApiAccess: true, scope: "openid email" }), "scope");
    // An admin client signs service-admins in with the code flow and the admin scope.
    expect422(await api.post("/clients", { ...admin, scope: "openid profile email", adminApiAccess: true }), "scope");
    expect422(await api.post("/clients", { ...admin, redirectUris: [], grantTypes: ["client_credentials"], scope: "openid profile email roles", adminApiAccess: true }), "grantTypes");
    expect422(await api.put(`/clients/${marked.body.id}`, { scope: "openid email" }), "scope");
    expect422(await api.post("/clients", { ...admin, adminApiAccess: "yes" }), "adminApiAccess");
    expect(await resourceFingerprint(porta)).toEqual(afterCreate);
    expect(before).not.toEqual(afterCreate);
    // The shared admin client stays as it is.
    expectError(await api.put("/clients/porta-admin", { adminApiAccess: false }), 409, "protected_client");
  });

  it("rejects bad input on every route with 422 and field details, writing nothing", async () => {
    const { body: client } = await create({ clientType: "confidential", redirectUris: [RP] });
    const foreignApp = await createApplication(porta.services.db.prisma, (await createOrganization(porta.services.db.prisma)).id);
    const c = `/clients/${client.id}`;
    const base = { organizationId: org.id, name: "x", clientType: "confidential", redirectUris: [RP] };
    await expectAllRejected(porta, api, [
      { label: "organizationId not a UUID", method: "GET", path: "/clients?organizationId=acme", field: "query.organizationId" },
      { label: "unknown query", method: "GET", path: "/clients?secret=1", field: "query.secret" },
      { label: "garbage cursor", method: "GET", path: `/clients?cursor=${BAD_CURSOR}`, field: "cursor" },
      { label: "forged cursor", method: "GET", path: `/clients?cursor=${FORGED_CURSOR}`, field: "cursor" },
      { label: "wrong type", method: "POST", path: "/clients", body: { ...base, name: 7 }, field: "name" },
      { label: "unknown field", method: "POST", path: "/clients", body: { ...base, clientSecret: "mine" }, field: "clientSecret" },
      { label: "oversize name", method: "POST", path: "/clients", body: { ...base, name: OVERSIZE }, field: "name" },
      { label: "oversize URI", method: "POST", path: "/clients", body: { ...base, redirectUris: [`https://rp.example.com/${OVERSIZE}`] }, field: "redirectUris.0" },
      { label: "oversize scope", method: "POST", path: "/clients", body: { ...base, scope: OVERSIZE }, field: "scope" },
      { label: "bad client type", method: "POST", path: "/clients", body: { ...base, clientType: "secret" }, field: "clientType" },
      { label: "relative URI", method: "POST", path: "/clients", body: { ...base, redirectUris: ["/cb"] }, field: "redirectUris.0" },
      { label: "fragment", method: "POST", path: "/clients", body: { ...base, redirectUris: ["https://rp.example.com/cb#x"] }, field: "redirectUris.0" },
      { label: "http web URI", method: "POST", path: "/clients", body: { ...base, redirectUris: ["http://rp.example.com/cb"] }, field: "redirectUris.0" },
      { label: "javascript URI", method: "POST", path: "/clients", body: { ...base, redirectUris: ["javascript:alert(1)"] }, field: "redirectUris.0" },
      { label: "native http non-loopback", method: "POST", path: "/clients", body: { ...base, applicationType: "native", redirectUris: ["http://example.com/cb"] }, field: "redirectUris.0" },
      { label: "post-logout http", method: "POST", path: "/clients", body: { ...base, postLogoutRedirectUris: ["http://rp.example.com/bye"] }, field: "postLogoutRedirectUris.0" },
      { label: "code flow without redirect", method: "POST", path: "/clients", body: { ...base, redirectUris: [] }, field: "redirectUris" },
      { label: "unknown grant type", method: "POST", path: "/clients", body: { ...base, grantTypes: ["implicit"] }, field: "grantTypes.0" },
      { label: "refresh without code", method: "POST", path: "/clients", body: { ...base, grantTypes: ["client_credentials", "refresh_token"] }, field: "grantTypes" },
      { label: "public client_credentials", method: "POST", path: "/clients", body: { ...base, clientType: "public", grantTypes: ["client_credentials"] }, field: "grantTypes" },
      { label: "scope without openid", method: "POST", path: "/clients", body: { ...base, scope: "profile email" }, field: "scope" },
      { label: "unsupported scope", method: "POST", path: "/clients", body: { ...base, scope: "openid payroll" }, field: "scope" },
      { label: "scope bad token", method: "POST", path: "/clients", body: { ...base, scope: 'openid "quoted"' }, field: "scope" },
      { label: "empty login methods", method: "POST", path: "/clients", body: { ...base, loginMethods: [] }, field: "loginMethods" },
      { label: "foreign application", method: "POST", path: "/clients", body: { ...base, applicationId: foreignApp.id }, field: "applicationId" },
      { label: "unknown organization", method: "POST", path: "/clients", body: { ...base, organizationId: randomUUID() }, field: "organizationId" },
      { label: "bad client id", method: "GET", path: "/clients/a%20b", field: "path.id" },
      { label: "get unknown query", method: "GET", path: `${c}?with=secrets`, field: "query.with" },
      { label: "update wrong type", method: "PUT", path: c, body: { grantTypes: "authorization_code" }, field: "grantTypes" },
      { label: "update client type", method: "PUT", path: c, body: { clientType: "public" }, field: "clientType" },
      { label: "update oversize", method: "PUT", path: c, body: { name: OVERSIZE }, field: "name" },
      { label: "delete unknown query", method: "DELETE", path: `${c}?cascade=1`, field: "query.cascade" },
      { label: "activate bad id", method: "POST", path: `/clients/${"x".repeat(300)}/activate`, field: "path.id" },
      { label: "deactivate unknown query", method: "POST", path: `${c}/deactivate?now=1`, field: "query.now" },
      { label: "history bad after", method: "GET", path: `${c}/history?after=${BAD_CURSOR}`, field: "after" },
      { label: "secrets bad cursor", method: "GET", path: `${c}/secrets?cursor=${FORGED_CURSOR}`, field: "cursor" },
      { label: "secret unknown field", method: "POST", path: `${c}/secrets`, body: { value: "chosen-by-me" }, field: "value" },
      { label: "secret oversize label", method: "POST", path: `${c}/secrets`, body: { label: OVERSIZE }, field: "label" },
      { label: "secret past expiry", method: "POST", path: `${c}/secrets`, body: { expiresAt: "2001-01-01T00:00:00Z" }, field: "expiresAt" },
      { label: "secret expiry wrong type", method: "POST", path: `${c}/secrets`, body: { expiresAt: 12 }, field: "expiresAt" },
      { label: "revoke bad secret id", method: "DELETE", path: `${c}/secrets/1`, field: "path.secretId" },
      { label: "login methods unknown field", method: "PUT", path: `${c}/login-methods`, body: { loginMethods: ["password"], inherit: false }, field: "inherit" },
      { label: "clear login methods bad id", method: "DELETE", path: "/clients/a%20b/login-methods", field: "path.id" },
    ]);
    expect((await api.get(c)).headers.get("etag")).toBe('"v1"');
  });

  it("answers 403 without the permission", async () => {
    const { body: client } = await machine();
    const before = await resourceFingerprint(porta);
    await withoutPermission(porta, "admin:client:write", async () => {
      expectError(await api.post("/clients", { organizationId: org.id, name: "x", clientType: "public", redirectUris: [RP] }), 403, "forbidden");
      expectError(await api.post(`/clients/${client.id}/secrets`), 403, "forbidden");
      expectError(await api.delete(`/clients/${client.id}/login-methods`), 403, "forbidden");
      expect((await api.get(`/clients/${client.id}`)).status).toBe(200);
    });
    await withoutPermission(porta, "admin:client:read", async () => {
      expectError(await api.get(`/clients/${client.id}/secrets`), 403, "forbidden");
    });
    expect(await resourceFingerprint(porta)).toEqual(before);
  });
});
