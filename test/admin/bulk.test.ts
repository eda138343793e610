import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BulkResult } from "~/schemas/bulk";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createOrganization, createUser } from "../support/factories";
import { startTestPorta, TEST_ADMIN, type TestPorta } from "../support/porta";
import { dataFingerprint, expect422, expectError, OVERSIZE, type ErrorBody } from "./helpers";
import { withoutPermission } from "./resources";

/**
 * POST /bulk: user operations in batches. All-or-nothing commits every item or none (the
 * failing item's error names it as operations.N); best-effort reports each item. Every item
 * obeys the rules of its single-item operation.
 */
let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
let orgId: string;
let otherOrgId: string;

beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  const prisma = porta.services.db.prisma;
  orgId = (await createOrganization(prisma, { slug: "bulk-org" })).id;
  otherOrgId = (await createOrganization(prisma, { slug: "bulk-other" })).id;
  await prisma.role.create({ data: { organizationId: orgId, name: "editor" } });
});
afterAll(async () => {
  await porta?.stop();
});

const user = (email: string) => porta.services.db.prisma.user.findFirst({ where: { organizationId: orgId, email }, include: { roles: { include: { role: true } } } });

describe("all_or_nothing", () => {
  it("applies every item in one go and audits each, without passwords", async () => {
    const prisma = porta.services.db.prisma;
    const existing = await createUser(prisma, orgId, { email: "existing@bulk.test", givenName: "Old" });
    const leaving = await createUser(prisma, orgId, { email: "leaving@bulk.test" });
    const inactive = await createUser(prisma, orgId, { email: "inactive@bulk.test", status: "inactive" });
    const role = await prisma.role.findFirstOrThrow({ where: { organizationId: orgId, name: "editor" } });
    const res = await api.post<BulkResult>("/bulk", {
      organizationId: orgId,
      operations: [
        { op: "create", email: "New.One@Bulk.test", givenName: "New", password: "a long bulk password 9" },
        { op: "create", email: "new.two@bulk.test" },
        { op: "update", userId: existing.id, givenName: "Renamed" },
        { op: "activate", userId: inactive.id },
        { op: "deactivate", userId: existing.id },
        { op: "assignRole", userId: existing.id, roleName: "editor" },
        { op: "assignRole", userId: inactive.id, roleId: role.id },
        { op: "delete", userId: leaving.id },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ mode: "all_or_nothing", applied: true, succeeded: 8, failed: 0 });
    expect(res.body.results.map((r) => [r.index, r.op, r.status])).toEqual([
      [0, "create", "succeeded"],
      [1, "create", "succeeded"],
      [2, "update", "succeeded"],
      [3, "activate", "succeeded"],
      [4, "deactivate", "succeeded"],
      [5, "assignRole", "succeeded"],
      [6, "assignRole", "succeeded"],
      [7, "delete", "succeeded"],
    ]);
    expect(res.body.results[0]!.user).toMatchObject({ email: "new.one@bulk.test", givenName: "New" });

    const created = await user("new.one@bulk.test");
    expect(created?.passwordHash).toMatch(/^\$argon2id\$/);
    expect(await user("new.two@bulk.test")).not.toBeNull();
    const changed = await user("existing@bulk.test");
    expect(changed).toMatchObject({ givenName: "Renamed", status: "inactive" });
    expect(changed!.roles.map((r) => r.role.name)).toEqual(["editor"]);
    expect((await user("inactive@bulk.test"))!.status).toBe("active");
    expect((await user("inactive@bulk.test"))!.roles.map((r) => r.role.name)).toEqual(["editor"]);
    expect(await user("leaving@bulk.test")).toBeNull();

    const audit = await prisma.auditEntry.findMany({ where: { organizationId: orgId, createdAt: { gte: new Date(Date.now() - 60_000) } }, orderBy: { id: "asc" } });
    expect(audit.map((a) => a.eventType)).toEqual([
      "user.created",
      "user.created",
      "user.updated",
      "user.activated",
      "user.deactivated",
      "user.role_assigned",
      "user.role_assigned",
      "user.deleted",
      "bulk.executed",
    ]);
    expect(audit[0]!.data).toEqual({ change: { email: "new.one@bulk.test", givenName: "New", passwordSet: true }, bulk: true });
    // An update records what changed, field by field (decision 039).
    expect(audit[2]!.data).toEqual({ change: { userId: existing.id, givenName: "Renamed" }, bulk: true, changes: [{ field: "givenName", before: "Old", after: "Renamed" }] });
    expect(JSON.stringify(audit)).not.toContain("a long bulk password 9");
    expect(audit[8]!.data).toEqual({ mode: "all_or_nothing", operations: 8, succeeded: 8, failed: 0 });
  });

  it("rolls everything back at the first failure and names the failing item", async () => {
    const prisma = porta.services.db.prisma;
    const before = await dataFingerprint(porta);
    const target = await createUser(prisma, orgId, { email: "target@bulk.test", givenName: "Before" });
    const afterCreate = await dataFingerprint(porta);
    const cases: Array<[string, unknown[], number, string, string]> = [
      ["duplicate email", [{ op: "create", email: "fresh@bulk.test" }, { op: "update", userId: target.id, givenName: "After" }, { op: "create", email: "target@bulk.test" }], 409, "duplicate", "operations.2.email"],
      ["weak password", [{ op: "create", email: "fresh@bulk.test" }, { op: "create", email: "weak@bulk.test", password: "short" }], 422, "validation_failed", "operations.1.password"],
      ["user of another organization", [{ op: "create", email: "fresh@bulk.test" }, { op: "activate", userId: (await createUser(prisma, otherOrgId)).id }], 404, "not_found", "operations.1"],
      ["unknown role", [{ op: "create", email: "fresh@bulk.test" }, { op: "assignRole", userId: target.id, roleName: "nobody" }], 422, "validation_failed", "operations.1.roleName"],
    ];
    const fingerprint = await dataFingerprint(porta);
    for (const [label, operations, status, code, field] of cases) {
      const res = await api.post<ErrorBody>("/bulk", { organizationId: orgId, operations });
      expectError(res, status, code, label);
      expect(res.body.error.details?.map((d) => d.field), label).toContain(field);
      expect(res.body.error.message, label).toMatch(/Nothing was changed\.$/);
    }
    expect(await user("fresh@bulk.test")).toBeNull();
    expect((await user("target@bulk.test"))!.givenName).toBe("Before");
    const { users: _u, userVersions: _v, ...rest } = await dataFingerprint(porta);
    const { users: _u2, userVersions: _v2, ...restBefore } = fingerprint;
    expect(rest).toEqual(restBefore);
    expect(before.users + 1).toBe(afterCreate.users);
  });

  it("keeps the single-item rules: an admin cannot deactivate or delete their own account", async () => {
    const superAdmin = porta.bootstrap.organizationId;
    const me = await porta.services.db.prisma.user.findFirstOrThrow({ where: { organizationId: superAdmin, email: TEST_ADMIN.email } });
    for (const op of ["deactivate", "delete"]) {
      const res = await api.post<ErrorBody>("/bulk", { organizationId: superAdmin, operations: [{ op, userId: me.id }] });
      expectError(res, 409, "self_modification", op);
    }
    expect((await porta.services.db.prisma.user.findUniqueOrThrow({ where: { id: me.id } })).status).toBe("active");
  });
});

describe("best_effort", () => {
  it("applies what it can and reports each item", async () => {
    const prisma = porta.services.db.prisma;
    const taken = await createUser(prisma, orgId, { email: "taken@bulk.test" });
    const res = await api.post<BulkResult>("/bulk", {
      organizationId: orgId,
      mode: "best_effort",
      operations: [
        { op: "create", email: "effort@bulk.test" },
        { op: "create", email: "taken@bulk.test" },
        { op: "update", userId: taken.id, familyName: "Updated" },
        { op: "delete", userId: "0190a000-0000-7000-8000-000000000000" },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ mode: "best_effort", applied: true, succeeded: 2, failed: 2 });
    expect(res.body.results.map((r) => [r.op, r.status, r.error?.status ?? null, r.error?.code ?? null])).toEqual([
      ["create", "succeeded", null, null],
      ["create", "failed", 409, "duplicate"],
      ["update", "succeeded", null, null],
      ["delete", "failed", 404, "not_found"],
    ]);
    expect(res.body.results[1]!.error?.details).toEqual([{ field: "operations.1.email", message: "already taken" }]);
    expect(await user("effort@bulk.test")).not.toBeNull();
    expect((await user("taken@bulk.test"))!.familyName).toBe("Updated");
  });
});

describe("refusals", () => {
  it("answers 422 with field details for malformed batches and writes nothing", async () => {
    const before = await dataFingerprint(porta);
    const many = Array.from({ length: 501 }, (_, i) => ({ op: "create", email: `u${i}@bulk.test` }));
    const cases: Array<[string, unknown, string]> = [
      ["no organization", { operations: [{ op: "activate", userId: orgId }] }, "organizationId"],
      ["bad organization id", { organizationId: "x", operations: [{ op: "activate", userId: orgId }] }, "organizationId"],
      ["operations not a list", { organizationId: orgId, operations: "all" }, "operations"],
      ["empty batch", { organizationId: orgId, operations: [] }, "operations"],
      ["too many", { organizationId: orgId, operations: many }, "operations"],
      ["unknown op", { organizationId: orgId, operations: [{ op: "promote", userId: orgId }] }, "operations.0.op"],
      ["unknown mode", { organizationId: orgId, mode: "maybe", operations: [{ op: "activate", userId: orgId }] }, "mode"],
      ["unknown field", { organizationId: orgId, operations: [{ op: "activate", userId: orgId, force: true }] }, "operations.0"],
      ["unknown top field", { organizationId: orgId, operations: [{ op: "activate", userId: orgId }], dryRun: true }, "dryRun"],
      ["bad user id", { organizationId: orgId, operations: [{ op: "delete", userId: "12" }] }, "operations.0.userId"],
      ["bad email", { organizationId: orgId, operations: [{ op: "create", email: "not-an-email" }] }, "operations.0.email"],
      ["oversize name", { organizationId: orgId, operations: [{ op: "create", email: "a@bulk.test", givenName: OVERSIZE }] }, "operations.0.givenName"],
      ["wrong type", { organizationId: orgId, operations: [{ op: "create", email: "a@bulk.test", emailVerified: "yes" }] }, "operations.0.emailVerified"],
      ["role twice", { organizationId: orgId, operations: [{ op: "assignRole", userId: orgId, roleId: orgId, roleName: "editor" }] }, "operations.0.roleId"],
      ["role missing", { organizationId: orgId, operations: [{ op: "assignRole", userId: orgId }] }, "operations.0.roleId"],
    ];
    for (const [label, body, field] of cases) expect422(await api.post("/bulk", body), field, label);
    expect(await dataFingerprint(porta)).toEqual(before);
  });

  it("answers 404 for an unknown organization, 403 without admin:bulk:execute, 401 without a token", async () => {
    const operations = [{ op: "create", email: "nobody@bulk.test" }];
    expectError(await api.post("/bulk", { organizationId: "0190a000-0000-7000-8000-000000000000", operations }), 404, "not_found");
    await withoutPermission(porta, "admin:bulk:execute", async () => {
      expectError(await api.post("/bulk", { organizationId: orgId, operations }), 403, "forbidden");
    });
    expectError(await adminApi(porta, undefined).post("/bulk", { organizationId: orgId, operations }), 401, "unauthorized");
    expect(await user("nobody@bulk.test")).toBeNull();
  });
});
