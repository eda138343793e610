import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { startTestPorta, TEST_ADMIN, type TestPorta } from "../support/porta";
import { BAD_CURSOR, createTenant, dataFingerprint, expect422, expectError, FORGED_CURSOR, OVERSIZE, unique, type BadRequest, type Tenant } from "./helpers";
import type { Page } from "~/.server/admin/http/pagination";

/**
 * The audit log in the Admin API: entries written by real admin writes, filters by
 * organization, event type (exact or prefix.*), actor, target and time range, and cursor paging
 * that walks every entry once, newest first.
 */
interface AuditEntry {
  id: string;
  createdAt: string;
  eventType: string;
  organizationId: string | null;
  actorType: string;
  actorId: string | null;
  targetType: string | null;
  targetId: string | null;
  ip: string | null;
  requestId: string | null;
  data: unknown;
  names: unknown;
}

let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
let adminId: string;
let tenant: Tenant;
let other: Tenant;

beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  adminId = (await porta.services.db.prisma.user.findFirstOrThrow({ where: { email: TEST_ADMIN.email } })).id;
  tenant = await createTenant(porta);
  other = await createTenant(porta);
});
afterAll(async () => {
  await porta?.stop();
});

const audit = (query: string) => api.get<Page<AuditEntry>>(`/audit?${query}`);
const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000);

/** Entries recorded directly, oldest first, so that their order and times are known. */
async function record(entries: Array<{ eventType: string; organizationId?: string | null; actorId?: string; targetId?: string; at?: Date }>) {
  const prisma = porta.services.db.prisma;
  const ids: string[] = [];
  for (const e of entries) {
    const row = await prisma.auditEntry.create({
      data: {
        eventType: e.eventType,
        organizationId: e.organizationId ?? null,
        actorType: e.actorId ? "admin" : "system",
        actorId: e.actorId ?? null,
        targetType: e.targetId ? "user" : null,
        targetId: e.targetId ?? null,
        ...(e.at ? { createdAt: e.at } : {}),
        data: { n: ids.length },
      },
    });
    ids.push(row.id);
  }
  return ids;
}

