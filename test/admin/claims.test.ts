import { randomUUID } from "node:crypto";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createApplication, createOrganization, createUser } from "../support/factories";
import { clientConfiguration, codeFlow } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";
import { BAD_CURSOR, expect422, expectError, FORGED_CURSOR, OVERSIZE } from "./helpers";
import { expectAllRejected, resourceFingerprint, withoutPermission } from "./resources";

/**
 * Custom claims through the Admin API, against a real server with a real admin token:
 * definitions per application, values per user resolved by claim id and user id, type checks,
 * duplicates, 422 for bad input that writes nothing, the permission check, and the claim in
 * userinfo once its scope is granted.
 */
interface Claim {
  id: string;
  applicationId: string;
  claimName: string;
  claimType: string;
  scope: string;
  description: string | null;
}
interface Value {
  claimId: string;
  userId: string;
  applicationId: string;
  claimName: string;
  claimType: string;
  value: unknown;
}
interface Page<T> {
  data: T[];
  total: number;
  cursor?: string;
}

const RP = "https://rp.example.com/cb";
let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
let org: { id: string; slug: string };
let app: { id: string };
let user: { id: string };

beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  const prisma = porta.services.db.prisma;
  org = await createOrganization(prisma);
  app = await createApplication(prisma, org.id);
  user = await createUser(prisma, org.id);
});
afterAll(async () => {
  await porta?.stop();
});

let counter = 0;
async function define(body: Partial<Claim> = {}, appId = app.id) {
  const res = await api.post<Claim>(`/applications/${appId}/claims`, { claimName: `claim_${++counter}`, claimType: "string", scope: "hr", ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}
const valueUrl = (claim: { id: string }, userId = user.id, appId = app.id) => `/applications/${appId}/claims/${claim.id}/users/${userId}`;

describe("custom claim definitions", () => {
  it("creates, reads, lists, updates and deletes definitions", async () => {
    const claim = await define({ claimName: "costCenter", description: "Where the salary is booked" });
    expect(claim).toMatchObject({ applicationId: app.id, claimName: "costCenter", claimType: "string", scope: "hr", description: "Where the salary is booked" });
    expect((await api.get<Claim>(`/applications/${app.id}/claims/${claim.id}`)).body).toEqual(claim);
    const list = await api.get<Page<Claim>>(`/applications/${app.id}/claims?limit=100`);
    expect(list.body.data.map((c) => c.id)).toContain(claim.id);

    const updated = await api.put<Claim>(`/applications/${app.id}/claims/${claim.id}`, { claimName: "cost_center", claimType: "number", description: null });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ claimName: "cost_center", claimType: "number", description: null });

    expect((await api.delete(`/applications/${app.id}/claims/${claim.id}`)).status).toBe(204);
    expectError(await api.get(`/applications/${app.id}/claims/${claim.id}`), 404, "not_found");
    // A definition is reached only through its own application.
    const other = await define();
    const otherApp = await createApplication(porta.services.db.prisma, org.id);
    expectError(await api.get(`/applications/${otherApp.id}/claims/${other.id}`), 404, "not_found");
    const events = await porta.services.db.prisma.auditEntry.findMany({ where: { targetType: "custom_claim", targetId: claim.id }, orderBy: { id: "asc" } });
    expect(events.map((e) => e.eventType)).toEqual(["custom_claim.created", "custom_claim.updated", "custom_claim.deleted"]);
    expect(events[0]).toMatchObject({ organizationId: org.id, actorType: "admin" });
  });

  it("answers 409 for a duplicate name in the application or the organization", async () => {
    const claim = await define();
    expectError(await api.post(`/applications/${app.id}/claims`, { claimName: claim.claimName, claimType: "number", scope: "hr" }), 409, "duplicate");
    const sibling = await createApplication(porta.services.db.prisma, org.id);
    expectError(await api.post(`/applications/${sibling.id}/claims`, { claimName: claim.claimName.toUpperCase(), claimType: "string", scope: "hr" }), 409, "duplicate");
    const second = await define();
    expectError(await api.put(`/applications/${app.id}/claims/${second.id}`, { claimName: claim.claimName }), 409, "duplicate");
    // Another organization may use the name.
    const elsewhere = await createApplication(porta.services.db.prisma, (await createOrganization(porta.services.db.prisma)).id);
    expect((await api.post(`/applications/${elsewhere.id}/claims`, { claimName: claim.claimName, claimType: "string", scope: "hr" })).status).toBe(201);
  });
});

