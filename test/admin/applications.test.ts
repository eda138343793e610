import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createClient, createOrganization } from "../support/factories";
import { basicAuth, postForm } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";
import { BAD_CURSOR, expectError, FORGED_CURSOR, OVERSIZE, unique } from "./helpers";
import { expectAllRejected, resourceFingerprint, withoutPermission } from "./resources";
import type { Page } from "~/.server/admin/http/pagination";

/**
 * Applications and their modules through the Admin API, against a real server with a real
 * admin token: every operation, ETags, duplicates, 422 for bad input that writes nothing, the
 * permission check, and the protocol effect of deactivating an application.
 */
interface Application {
  id: string;
  organizationId: string;
  name: string;
  description: string | null;
  status: string;
}
interface Module {
  id: string;
  applicationId: string;
  name: string;
  description: string | null;
  status: string;
}
interface History {
  data: Array<{ eventType: string; actorType: string; actorId: string | null; data: Record<string, unknown> }>;
  hasMore: boolean;
  nextCursor: string | null;
}

let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
let org: { id: string; slug: string };

beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  org = await createOrganization(porta.services.db.prisma);
});
afterAll(async () => {
  await porta?.stop();
});

const createApp = async (name = unique("app"), organizationId = org.id) => {
  const res = await api.post<Application>("/applications", { organizationId, name, description: "Payroll" });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res;
};