describe("listing", () => {
  it("shows the entry an admin write recorded, exactly", async () => {
    const email = `${unique("au")}@example.com`;
    const created = await api.post<{ id: string }>(`/organizations/${tenant.org.id}/users`, { email });
    expect(created.status).toBe(201);
    const res = await audit(`organizationId=${tenant.org.id}&eventType=user.created`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: [
        {
          id: expect.any(String),
          createdAt: expect.any(String),
          eventType: "user.created",
          organizationId: tenant.org.id,
          actorType: "admin",
          actorId: adminId,
          targetType: "user",
          targetId: created.body.id,
          ip: expect.any(String),
          requestId: created.headers.get("x-request-id"),
          data: expect.objectContaining({ change: expect.objectContaining({ email }) }),
          names: {
            organization: { name: `Organization ${tenant.org.slug}`, organizationId: tenant.org.id, deleted: false },
            actor: { type: "user", name: TEST_ADMIN.email, organizationId: expect.any(String), deleted: false },
            target: { name: email, organizationId: tenant.org.id, deleted: false },
            client: null,
          },
        },
      ],
      total: 1,
      page: 1,
      pageSize: 20,
    });
    expect(Math.abs(Date.parse(res.body.data[0]!.createdAt) - Date.now())).toBeLessThan(60_000);
  });

  it("filters by organization, event type (exact or prefix), actor, target and time range", async () => {
    const actor = "0190a000-0000-7000-8000-00000000a1a1";
    const target = "0190a000-0000-7000-8000-00000000b2b2";
    const [a1, a2, a3, a4, b1, b2] = await record([
      { eventType: "probe.alpha.one", organizationId: tenant.org.id, at: hoursAgo(50) },
      { eventType: "probe.alpha.two", organizationId: tenant.org.id, actorId: actor, at: hoursAgo(30) },
      { eventType: "probe.beta", organizationId: tenant.org.id, targetId: target, at: hoursAgo(10) },
      { eventType: "probe.alpha.one", organizationId: tenant.org.id, actorId: actor, targetId: target, at: hoursAgo(1) },
      { eventType: "probe.alpha.one", organizationId: other.org.id, actorId: actor, at: hoursAgo(2) },
      { eventType: "probe.beta", organizationId: null, at: hoursAgo(20) },
    ]);
    const ids = async (query: string) => {
      const res = await audit(query);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.total).toBe(res.body.data.length);
      return res.body.data.map((e) => e.id);
    };
    // Newest first (by recording order), whatever the filter.
    expect(await ids(`eventType=probe.*&organizationId=${tenant.org.id}`)).toEqual([a4, a3, a2, a1]);
    expect(await ids(`eventType=probe.*&organizationId=${other.org.id}`)).toEqual([b1]);
    expect(await ids("eventType=probe.alpha.one")).toEqual([b1, a4, a1]);
    expect(await ids("eventType=probe.alpha.*")).toEqual([b1, a4, a2, a1]);
    expect(await ids("eventType=probe.beta")).toEqual([b2, a3]);
    expect(await ids(`actorId=${actor}`)).toEqual([b1, a4, a2]);
    expect(await ids(`actorId=${actor}&organizationId=${tenant.org.id}`)).toEqual([a4, a2]);
    expect(await ids(`targetType=user&targetId=${target}`)).toEqual([a4, a3]);
    // from is inclusive, to exclusive; offsets are understood.
    expect(await ids(`eventType=probe.*&from=${hoursAgo(25).toISOString()}`)).toEqual([b2, b1, a4, a3]);
    expect(await ids(`eventType=probe.*&from=${hoursAgo(40).toISOString()}&to=${hoursAgo(5).toISOString()}`)).toEqual([b2, a3, a2]);
    const thirtyHoursAgo = (await porta.services.db.prisma.auditEntry.findUniqueOrThrow({ where: { id: a2! } })).createdAt;
    expect(await ids(`eventType=probe.*&from=${encodeURIComponent(thirtyHoursAgo.toISOString().replace("Z", "+00:00"))}&to=${hoursAgo(25).toISOString()}`)).toEqual([a2]);
    expect(await ids(`eventType=probe.*&to=${thirtyHoursAgo.toISOString()}`)).toEqual([a1]);
    expect(await ids("eventType=probe.gamma")).toEqual([]);
  });

  it("pages with a cursor across every entry once, without duplicates or gaps", async () => {
    const org = (await createTenant(porta)).org.id;
    const recorded = await record(Array.from({ length: 7 }, (_, i) => ({ eventType: `paging.step${i}`, organizationId: org })));
    const newestFirst = [...recorded].reverse();
    const seen: string[] = [];
    let cursor: string | undefined;
    const sizes: number[] = [];
    do {
      const res = await audit(`organizationId=${org}&limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(7);
      expect(res.body.pageSize).toBe(3);
      sizes.push(res.body.data.length);
      seen.push(...res.body.data.map((e) => e.id));
      cursor = res.body.cursor;
    } while (cursor);
    expect(sizes).toEqual([3, 3, 1]);
    expect(seen).toEqual(newestFirst);
    expect(new Set(seen).size).toBe(7);
    // A page exactly as long as what is left has no cursor.
    const exact = await audit(`organizationId=${org}&limit=7`);
    expect(exact.body.data.map((e) => e.id)).toEqual(newestFirst);
    expect(exact.body.cursor).toBeUndefined();
    // Entries recorded after the first page do not shift the pages already walked.
    const first = await audit(`organizationId=${org}&limit=3`);
    await record([{ eventType: "paging.late", organizationId: org }]);
    const second = await audit(`organizationId=${org}&limit=3&cursor=${first.body.cursor}`);
    expect(second.body.data.map((e) => e.id)).toEqual(newestFirst.slice(3, 6));
    expect(second.body.total).toBe(8);
  });
});

describe("offset paging (page, pageSize), as every other list takes it", () => {
  it("pages newest first through every entry once, with the paginated envelope", async () => {
    const org = (await createTenant(porta)).org.id;
    const recorded = await record(Array.from({ length: 7 }, (_, i) => ({ eventType: `offset.step${i}`, organizationId: org })));
    const newestFirst = [...recorded].reverse();
    const seen: string[] = [];
    for (const page of [1, 2, 3]) {
      const res = await audit(`organizationId=${org}&page=${page}&pageSize=3`);
      expect(res.status).toBe(200);
      expect({ total: res.body.total, page: res.body.page, pageSize: res.body.pageSize, cursor: res.body.cursor }).toEqual({ total: 7, page, pageSize: 3, cursor: undefined });
      seen.push(...res.body.data.map((e) => e.id));
    }
    expect(seen).toEqual(newestFirst);
    const beyond = await audit(`organizationId=${org}&page=4&pageSize=3`);
    expect(beyond.status).toBe(200);
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.total).toBe(7);
    // order=asc walks the other way, as on every other list.
    const oldest = await audit(`organizationId=${org}&page=1&pageSize=3&order=asc`);
    expect(oldest.body.data.map((e) => e.id)).toEqual(recorded.slice(0, 3));
  });
});

describe("bad input and permissions", () => {
  it("answers 422 with field details for bad parameters and an invalid cursor, and writes nothing", async () => {
    const cases: BadRequest[] = [
      { label: "organizationId not a UUID", method: "GET", path: "/audit?organizationId=nope", field: "query.organizationId" },
      { label: "eventType not an event type", method: "GET", path: `/audit?eventType=${encodeURIComponent("DROP TABLE")}`, field: "query.eventType" },
      { label: "eventType wildcard in the middle", method: "GET", path: "/audit?eventType=user.*.created", field: "query.eventType" },
      { label: "oversize eventType", method: "GET", path: `/audit?eventType=${"a".repeat(200)}`, field: "query.eventType" },
      { label: "oversize actorId", method: "GET", path: `/audit?actorId=${OVERSIZE}`, field: "query.actorId" },
      { label: "oversize targetId", method: "GET", path: `/audit?targetId=${OVERSIZE}`, field: "query.targetId" },
      { label: "from not a time", method: "GET", path: "/audit?from=yesterday", field: "query.from" },
      { label: "to a date without time", method: "GET", path: "/audit?to=2026-01-01", field: "query.to" },
      { label: "limit zero", method: "GET", path: "/audit?limit=0", field: "query.limit" },
      { label: "limit too large", method: "GET", path: "/audit?limit=1000", field: "query.limit" },
      { label: "limit a word", method: "GET", path: "/audit?limit=ten", field: "query.limit" },
      { label: "unknown parameter", method: "GET", path: "/audit?pages=2", field: "query.pages" },
      { label: "page zero", method: "GET", path: "/audit?page=0", field: "query.page" },
      { label: "pageSize too large", method: "GET", path: "/audit?pageSize=1000", field: "query.pageSize" },
      { label: "page with a cursor", method: "GET", path: "/audit?page=2&limit=3", field: "cursor" },
      { label: "invalid cursor", method: "GET", path: `/audit?cursor=${BAD_CURSOR}`, field: "cursor" },
      { label: "forged cursor", method: "GET", path: `/audit?cursor=${FORGED_CURSOR}`, field: "cursor" },
      { label: "oversize cursor", method: "GET", path: `/audit?cursor=${OVERSIZE}`, field: "query.cursor" },
    ];
    const before = await dataFingerprint(porta);
    for (const c of cases) expect422(await api.call(c.method, c.path, c.body), c.field, c.label);
    expect(await dataFingerprint(porta)).toEqual(before);
    // Reading is not a write: listing records nothing.
    expect((await audit("limit=1")).status).toBe(200);
    expect(await dataFingerprint(porta)).toEqual(before);
    expectError(await api.post("/audit", {}), 405, "method_not_allowed");
  });

  it("needs admin:audit:read", async () => {
    const prisma = porta.services.db.prisma;
    const link = await prisma.rolePermission.findFirstOrThrow({ where: { role: { name: "service-admin" }, permission: { name: "admin:audit:read" } } });
    await prisma.rolePermission.delete({ where: { roleId_permissionId: { roleId: link.roleId, permissionId: link.permissionId } } });
    try {
      expectError(await audit(`organizationId=${tenant.org.id}`), 403, "forbidden");
    } finally {
      await prisma.rolePermission.create({ data: link });
    }
    expect((await audit(`organizationId=${tenant.org.id}`)).status).toBe(200);
    expectError(await adminApi(porta, undefined).get("/audit"), 401, "unauthorized");
  });
});
