import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, unique, type Tenant } from "../admin/helpers";
import { hashScimToken } from "~/.server/scim/tokens";
import { endpointOf, expectScimError, issueScimToken, patch, scimClient, sendScim, USER_SCHEMA, type ScimClient } from "./support";

/**
 * The SCIM endpoint's boundaries (decision 084): tokens shown once and stored hashed, bound to
 * their organization, refused once expired or revoked; another organization's resources are
 * 404; hostile filters and bodies are SCIM errors that write nothing; limits per token.
 */
let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
let tenant: Tenant;
let other: Tenant;
let scim: ScimClient;
let otherScim: ScimClient;

beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  tenant = await createTenant(porta);
  other = await createTenant(porta);
  scim = scimClient(porta, tenant.org.slug, (await issueScimToken(api, tenant.org.id)).token);
  otherScim = scimClient(porta, other.org.slug, (await issueScimToken(api, other.org.id)).token);
});
afterAll(async () => {
  await porta?.stop();
});

interface TokenView {
  id: string;
  name: string;
  prefix: string;
  status: string;
  expiresAt: string;
  lastUsedAt: string | null;
  token?: string;
}

describe("SCIM tokens in the Admin API", () => {
  it("shows the value once, stores only its SHA-256, lists without values and audits issue and revocation", async () => {
    const prisma = porta.services.db.prisma;
    const created = await api.post<TokenView>(`/organizations/${tenant.org.id}/scim-tokens`, { name: "Entra ID", expiresInDays: 30 });
    expect(created.status).toBe(201);
    const value = created.body.token!;
    expect(value).toMatch(/^porta_scim_[A-Za-z0-9_-]{43}$/);
    expect(created.body).toMatchObject({ name: "Entra ID", status: "active", prefix: value.slice(0, 15), lastUsedAt: null });
    expect(Date.parse(created.body.expiresAt) - Date.now()).toBeGreaterThan(29 * 86_400_000);
    const row = await prisma.scimToken.findUniqueOrThrow({ where: { id: created.body.id } });
    expect(row.tokenHash).toBe(hashScimToken(value));
    expect(JSON.stringify(row)).not.toContain(value.slice(15));

    const list = await api.get<{ data: TokenView[] }>(`/organizations/${tenant.org.id}/scim-tokens`);
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).not.toContain(value.slice(15));
    expect(list.body.data.find((t) => t.id === created.body.id)).toMatchObject({ name: "Entra ID", status: "active" });
    expect(list.body.data.every((t) => t.token === undefined)).toBe(true);

    const client = scimClient(porta, tenant.org.slug, value);
    expect((await client.send("GET", "/Users")).status).toBe(200);
    expect((await api.get<TokenView>(`/scim-tokens/${created.body.id}`)).body.lastUsedAt).not.toBeNull();

    const revoked = await api.delete<TokenView>(`/scim-tokens/${created.body.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.status).toBe("revoked");
    expectScimError(await client.send("GET", "/Users"), 401);
    const events = await prisma.auditEntry.findMany({ where: { targetId: created.body.id }, orderBy: { createdAt: "asc" } });
    expect(events.map((e) => [e.eventType, e.actorType])).toEqual([
      ["scim_token.created", "admin"],
      ["scim_token.revoked", "admin"],
    ]);
    expect(JSON.stringify(events)).not.toContain(value.slice(15));
  });

  it("keeps several tokens active at once, so a client moves to a new one before the old is revoked", async () => {
    const first = await issueScimToken(api, tenant.org.id, { name: "old" });
    const second = await issueScimToken(api, tenant.org.id, { name: "new" });
    expect((await scimClient(porta, tenant.org.slug, first.token).send("GET", "/Groups")).status).toBe(200);
    expect((await scimClient(porta, tenant.org.slug, second.token).send("GET", "/Groups")).status).toBe(200);
    await api.delete(`/scim-tokens/${first.id}`);
    expect((await scimClient(porta, tenant.org.slug, first.token).send("GET", "/Groups")).status).toBe(401);
    expect((await scimClient(porta, tenant.org.slug, second.token).send("GET", "/Groups")).status).toBe(200);
  });

  it("refuses lifetimes beyond a year or below a day, unknown fields, and the super-admin organization", async () => {
    for (const body of [{ name: "x", expiresInDays: 366 }, { name: "x", expiresInDays: 0 }, { name: "" }, { name: "x", token: "mine" }]) {
      expect((await api.post(`/organizations/${tenant.org.id}/scim-tokens`, body)).status, JSON.stringify(body)).toBe(422);
    }
    const superAdmin = await porta.services.db.prisma.organization.findUniqueOrThrow({ where: { slug: porta.services.config.superAdminSlug } });
    expect((await api.post(`/organizations/${superAdmin.id}/scim-tokens`, { name: "x" })).status).toBe(409);
  });
});

describe("who may call the endpoint", () => {
  it("answers 401 without a token, with another organization's token, an unknown one, an expired one and a revoked one", async () => {
    expectScimError(await sendScim(`${scim.endpoint}/Users`, "GET", undefined), 401);
    expectScimError(await sendScim(`${scim.endpoint}/Users`, "GET", otherScim.token), 401);
    expectScimError(await sendScim(`${scim.endpoint}/Users`, "GET", "porta_scim_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"), 401);
    expectScimError(await sendScim(`${scim.endpoint}/Users`, "GET", "not a token at all"), 401);
    const expiring = await issueScimToken(api, tenant.org.id, { name: "short" });
    await porta.services.db.prisma.scimToken.update({ where: { id: expiring.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const expired = await sendScim(`${scim.endpoint}/Users`, "GET", expiring.token);
    expectScimError(expired, 401);
    expect(expired.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect((await api.get<TokenView>(`/scim-tokens/${expiring.id}`)).body.status).toBe("expired");
  });

  it("answers 404 for an unknown or suspended organization, before looking at the token", async () => {
    expectScimError(await sendScim(`${endpointOf(porta, unique("nowhere"))}/Users`, "GET", scim.token), 404);
    const suspended = await createTenant(porta);
    const token = (await issueScimToken(api, suspended.org.id)).token;
    await porta.services.db.prisma.organization.update({ where: { id: suspended.org.id }, data: { status: "suspended" } });
    expectScimError(await sendScim(`${endpointOf(porta, suspended.org.slug)}/Users`, "GET", token), 404);
  });

  it("finds nothing of another organization: its users and groups are 404 and writes to them change nothing", async () => {
    const prisma = porta.services.db.prisma;
    const theirs = await createUser(prisma, other.org.id, { email: `${unique("theirs")}@example.com` });
    const role = await prisma.role.create({ data: { organizationId: other.org.id, name: unique("theirs") } });
    expectScimError(await scim.send("GET", `/Users/${theirs.id}`), 404);
    expectScimError(await scim.send("PUT", `/Users/${theirs.id}`, { schemas: [USER_SCHEMA], userName: theirs.email, active: false }), 404);
    expectScimError(await scim.send("PATCH", `/Users/${theirs.id}`, patch({ op: "replace", path: "active", value: false })), 404);
    expectScimError(await scim.send("DELETE", `/Users/${theirs.id}`), 404);
    expectScimError(await scim.send("GET", `/Groups/${role.id}`), 404);
    expectScimError(await scim.send("DELETE", `/Groups/${role.id}`), 404);
    expectScimError(await scim.send("GET", "/Users/not-a-uuid"), 404);
    expect((await scim.send("GET", `/Users?filter=${encodeURIComponent(`userName eq "${theirs.email}"`)}`)).body.totalResults).toBe(0);
    expect((await prisma.user.findUniqueOrThrow({ where: { id: theirs.id } })).status).toBe("active");
    expect(await prisma.role.count({ where: { id: role.id } })).toBe(1);
    const mine = await scim.send("POST", "/Groups", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"], displayName: unique("mine"), members: [{ value: theirs.id }] });
    expectScimError(mine, 400, "invalidValue");
  });

  it("publishes its self-description without a token", async () => {
    const config = await sendScim(`${scim.endpoint}/ServiceProviderConfig`, "GET", undefined);
    expect(config.status).toBe(200);
    expect(config.body).toMatchObject({ patch: { supported: true }, bulk: { supported: false }, filter: { supported: true, maxResults: 200 }, etag: { supported: true } });
    const types = await sendScim(`${scim.endpoint}/ResourceTypes`, "GET", undefined);
    expect(types.body.Resources?.map((r) => r.id)).toEqual(["User", "Group"]);
    const schemas = await sendScim(`${scim.endpoint}/Schemas`, "GET", undefined);
    expect(schemas.body.totalResults).toBe(2);
    expect((await sendScim(`${scim.endpoint}/Schemas/${USER_SCHEMA}`, "GET", undefined)).body.id).toBe(USER_SCHEMA);
    expectScimError(await scim.send("POST", "/Bulk", { schemas: ["urn:ietf:params:scim:api:messages:2.0:BulkRequest"], Operations: [] }), 501);
    expectScimError(await scim.send("GET", "/Elsewhere"), 404);
  });
});

describe("hostile input", () => {
  const filtered = (filter: string) => scim.send("GET", `/Users?filter=${encodeURIComponent(filter)}`);

  it("refuses filters on attributes Porta does not expose, unknown operators, bad syntax, deep nesting and great length as invalidFilter", async () => {
    for (const filter of [
      'passwordHash pr',
      'password eq "x"',
      'organizationId eq "x"',
      'userName gt "a"',
      'userName eq "unterminated',
      `${"(".repeat(200)}userName eq "x"${")".repeat(200)}`,
      `userName eq "${"a".repeat(5000)}"`,
      Array.from({ length: 80 }, (_, i) => `userName eq "u${i}"`).join(" or "),
    ]) {
      expectScimError(await filtered(filter), 400, "invalidFilter");
    }
  });

  it("treats injection-looking values and LIKE wildcards as plain text", async () => {
    const email = `${unique("plain")}@example.com`;
    await scim.send("POST", "/Users", { schemas: [USER_SCHEMA], userName: email });
    for (const filter of [`userName eq "x' OR '1'='1"`, 'userName co "%"', 'userName co "_"', 'userName eq "\\" or 1=1 --"']) {
      const res = await filtered(filter);
      expect(res.status, filter).toBe(200);
      expect(res.body.totalResults, filter).toBe(0);
    }
    expect((await filtered(`userName eq "${email}"`)).body.totalResults).toBe(1);
  });

  it("refuses NUL and lone surrogates in the query and the body with invalidValue, writing nothing", async () => {
    const nul = await scim.send("GET", `/Users?filter=${encodeURIComponent('userName eq "a\u0000b"')}`);
    expectScimError(nul, 400, "invalidValue");
    const before = await porta.services.db.prisma.user.count({ where: { organizationId: tenant.org.id } });
    expectScimError(await scim.send("POST", "/Users", `{"schemas":["${USER_SCHEMA}"],"userName":"nul@example.com","name":{"givenName":"a\\u0000b"}}`), 400, "invalidValue");
    expectScimError(await scim.send("POST", "/Users", `{"schemas":["${USER_SCHEMA}"],"userName":"s@example.com","name":{"familyName":"\\ud800"}}`), 400, "invalidValue");
    expect(await porta.services.db.prisma.user.count({ where: { organizationId: tenant.org.id } })).toBe(before);
  });

  it("refuses bad JSON, a nesting deeper than the limit, a huge body and a body that is not JSON by type", async () => {
    expectScimError(await scim.send("POST", "/Users", '{"userName": '), 400, "invalidSyntax");
    expectScimError(await scim.send("POST", "/Users", `${"[".repeat(100)}${"]".repeat(100)}`), 400, "invalidSyntax");
    const huge = await scim.send("POST", "/Users", { schemas: [USER_SCHEMA], userName: "big@example.com", padding: "x".repeat(300 * 1024) });
    expectScimError(huge, 413);
    expectScimError(await scim.send("POST", "/Users", "userName=a@example.com", { "content-type": "application/x-www-form-urlencoded" }), 415);
    const plainJson = await scim.send("POST", "/Users", { schemas: [USER_SCHEMA], userName: `${unique("json")}@example.com` }, { "content-type": "application/json" });
    expect(plainJson.status).toBe(201);
    expectScimError(await scim.send("POST", "/Users", "[1,2]"), 400, "invalidValue");
  });

  it("refuses malformed PATCH bodies and paths with SCIM error types", async () => {
    const user = await scim.send("POST", "/Users", { schemas: [USER_SCHEMA], userName: `${unique("patch")}@example.com` });
    const path = `/Users/${user.body.id as string}`;
    expectScimError(await scim.send("PATCH", path, { Operations: [{ op: "replace", path: "active", value: false }] }), 400, "invalidSyntax");
    expectScimError(await scim.send("PATCH", path, patch({ op: "move", path: "active", value: false })), 400, "invalidSyntax");
    expectScimError(await scim.send("PATCH", path, patch({ op: "replace", path: "emails[type eq", value: "x" })), 400, "invalidPath");
    expectScimError(await scim.send("PATCH", path, patch({ op: "remove" })), 400, "noTarget");
    expectScimError(await scim.send("PATCH", path, patch({ op: "remove", path: "userName" })), 400, "mutability");
    expectScimError(await scim.send("PATCH", path, patch(...Array.from({ length: 101 }, () => ({ op: "replace", path: "active", value: true })))), 400, "invalidSyntax");
    expect((await scim.send("GET", path)).body.active).toBe(true);
  });
});

describe("limits", () => {
  it("answers 429 with Retry-After once a token used its requests in the window", async () => {
    const org = await createTenant(porta);
    const client = scimClient(porta, org.org.slug, (await issueScimToken(api, org.org.id)).token);
    expect((await api.put("/config/rateLimits.scim.perToken", { value: { points: 3, windowMinutes: 1 } })).status).toBe(200);
    try {
      for (let i = 0; i < 3; i += 1) expect((await client.send("GET", "/Users")).status).toBe(200);
      const refused = await client.send("GET", "/Users");
      expectScimError(refused, 429);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      const fresh = scimClient(porta, org.org.slug, (await issueScimToken(api, org.org.id)).token);
      expect((await fresh.send("GET", "/Users")).status).toBe(200);
    } finally {
      await api.put("/config/rateLimits.scim.perToken", { value: { points: 600, windowMinutes: 1 } });
    }
  });
});