describe("custom claim values", () => {
  it("sets, reads and deletes values by claim id and user id, checking the claim's type", async () => {
    const department = await define({ claimType: "string" });
    const level = await define({ claimType: "number" });
    const flags = await define({ claimType: "json" }, (await createApplication(porta.services.db.prisma, org.id)).id);

    const set = await api.put<Value>(valueUrl(department), { value: "Engineering" });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ claimId: department.id, userId: user.id, applicationId: app.id, claimName: department.claimName, value: "Engineering" });
    expect((await api.put<Value>(valueUrl(department), { value: "Research" })).body.value).toBe("Research");
    expect((await api.put<Value>(valueUrl(level), { value: 3 })).body.value).toBe(3);
    expect((await api.put<Value>(valueUrl(flags, user.id, flags.applicationId), { value: { beta: true, teams: ["a"] } })).body.value).toEqual({ beta: true, teams: ["a"] });

    // The application segment does not filter: claim id plus user id decide.
    expect((await api.get<Value>(valueUrl(department, user.id, randomUUID()))).body.value).toBe("Research");
    const all = await api.get<Page<Value>>(`/users/${user.id}/claims`);
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(3);
    expect(Object.fromEntries(all.body.data.map((v) => [v.claimName, v.value]))).toEqual({
      [department.claimName]: "Research",
      [level.claimName]: 3,
      [flags.claimName]: { beta: true, teams: ["a"] },
    });
    const firstPage = await api.get<Page<Value>>(`/users/${user.id}/claims?limit=2`);
    const secondPage = await api.get<Page<Value>>(`/users/${user.id}/claims?limit=2&cursor=${firstPage.body.cursor}`);
    expect([...firstPage.body.data, ...secondPage.body.data].map((v) => v.claimId).sort()).toEqual([department.id, level.id, flags.id].sort());

    // The type cannot change while values exist.
    expectError(await api.put(`/applications/${app.id}/claims/${level.id}`, { claimType: "string" }), 409, "claim_has_values");

    expect((await api.delete(valueUrl(department))).status).toBe(204);
    expectError(await api.get(valueUrl(department)), 404, "not_found");
    expectError(await api.delete(valueUrl(department)), 404, "not_found");
    expectError(await api.put(valueUrl({ id: randomUUID() }), { value: "x" }), 404, "not_found");
    expectError(await api.put(valueUrl(department, randomUUID()), { value: "x" }), 404, "not_found");
    expectError(await api.get(`/users/${randomUUID()}/claims`), 404, "not_found");

    const events = await porta.services.db.prisma.auditEntry.findMany({ where: { targetType: "user", targetId: user.id, eventType: { startsWith: "custom_claim." } } });
    expect(events.map((e) => e.eventType).filter((t) => t === "custom_claim.value_deleted")).toHaveLength(1);
    expect(JSON.stringify(events)).not.toContain("Research");
  });

  it("refuses values of the wrong type and users of other organizations with 422, writing nothing", async () => {
    const flag = await define({ claimType: "boolean" });
    const number = await define({ claimType: "number" });
    const text = await define({ claimType: "string" });
    const stranger = await createUser(porta.services.db.prisma, (await createOrganization(porta.services.db.prisma)).id);
    await expectAllRejected(porta, api, [
      { label: "boolean gets a string", method: "PUT", path: valueUrl(flag), body: { value: "true" }, field: "value" },
      { label: "number gets a string", method: "PUT", path: valueUrl(number), body: { value: "3" }, field: "value" },
      { label: "string gets an object", method: "PUT", path: valueUrl(text), body: { value: { a: 1 } }, field: "value" },
      { label: "string too long", method: "PUT", path: valueUrl(text), body: { value: "x".repeat(2001) }, field: "value" },
      { label: "null", method: "PUT", path: valueUrl(text), body: { value: null }, field: "value" },
      { label: "missing value", method: "PUT", path: valueUrl(text), body: {}, field: "value" },
      { label: "oversize JSON", method: "PUT", path: valueUrl(text), body: { value: [OVERSIZE, OVERSIZE] }, field: "value" },
      { label: "unknown field", method: "PUT", path: valueUrl(text), body: { value: "a", ttl: 5 }, field: "ttl" },
      { label: "user of another organization", method: "PUT", path: valueUrl(text, stranger.id), body: { value: "a" }, field: "userId" },
    ]);
  });
});

