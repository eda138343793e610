import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveNames } from "~/.server/admin/audit/names";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createClient, createOrganization } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { expect422, expectError, unique } from "./helpers";
import { withoutPermission } from "./resources";

/**
 * API resources through the Admin API (decision 077): CRUD per organization with If-Match, the
 * identifier and scope rules (422 with the field), a client's grants as a subset of the
 * resource's scopes, the audit entries, the permission, and the tenant boundary: another
 * organization's resource or client is not there (404).
 */
interface ApiResource {
  id: string;
  organizationId: string;
  identifier: string;
  name: string;
  scopes: string[];
  scopeDescriptions: Record<string, string>;
  accessTokenTtlSeconds: number | null;
  consentRequired: boolean;
  status: string;
}
interface Grant {
  clientId: string;
  resourceId: string;
  identifier: string;
  scopes: string[];
}

let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
let org: { id: string; slug: string };
let other: { id: string; slug: string };

beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  org = await createOrganization(porta.services.db.prisma);
  other = await createOrganization(porta.services.db.prisma);
});
afterAll(async () => {
  await porta?.stop();
});

async function create(body: Partial<ApiResource> = {}, orgId = org.id) {
  const res = await api.post<ApiResource>(`/organizations/${orgId}/api-resources`, { identifier: `https://api.example.com/${unique("r")}`, name: "Orders API", scopes: ["orders:read", "orders:write"], ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function auditOf(targetId: string) {
  return porta.services.db.prisma.auditEntry.findMany({ where: { targetId }, orderBy: { createdAt: "asc" } });
}

describe("API resources", () => {
  it("creates, reads, lists, updates (If-Match) and deletes a resource, with audit entries", async () => {
    const created = await create({ identifier: "https://API.example.com/Orders", accessTokenTtlSeconds: 600 });
    expect(created).toMatchObject({ organizationId: org.id, identifier: "https://API.example.com/Orders", scopes: ["orders:read", "orders:write"], accessTokenTtlSeconds: 600, consentRequired: true, status: "active" });

    const read = await api.get<ApiResource>(`/api-resources/${created.id}`);
    expect(read.body).toEqual(created);
    const etag = read.headers.get("etag")!;
    expect(etag).toBeTruthy();
    const list = await api.get<{ data: ApiResource[] }>(`/organizations/${org.id}/api-resources?limit=100`);
    expect(list.body.data.map((r) => r.id)).toContain(created.id);
    expect((await api.get<{ data: ApiResource[] }>(`/organizations/${other.id}/api-resources?limit=100`)).body.data.map((r) => r.id)).not.toContain(created.id);

    const updated = await api.put<ApiResource>(`/api-resources/${created.id}`, { name: "Orders", status: "inactive", accessTokenTtlSeconds: null }, { "if-match": etag });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body).toMatchObject({ name: "Orders", status: "inactive", accessTokenTtlSeconds: null });
    // The old ETag is stale now.
    expectError(await api.put(`/api-resources/${created.id}`, { name: "Again" }, { "if-match": etag }), 409, "etag_mismatch");

    // Audit entries name the resource while it exists, and by the name they recorded once it is gone.
    const [createdEntry] = await auditOf(created.id);
    expect((await resolveNames(porta.services.db.prisma, [createdEntry!]))[0]!.target).toEqual({ name: "Orders", organizationId: org.id, deleted: false });
    const { client } = await createClient(porta.services.db.prisma, org.id);
    expect((await api.put(`/clients/${client.id}/api-resources/${created.id}`, { scopes: ["orders:read"] })).status).toBe(200);

    expect((await api.delete(`/api-resources/${created.id}`)).status).toBe(204);
    expectError(await api.get(`/api-resources/${created.id}`), 404, "not_found");
    const entries = await auditOf(created.id);
    expect(entries.map((e) => e.eventType)).toEqual(["api_resource.created", "api_resource.updated", "api_resource.deleted"]);
    expect(entries[2]!.data).toEqual({ identifier: created.identifier, name: "Orders", grantedClients: [client.id] });
    expect((await resolveNames(porta.services.db.prisma, [entries[2]!]))[0]!.target).toEqual({ name: "Orders", organizationId: org.id, deleted: true });
  });

  it("describes scopes: only the resource's own, and a description leaves with its scope", async () => {
    const resource = await create({ scopes: ["a", "b"], scopeDescriptions: { a: "Read orders" } });
    expect(resource.scopeDescriptions).toEqual({ a: "Read orders" });
    expect422(await api.post(`/organizations/${org.id}/api-resources`, { identifier: "https://api.example.com/stray", name: "Stray", scopes: ["a"], scopeDescriptions: { z: "Nothing" } }), "scopeDescriptions.z", "stray description");
    expect422(await api.put(`/api-resources/${resource.id}`, { scopeDescriptions: { c: "Not a scope" } }), "scopeDescriptions.c", "stray on update");
    expect422(await api.put(`/api-resources/${resource.id}`, { scopeDescriptions: { a: "" } }), "scopeDescriptions.a", "empty description");
    const described = await api.put<ApiResource>(`/api-resources/${resource.id}`, { scopeDescriptions: { a: "Read orders", b: "Write orders" } });
    expect(described.body.scopeDescriptions).toEqual({ a: "Read orders", b: "Write orders" });
    const narrowed = await api.put<ApiResource>(`/api-resources/${resource.id}`, { scopes: ["b", "c"] });
    expect(narrowed.body.scopeDescriptions).toEqual({ b: "Write orders" });
    expect((await api.get<ApiResource>(`/api-resources/${resource.id}`)).body.scopeDescriptions).toEqual({ b: "Write orders" });
  });

  it("keeps identifiers unique per organization, case-sensitive, and free across organizations", async () => {
    const identifier = `https://api.example.com/${unique("dup")}`;
    await create({ identifier });
    expectError(await api.post(`/organizations/${org.id}/api-resources`, { identifier, name: "Again" }), 409, "identifier_taken");
    await create({ identifier: identifier.toUpperCase().replace("HTTPS://API.EXAMPLE.COM", "https://api.example.com") });
    await create({ identifier }, other.id);
  });

  it("refuses bad identifiers and scope tokens with 422 naming the field, writing nothing", async () => {
    const before = await porta.services.db.prisma.apiResource.count();
    const bad: Array<[string, Record<string, unknown>, string]> = [
      ["relative", { identifier: "/orders" }, "identifier"],
      ["no scheme", { identifier: "api.example.com/orders" }, "identifier"],
      ["fragment", { identifier: "https://api.example.com/orders#x" }, "identifier"],
      ["urn", { identifier: "urn:example:orders" }, "identifier"],
      ["ftp", { identifier: "ftp://api.example.com/" }, "identifier"],
      ["javascript", { identifier: "javascript:alert(1)" }, "identifier"],
      ["NUL", { identifier: "https://api.example.com/\u0000" }, "identifier"],
      ["control", { identifier: "https://api.example.com/a\u0007b" }, "identifier"],
      ["space", { identifier: "https://api.example.com/a b" }, "identifier"],
      ["too long", { identifier: `https://api.example.com/${"a".repeat(2000)}` }, "identifier"],
      ["scope with space", { scopes: ["orders read"] }, "scopes.0"],
      ["scope with quote", { scopes: ['orders"read'] }, "scopes.0"],
      ["empty scope", { scopes: [""] }, "scopes.0"],
      ["repeated scope", { scopes: ["a", "a"] }, "scopes"],
      ["ttl too short", { accessTokenTtlSeconds: 5 }, "accessTokenTtlSeconds"],
    ];
    for (const [label, body, field] of bad) {
      expect422(await api.post(`/organizations/${org.id}/api-resources`, { identifier: "https://api.example.com/ok", name: "Bad", ...body }), field, label);
    }
    // The organization's issuer and the Admin API are resources already.
    expect422(await api.post(`/organizations/${org.id}/api-resources`, { identifier: `${porta.baseUrl}/${org.slug}`, name: "Issuer" }), "identifier", "issuer");
    expect422(await api.post(`/organizations/${org.id}/api-resources`, { identifier: `${porta.baseUrl}/api/admin`, name: "Admin API" }), "identifier", "admin api");
    const resource = await create();
    expect422(await api.put(`/api-resources/${resource.id}`, { identifier: "https://api.example.com/#frag" }), "identifier", "update");
    expect422(await api.put(`/api-resources/${resource.id}`, { identifier: `${porta.baseUrl}/${org.slug}` }), "identifier", "update to the issuer");
    expect(await porta.services.db.prisma.apiResource.count()).toBe(before + 1);
  });

  it("answers 404 for an unknown organization or resource", async () => {
    expectError(await api.get(`/organizations/00000000-0000-7000-8000-000000000000/api-resources`), 404, "not_found");
    expectError(await api.post(`/organizations/00000000-0000-7000-8000-000000000000/api-resources`, { identifier: "https://x.example/", name: "X" }), 404, "not_found");
    expectError(await api.get(`/api-resources/00000000-0000-7000-8000-000000000000`), 404, "not_found");
  });

  it("needs admin:resource:write to write and admin:resource:read to read", async () => {
    const resource = await create();
    await withoutPermission(porta, "admin:resource:write", async () => {
      expectError(await api.post(`/organizations/${org.id}/api-resources`, { identifier: "https://api.example.com/denied", name: "Denied" }), 403, "forbidden");
      expectError(await api.put(`/api-resources/${resource.id}`, { name: "Denied" }), 403, "forbidden");
    });
    await withoutPermission(porta, "admin:resource:read", async () => {
      expectError(await api.get(`/api-resources/${resource.id}`), 403, "forbidden");
    });
  });
});

describe("a client's API resources", () => {
  it("grants a client a subset of the resource's scopes, lists, regrants, narrows with the resource, and revokes", async () => {
    const resource = await create({ scopes: ["a", "b", "c"] });
    const { client } = await createClient(porta.services.db.prisma, org.id);
    const granted = await api.put<Grant>(`/clients/${client.id}/api-resources/${resource.id}`, { scopes: ["a", "b"] });
    expect(granted.status, JSON.stringify(granted.body)).toBe(200);
    expect(granted.body).toMatchObject({ clientId: client.id, resourceId: resource.id, identifier: resource.identifier, scopes: ["a", "b"] });
    expect((await api.get<{ data: Grant[] }>(`/clients/${client.id}/api-resources`)).body.data).toEqual([granted.body]);

    expect((await api.put<Grant>(`/clients/${client.id}/api-resources/${resource.id}`, { scopes: ["c"] })).body.scopes).toEqual(["c"]);
    expect422(await api.put(`/clients/${client.id}/api-resources/${resource.id}`, { scopes: ["a", "unknown"] }), "scopes", "unknown scope");
    expect422(await api.put(`/clients/${client.id}/api-resources/${resource.id}`, { scopes: ["bad scope"] }), "scopes.0", "bad token");

    // A scope the resource no longer defines leaves the grant too.
    await api.put(`/clients/${client.id}/api-resources/${resource.id}`, { scopes: ["a", "c"] });
    await api.put(`/api-resources/${resource.id}`, { scopes: ["a", "b"] });
    expect((await api.get<{ data: Grant[] }>(`/clients/${client.id}/api-resources`)).body.data[0]!.scopes).toEqual(["a"]);

    expect((await api.delete(`/clients/${client.id}/api-resources/${resource.id}`)).status).toBe(204);
    expect((await api.get<{ data: Grant[] }>(`/clients/${client.id}/api-resources`)).body.data).toEqual([]);
    expectError(await api.delete(`/clients/${client.id}/api-resources/${resource.id}`), 404, "not_found");
    const entries = await auditOf(client.id);
    expect(entries.map((e) => e.eventType)).toEqual(["client.resource_granted", "client.resource_granted", "client.resource_granted", "client.resource_granted", "client.resource_revoked"]);
    // The grant the resource's narrower scopes changed is on the client's record, with the reason.
    expect(entries[3]!.data).toEqual({ resourceId: resource.id, identifier: resource.identifier, scopes: ["a"], reason: "resource_scopes_narrowed" });
  });

  it("does not see another organization's resource or client (404)", async () => {
    const resource = await create({ scopes: ["a"] });
    const foreign = await create({ scopes: ["a"] }, other.id);
    const { client } = await createClient(porta.services.db.prisma, org.id);
    const { client: foreignClient } = await createClient(porta.services.db.prisma, other.id);
    expectError(await api.put(`/clients/${client.id}/api-resources/${foreign.id}`, { scopes: ["a"] }), 404, "not_found");
    expectError(await api.put(`/clients/${foreignClient.id}/api-resources/${resource.id}`, { scopes: ["a"] }), 404, "not_found");
    expectError(await api.delete(`/clients/${client.id}/api-resources/${foreign.id}`), 404, "not_found");
    expectError(await api.put(`/clients/no-such-client/api-resources/${resource.id}`, { scopes: ["a"] }), 404, "not_found");
    expect(await porta.services.db.prisma.clientResourceGrant.count({ where: { OR: [{ resourceId: foreign.id }, { clientId: foreignClient.id }] } })).toBe(0);
  });
});