describe("applications", () => {
  it("creates, reads, lists, updates with If-Match and records history", async () => {
    const created = await createApp("Payroll");
    expect(created.headers.get("etag")).toBe('"v1"');
    expect(created.body).toMatchObject({ organizationId: org.id, name: "Payroll", description: "Payroll", status: "active" });
    const id = created.body.id;

    const read = await api.get<Application>(`/applications/${id}`);
    expect(read.status).toBe(200);
    expect(read.headers.get("etag")).toBe('"v1"');
    expect(read.body).toEqual(created.body);

    const updated = await api.put<Application>(`/applications/${id}`, { name: "Payroll 2", description: null }, { "if-match": '"v1"' });
    expect(updated.status).toBe(200);
    expect(updated.headers.get("etag")).toBe('"v2"');
    expect(updated.body).toMatchObject({ name: "Payroll 2", description: null });

    await createApp("Second");
    const other = await createOrganization(porta.services.db.prisma);
    await createApp("Elsewhere", other.id);
    const list = await api.get<Page<Application>>(`/applications?organizationId=${org.id}&sort=name&pageSize=1`);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ page: 1, pageSize: 1 });
    expect(list.body.total).toBeGreaterThanOrEqual(2);
    expect(list.body.data.every((a) => a.organizationId === org.id)).toBe(true);
    const all = await api.get<Page<Application>>("/applications?pageSize=100");
    expect(all.body.data.map((a) => a.name)).toContain("Elsewhere");

    // Cursor paging walks every application of the organization exactly once.
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await api.get<Page<Application>>(`/applications?organizationId=${org.id}&limit=1${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((a) => a.id));
      cursor = page.body.cursor;
    } while (cursor);
    expect(seen.length).toBe(list.body.total);
    expect(new Set(seen).size).toBe(seen.length);

    const history = await api.get<History>(`/applications/${id}/history`);
    expect(history.status).toBe(200);
    expect(history.body.data.map((e) => e.eventType)).toEqual(["application.updated", "application.created"]);
    expect(history.body.data[0]).toMatchObject({ actorType: "admin", data: { change: { name: "Payroll 2", description: null } } });
    const firstOnly = await api.get<History>(`/applications/${id}/history?limit=1&eventType=application.updated`);
    expect(firstOnly.body).toMatchObject({ hasMore: false, nextCursor: null });
    expect(firstOnly.body.data).toHaveLength(1);
  });

  it("lets one of two writers with the same ETag win; the other gets 409", async () => {
    const { body: app } = await createApp();
    const results = await Promise.all(["A", "B"].map((n) => api.put(`/applications/${app.id}`, { name: `${app.name}-${n}` }, { "if-match": '"v1"' })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    expectError(results.find((r) => r.status === 409)!, 409, "etag_mismatch");
    const stale = await api.delete(`/applications/${app.id}`, { "if-match": '"v1"' });
    expectError(stale, 409, "etag_mismatch");
    expect((await api.get(`/applications/${app.id}`)).headers.get("etag")).toBe('"v2"');
  });

  it("answers 409 for a duplicate name in one organization, not across organizations", async () => {
    const { body: app } = await createApp();
    const dup = await api.post("/applications", { organizationId: org.id, name: app.name });
    expectError(dup, 409, "duplicate");
    const other = await createOrganization(porta.services.db.prisma);
    expect((await api.post("/applications", { organizationId: other.id, name: app.name })).status).toBe(201);
    const second = await createApp();
    expectError(await api.put(`/applications/${second.body.id}`, { name: app.name }), 409, "duplicate");
  });

  it("manages modules: add, list, update, deactivate, re-activate, delete", async () => {
    const { body: app } = await createApp();
    const added = await api.post<Module>(`/applications/${app.id}/modules`, { name: "Reports", description: "Monthly" });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ applicationId: app.id, name: "Reports", description: "Monthly", status: "active" });
    await api.post(`/applications/${app.id}/modules`, { name: "Exports" });
    expectError(await api.post(`/applications/${app.id}/modules`, { name: "Reports" }), 409, "duplicate");

    const list = await api.get<Page<Module>>(`/applications/${app.id}/modules`);
    expect(list.body.total).toBe(2);
    expect(list.body.data.map((m) => m.name)).toEqual(["Reports", "Exports"]);

    const moduleUrl = `/applications/${app.id}/modules/${added.body.id}`;
    const updated = await api.put<Module>(moduleUrl, { name: "Reporting" });
    expect(updated.body).toMatchObject({ name: "Reporting", status: "active" });
    const deactivated = await api.post<Module>(`${moduleUrl}/deactivate`);
    expect(deactivated.status).toBe(200);
    expect(deactivated.body.status).toBe("inactive");
    expect((await api.put<Module>(moduleUrl, { status: "active" })).body.status).toBe("active");

    // A module is reached only through its own application.
    const { body: otherApp } = await createApp();
    expectError(await api.put(`/applications/${otherApp.id}/modules/${added.body.id}`, { name: "x" }), 404, "not_found");
    expectError(await api.delete(`/applications/${app.id}/modules/${randomUUID()}`), 404, "not_found");

    expect((await api.delete(moduleUrl)).status).toBe(204);
    expect(await porta.services.db.prisma.applicationModule.count({ where: { applicationId: app.id } })).toBe(1);
    const history = await api.get<History>(`/applications/${app.id}/history`);
    expect(history.body.data.map((e) => e.eventType)).toEqual([
      "application.module_deleted",
      "application.module_updated",
      "application.module_deactivated",
      "application.module_updated",
      "application.module_added",
      "application.module_added",
      "application.created",
    ]);
  });

  it("deactivating an application stops its clients at once; activating lets them work again", async () => {
    const { body: app } = await createApp();
    const { client, secret } = await createClient(porta.services.db.prisma, org.id, { applicationId: app.id, grantTypes: ["client_credentials"] });
    const token = () =>
      postForm(`${porta.baseUrl}/${org.slug}/token`, { grant_type: "client_credentials" }, { authorization: basicAuth(client.id, secret!.value) });
    expect((await token()).status).toBe(200);

    const off = await api.post<Application>(`/applications/${app.id}/deactivate`);
    expect(off.status).toBe(200);
    expect(off.body.status).toBe("inactive");
    expect(off.headers.get("etag")).toBe('"v2"');
    const refused = await token();
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe("invalid_client");

    const on = await api.post<Application>(`/applications/${app.id}/activate`, undefined, { "if-match": '"v2"' });
    expect(on.body.status).toBe("active");
    expect((await token()).status).toBe(200);
    expect((await api.get<Page<Application>>(`/applications?organizationId=${org.id}&status=inactive`)).body.data.map((a) => a.id)).not.toContain(app.id);

    const history = await api.get<History>(`/applications/${app.id}/history`);
    expect(history.body.data.map((e) => e.eventType).slice(0, 2)).toEqual(["application.activated", "application.deactivated"]);
  });

  it("deletes an application with its modules and claims, but not while it has clients", async () => {
    const prisma = porta.services.db.prisma;
    const { body: app } = await createApp();
    await api.post(`/applications/${app.id}/modules`, { name: "Reports" });
    await prisma.customClaimDefinition.create({ data: { applicationId: app.id, claimName: unique("c").replace("-", "_"), claimType: "string", scope: "hr" } });
    const { client } = await createClient(prisma, org.id, { applicationId: app.id });

    expectError(await api.delete(`/applications/${app.id}`), 409, "application_has_clients");
    await prisma.client.delete({ where: { id: client.id } });

    expect((await api.delete(`/applications/${app.id}`)).status).toBe(204);
    expectError(await api.get(`/applications/${app.id}`), 404, "not_found");
    expectError(await api.delete(`/applications/${app.id}`), 404, "not_found");
    expect(await prisma.applicationModule.count({ where: { applicationId: app.id } })).toBe(0);
    expect(await prisma.customClaimDefinition.count({ where: { applicationId: app.id } })).toBe(0);
    const audit = await prisma.auditEntry.findFirst({ where: { targetType: "application", targetId: app.id, eventType: "application.deleted" } });
    expect(audit).toMatchObject({ organizationId: org.id, actorType: "admin" });
  });

  it("answers 404 for unknown ids on every route", async () => {
    const id = randomUUID();
    for (const [method, path] of [
      ["GET", `/applications/${id}`],
      ["PUT", `/applications/${id}`],
      ["DELETE", `/applications/${id}`],
      ["POST", `/applications/${id}/activate`],
      ["POST", `/applications/${id}/deactivate`],
      ["GET", `/applications/${id}/history`],
      ["GET", `/applications/${id}/modules`],
      ["POST", `/applications/${id}/modules`],
      ["PUT", `/applications/${id}/modules/${id}`],
      ["DELETE", `/applications/${id}/modules/${id}`],
      ["POST", `/applications/${id}/modules/${id}/deactivate`],
    ] as const) {
      const body = method === "PUT" ? { name: "x" } : path.endsWith("/modules") && method === "POST" ? { name: "x" } : undefined;
      expectError(await api.call(method, path, body), 404, "not_found", `${method} ${path}`);
    }
  });

  it("rejects bad input on every route with 422 and field details, writing nothing", async () => {
    const { body: app } = await createApp();
    const mod = await api.post<Module>(`/applications/${app.id}/modules`, { name: "Reports" });
    const a = `/applications/${app.id}`;
    const m = `${a}/modules/${mod.body.id}`;
    await expectAllRejected(porta, api, [
      { label: "organizationId not a UUID", method: "GET", path: "/applications?organizationId=acme", field: "query.organizationId" },
      { label: "unknown query parameter", method: "GET", path: "/applications?colour=red", field: "query.colour" },
      { label: "page size too big", method: "GET", path: "/applications?pageSize=1000", field: "query.pageSize" },
      { label: "garbage cursor", method: "GET", path: `/applications?cursor=${BAD_CURSOR}`, field: "cursor" },
      { label: "forged cursor", method: "GET", path: `/applications?cursor=${FORGED_CURSOR}`, field: "cursor" },
      { label: "cursor with page", method: "GET", path: "/applications?limit=2&page=2", field: "cursor" },
      { label: "wrong type", method: "POST", path: "/applications", body: { organizationId: org.id, name: 42 }, field: "name" },
      { label: "unknown field", method: "POST", path: "/applications", body: { organizationId: org.id, name: "x", status: "inactive" }, field: "status" },
      { label: "oversize name", method: "POST", path: "/applications", body: { organizationId: org.id, name: OVERSIZE }, field: "name" },
      { label: "oversize description", method: "POST", path: "/applications", body: { organizationId: org.id, name: "x", description: OVERSIZE }, field: "description" },
      { label: "missing organization", method: "POST", path: "/applications", body: { name: "x" }, field: "organizationId" },
      { label: "unknown organization", method: "POST", path: "/applications", body: { organizationId: randomUUID(), name: "x" }, field: "organizationId" },
      { label: "id not a UUID", method: "GET", path: "/applications/payroll", field: "path.id" },
      { label: "unknown query on get", method: "GET", path: `${a}?expand=all`, field: "query.expand" },
      { label: "empty name", method: "PUT", path: a, body: { name: "  " }, field: "name" },
      { label: "unknown field on update", method: "PUT", path: a, body: { organizationId: org.id }, field: "organizationId" },
      { label: "oversize update", method: "PUT", path: a, body: { description: OVERSIZE }, field: "description" },
      { label: "delete bad id", method: "DELETE", path: "/applications/1", field: "path.id" },
      { label: "activate bad id", method: "POST", path: "/applications/1/activate", field: "path.id" },
      { label: "deactivate unknown query", method: "POST", path: `${a}/deactivate?force=1`, field: "query.force" },
      { label: "history garbage after", method: "GET", path: `${a}/history?after=${BAD_CURSOR}`, field: "after" },
      { label: "history limit 0", method: "GET", path: `${a}/history?limit=0`, field: "query.limit" },
      { label: "history event type", method: "GET", path: `${a}/history?eventType=${encodeURIComponent("DROP TABLE")}`, field: "query.eventType" },
      { label: "modules garbage cursor", method: "GET", path: `${a}/modules?cursor=${BAD_CURSOR}`, field: "cursor" },
      { label: "module wrong type", method: "POST", path: `${a}/modules`, body: { name: ["Reports"] }, field: "name" },
      { label: "module unknown field", method: "POST", path: `${a}/modules`, body: { name: "x", colour: 1 }, field: "colour" },
      { label: "module oversize", method: "POST", path: `${a}/modules`, body: { name: OVERSIZE }, field: "name" },
      { label: "module bad status", method: "PUT", path: m, body: { status: "gone" }, field: "status" },
      { label: "module oversize update", method: "PUT", path: m, body: { description: OVERSIZE }, field: "description" },
      { label: "module bad id", method: "PUT", path: `${a}/modules/7`, body: { name: "x" }, field: "path.moduleId" },
      { label: "module delete bad id", method: "DELETE", path: `${a}/modules/7`, field: "path.moduleId" },
      { label: "module deactivate bad id", method: "POST", path: `${a}/modules/7/deactivate`, field: "path.moduleId" },
    ]);
    const read = await api.get<Application>(a);
    expect(read.headers.get("etag")).toBe('"v1"');
    expect(read.body.name).toBe(app.name);
  });

  it("answers 403 without the permission and 401 without a token", async () => {
    const before = await resourceFingerprint(porta);
    await withoutPermission(porta, "admin:app:write", async () => {
      expectError(await api.post("/applications", { organizationId: org.id, name: unique("app") }), 403, "forbidden");
      expect((await api.get("/applications")).status).toBe(200);
    });
    await withoutPermission(porta, "admin:app:read", async () => {
      expectError(await api.get("/applications"), 403, "forbidden");
    });
    expectError(await adminApi(porta, undefined).get("/applications"), 401, "unauthorized");
    expect(await resourceFingerprint(porta)).toEqual(before);
  });

  it("is described in the OpenAPI document", async () => {
    const doc = await api.get<{ paths: Record<string, Record<string, { operationId: string }>> }>("/openapi.json");
    expect(doc.status).toBe(200);
    expect(doc.body.paths["/api/admin/applications/{id}/modules/{moduleId}/deactivate"]?.post?.operationId).toBe("applications.deactivateModule");
    expect(Object.keys(doc.body.paths).filter((p) => p.startsWith("/api/admin/applications")).length).toBeGreaterThanOrEqual(8);
  });
});