describe("custom claims at the protocol", () => {
  it("appear in userinfo when their scope is granted, and follow definition changes at once", async () => {
    const prisma = porta.services.db.prisma;
    const tenant = await createOrganization(prisma);
    const tenantApp = await createApplication(prisma, tenant.id);
    const person = await createUser(prisma, tenant.id);
    const claim = await define({ claimName: "department", claimType: "string", scope: "payroll" }, tenantApp.id);
    expect((await api.put(valueUrl(claim, person.id, tenantApp.id), { value: "Engineering" })).status).toBe(200);

    const created = await api.post<{ id: string; secret: { value: string } }>("/clients", {
      organizationId: tenant.id,
      applicationId: tenantApp.id,
      name: "Payroll web",
      clientType: "confidential",
      redirectUris: [RP],
      scope: "openid profile payroll",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const config = await clientConfiguration(porta, tenant, { id: created.body.id }, { secret: created.body.secret.value });
    const userinfo = async (scope: string) => {
      const tokens = await codeFlow(porta, tenant, config, { accountId: person.id, scope, redirectUri: RP, params: { prompt: "consent" } });
      return (await oidc.fetchUserInfo(config, tokens.access_token, person.id)) as Record<string, unknown>;
    };
    expect(await userinfo("openid payroll")).toEqual({ sub: person.id, department: "Engineering" });
    expect((await userinfo("openid profile")).department).toBeUndefined();

    // A rename reaches the provider at once (it is rebuilt).
    await api.put(`/applications/${tenantApp.id}/claims/${claim.id}`, { claimName: "division" });
    expect(await userinfo("openid payroll")).toEqual({ sub: person.id, division: "Engineering" });

    // The scope cannot vanish while a client names it; once no client does, it can.
    expectError(await api.delete(`/applications/${tenantApp.id}/claims/${claim.id}`), 409, "scope_in_use");
    expectError(await api.put(`/applications/${tenantApp.id}/claims/${claim.id}`, { scope: "other" }), 409, "scope_in_use");
    expect((await api.put(`/clients/${created.body.id}`, { scope: "openid profile" })).status).toBe(200);
    expect((await api.delete(`/applications/${tenantApp.id}/claims/${claim.id}`)).status).toBe(204);
    expect(await prisma.customClaimValue.count({ where: { claimId: claim.id } })).toBe(0);
    const discovery = (await (await fetch(`${porta.baseUrl}/${tenant.slug}/.well-known/openid-configuration`)).json()) as { scopes_supported: string[] };
    expect(discovery.scopes_supported).not.toContain("payroll");
    expect422(await api.put(`/clients/${created.body.id}`, { scope: "openid payroll" }), "scope");
  });
});

describe("custom claim requests", () => {
  it("rejects bad input on every route with 422 and field details, writing nothing", async () => {
    const claim = await define();
    const c = `/applications/${app.id}/claims`;
    await expectAllRejected(porta, api, [
      { label: "app id not a UUID", method: "GET", path: "/applications/payroll/claims", field: "path.appId" },
      { label: "garbage cursor", method: "GET", path: `${c}?cursor=${BAD_CURSOR}`, field: "cursor" },
      { label: "forged cursor", method: "GET", path: `${c}?cursor=${FORGED_CURSOR}`, field: "cursor" },
      { label: "unknown query", method: "GET", path: `${c}?type=string`, field: "query.type" },
      { label: "wrong type", method: "POST", path: c, body: { claimName: 5, claimType: "string", scope: "hr" }, field: "claimName" },
      { label: "unknown field", method: "POST", path: c, body: { claimName: "a", claimType: "string", scope: "hr", value: 1 }, field: "value" },
      { label: "oversize name", method: "POST", path: c, body: { claimName: `a${OVERSIZE}`, claimType: "string", scope: "hr" }, field: "claimName" },
      { label: "oversize description", method: "POST", path: c, body: { claimName: "a", claimType: "string", scope: "hr", description: OVERSIZE }, field: "description" },
      { label: "reserved name sub", method: "POST", path: c, body: { claimName: "sub", claimType: "string", scope: "hr" }, field: "claimName" },
      { label: "reserved name email", method: "POST", path: c, body: { claimName: "Email", claimType: "string", scope: "hr" }, field: "claimName" },
      { label: "reserved name roles", method: "POST", path: c, body: { claimName: "roles", claimType: "string", scope: "hr" }, field: "claimName" },
      { label: "not an identifier", method: "POST", path: c, body: { claimName: "cost-center", claimType: "string", scope: "hr" }, field: "claimName" },
      { label: "unknown claim type", method: "POST", path: c, body: { claimName: "a", claimType: "date", scope: "hr" }, field: "claimType" },
      { label: "two scopes", method: "POST", path: c, body: { claimName: "a", claimType: "string", scope: "hr payroll" }, field: "scope" },
      { label: "openid scope", method: "POST", path: c, body: { claimName: "a", claimType: "string", scope: "openid" }, field: "scope" },
      { label: "oversize scope", method: "POST", path: c, body: { claimName: "a", claimType: "string", scope: OVERSIZE }, field: "scope" },
      { label: "claim id not a UUID", method: "GET", path: `${c}/department`, field: "path.claimId" },
      { label: "get unknown query", method: "GET", path: `${c}/${claim.id}?x=1`, field: "query.x" },
      { label: "update reserved name", method: "PUT", path: `${c}/${claim.id}`, body: { claimName: "iss" }, field: "claimName" },
      { label: "update unknown field", method: "PUT", path: `${c}/${claim.id}`, body: { applicationId: app.id }, field: "applicationId" },
      { label: "update wrong type", method: "PUT", path: `${c}/${claim.id}`, body: { claimType: 1 }, field: "claimType" },
      { label: "delete bad id", method: "DELETE", path: `${c}/1`, field: "path.claimId" },
      { label: "value bad user id", method: "GET", path: `${c}/${claim.id}/users/bob`, field: "path.userId" },
      { label: "value put bad user id", method: "PUT", path: `${c}/${claim.id}/users/bob`, body: { value: "a" }, field: "path.userId" },
      { label: "value delete bad claim id", method: "DELETE", path: `${c}/1/users/${user.id}`, field: "path.claimId" },
      { label: "user values bad id", method: "GET", path: "/users/bob/claims", field: "path.id" },
      { label: "user values bad cursor", method: "GET", path: `/users/${user.id}/claims?cursor=${BAD_CURSOR}`, field: "cursor" },
      { label: "user values unknown query", method: "GET", path: `/users/${user.id}/claims?app=1`, field: "query.app" },
    ]);
    expect((await api.get<Claim>(`${c}/${claim.id}`)).body).toEqual(claim);
  });

  it("answers 403 without the permission and 404 for unknown applications", async () => {
    const claim = await define();
    const before = await resourceFingerprint(porta);
    await withoutPermission(porta, "admin:claim:write", async () => {
      expectError(await api.post(`/applications/${app.id}/claims`, { claimName: "blocked", claimType: "string", scope: "hr" }), 403, "forbidden");
      expectError(await api.put(valueUrl(claim), { value: "x" }), 403, "forbidden");
      expect((await api.get(`/applications/${app.id}/claims`)).status).toBe(200);
    });
    await withoutPermission(porta, "admin:claim:read", async () => {
      expectError(await api.get(`/users/${user.id}/claims`), 403, "forbidden");
    });
    expect(await resourceFingerprint(porta)).toEqual(before);
    expectError(await api.get(`/applications/${randomUUID()}/claims`), 404, "not_found");
    expectError(await api.post(`/applications/${randomUUID()}/claims`, { claimName: "a", claimType: "string", scope: "hr" }), 404, "not_found");
  });
});
