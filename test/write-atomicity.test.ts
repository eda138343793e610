import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "./support/admin-api";
import { startTestPorta, type TestPorta } from "./support/porta";

/**
 * A write and its audit entry commit together: a fault injected between them (a test-only hook
 * in context.ts) leaves neither, and without the fault both are there.
 */
let failNext = false;
let porta: TestPorta;
let api: ReturnType<typeof adminApi>;

beforeAll(async () => {
  porta = await startTestPorta({
    faults: {
      beforeAudit: () => {
        if (!failNext) return;
        failNext = false;
        throw new Error("injected fault between the write and its audit entry");
      },
    },
  });
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
});
afterAll(async () => {
  await porta?.stop();
});

const counts = async (slug: string) => ({
  organizations: await porta.services.db.prisma.organization.count({ where: { slug } }),
  keys: await porta.services.db.prisma.signingKey.count({ where: { organization: { slug } } }),
  audit: await porta.services.db.prisma.auditEntry.count({ where: { eventType: "organization.created", data: { path: ["change", "slug"], equals: slug } } }),
});

describe("a write and its audit entry", () => {
  it("leave nothing behind when the process fails between them", async () => {
    failNext = true;
    porta.logs.expectError("injected fault between");
    const res = await api.post("/organizations", { name: "Half Written", slug: "half-written" });
    expect(res.status).toBe(500);
    expect(await counts("half-written")).toEqual({ organizations: 0, keys: 0, audit: 0 });
  });

  it("are both there when nothing fails", async () => {
    const res = await api.post("/organizations", { name: "Whole", slug: "whole-written" });
    expect(res.status).toBe(201);
    expect(await counts("whole-written")).toEqual({ organizations: 1, keys: 1, audit: 1 });
  });
});

describe("a write of several rows and its audit entry", () => {
  let organizationId: string;
  beforeAll(async () => {
    const res = await api.post<{ id: string }>("/organizations", { name: "Atomic Clients", slug: "atomic-clients" });
    organizationId = res.body.id;
  });

  const clientCounts = async (name: string) => ({
    clients: await porta.services.db.prisma.client.count({ where: { organizationId, name } }),
    secrets: await porta.services.db.prisma.clientSecret.count({ where: { client: { organizationId, name } } }),
    audit: await porta.services.db.prisma.auditEntry.count({ where: { eventType: "client.created", organizationId, data: { path: ["change", "name"], equals: name } } }),
  });
  const newClient = (name: string) => api.post("/clients", { organizationId, name, clientType: "confidential", redirectUris: ["https://rp.example.test/cb"] });

  it("a client and its first secret: neither remains when the process fails before the audit entry", async () => {
    failNext = true;
    porta.logs.expectError("injected fault between");
    expect((await newClient("Half Client")).status).toBe(500);
    expect(await clientCounts("Half Client")).toEqual({ clients: 0, secrets: 0, audit: 0 });
    expect((await newClient("Whole Client")).status).toBe(201);
    expect(await clientCounts("Whole Client")).toEqual({ clients: 1, secrets: 1, audit: 1 });
  });

  it("a key rotation: the organization keeps its signing key when the process fails before the audit entry", async () => {
    const keys = () => porta.services.db.prisma.signingKey.findMany({ where: { organizationId }, select: { id: true, status: true }, orderBy: { id: "asc" } });
    const rotations = () => porta.services.db.prisma.auditEntry.count({ where: { eventType: "key.rotated", organizationId } });
    const before = await keys();
    failNext = true;
    porta.logs.expectError("injected fault between");
    expect((await api.post(`/organizations/${organizationId}/keys/rotate`)).status).toBe(500);
    expect(await keys()).toEqual(before);
    expect(await rotations()).toBe(0);
    expect((await api.post(`/organizations/${organizationId}/keys/rotate`)).status).toBe(200);
    expect((await keys()).length).toBe(before.length + 1);
    expect(await rotations()).toBe(1);
  });
});
