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
