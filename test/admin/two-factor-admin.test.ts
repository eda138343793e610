import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { systemActor } from "~/.server/auth/actors";
import { beginTotpEnrollment } from "~/.server/auth/two-factor/service";
import { readContext } from "~/.server/context";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { startTestPorta, TEST_ADMIN, type TestPorta } from "../support/porta";
import {
  createTenant,
  createUserInState,
  openLoginPage,
  openRecovery,
  redeem,
  signInWithPassword,
  submitCode,
  toCallback,
  type Tenant,
  type TestUser,
} from "../two-factor/helpers";
import { dataFingerprint, expect422, expectError, OVERSIZE, type BadRequest } from "./helpers";

/**
 * Two-factor administration in the Admin API: a user's enrollment, disabling, resetting and
 * new recovery codes (shown once; the old ones stop working on the login pages), the
 * organization's policy with ETag and If-Match, and the adoption summary.
 */
interface Status {
  userId: string;
  totp: { enrolled: boolean; pending: boolean; enrolledAt: string | null };
  emailOtp: { enabled: boolean };
  recoveryCodes: { remaining: number; total: number };
}
interface Policy {
  organizationId: string;
  policy: string;
}
interface Summary {
  data: Array<{ organizationId: string; slug: string; policy: string; users: number; byMethod: { totp: number; email: number; recoveryCodes: number; passkey: number } }>;
}

// Argon2id (recovery codes) is slow on a shared, busy machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 240_000 });

let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
let adminId: string;
let optional: Tenant;

beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  adminId = (await porta.services.db.prisma.user.findFirstOrThrow({ where: { email: TEST_ADMIN.email } })).id;
  optional = await createTenant(porta, "optional");
});
afterAll(async () => {
  await porta?.stop();
});

const UNKNOWN_ID = "0190a000-0000-7000-8000-000000000000";
const status = (userId: string) => api.get<Status>(`/users/${userId}/two-factor`);
const policyOf = (orgId: string) => api.get<Policy>(`/organizations/${orgId}/two-factor-policy`);
const auditOf = (eventType: string, targetId: string) => porta.services.db.prisma.auditEntry.findMany({ where: { eventType, targetId } });

/** A password login followed by a recovery code on the real pages; the subject on success, else the status of the code POST. */
async function loginWithRecoveryCode(tenant: Tenant, user: TestUser, code: string): Promise<{ status: number; sub?: string }> {
  const page = await openLoginPage(tenant);
  const step = await signInWithPassword(page, user.email);
  expect(step.kind).toBe("totp");
  const form = await openRecovery(page.browser, step);
  if (form.kind !== "recovery") throw new Error(`expected the recovery form, got ${form.kind}`);
  const { res, step: after } = await submitCode(page.browser, form, code);
  if (res.status !== 302) return { status: res.status };
  const tokens = await redeem(page, await toCallback(page.browser, after!));
  return { status: res.status, sub: tokens.claims()!.sub };
}

/** The first step after the password on the real login pages. */
async function stepAfterPassword(tenant: Tenant, user: TestUser) {
  return (await signInWithPassword(await openLoginPage(tenant), user.email)).kind;
}

describe("a user's two-factor enrollment", () => {
  it("shows the status of an enrolled, a pending and an unenrolled user", async () => {
    const enrolled = await createUserInState(porta, optional, "totp");
    const res = await status(enrolled.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      userId: enrolled.id,
      totp: { enrolled: true, pending: false, enrolledAt: expect.any(String) },
      emailOtp: { enabled: false },
      recoveryCodes: { remaining: 10, total: 10 },
      passkeys: { count: 0 },
    });
    expect(Math.abs(Date.parse(res.body.totp.enrolledAt!) - Date.now())).toBeLessThan(60_000);
    expect(JSON.stringify(res.body)).not.toContain(enrolled.recoveryCodes![0]!);

    const email = await createUserInState(porta, optional, "email");
    expect((await status(email.id)).body).toEqual({
      userId: email.id,
      totp: { enrolled: false, pending: false, enrolledAt: null },
      emailOtp: { enabled: true },
      recoveryCodes: { remaining: 0, total: 0 },
      passkeys: { count: 0 },
    });
    const pending = await createUserInState(porta, optional, "none");
    await beginTotpEnrollment(readContext(porta.services, systemActor(null)), pending.id);
    expect((await status(pending.id)).body.totp).toEqual({ enrolled: false, pending: true, enrolledAt: null });

    const used = await createUserInState(porta, optional, "recovery-used");
    expect((await status(used.id)).body.recoveryCodes).toEqual({ remaining: 0, total: 10 });
    expectError(await status(UNKNOWN_ID), 404, "not_found");
  });

  it("regenerates recovery codes: ten new ones shown once, the old ones no longer work at login", async () => {
    const prisma = porta.services.db.prisma;
    const user = await createUserInState(porta, optional, "totp");
    const old = user.recoveryCodes!;
    const res = await api.post<{ codes: string[] }>(`/users/${user.id}/two-factor/recovery-codes`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["codes"]);
    expect(res.body.codes).toHaveLength(10);
    for (const code of res.body.codes) expect(code).toMatch(/^[A-Z2-9]{4}-[A-Z2-9]{4}$/);
    expect(new Set(res.body.codes).size).toBe(10);
    expect(res.body.codes.filter((c) => old.includes(c))).toEqual([]);
    // Shown once: only hashes are kept, and the status shows counts.
    const stored = await prisma.recoveryCode.findMany({ where: { userId: user.id } });
    expect(stored).toHaveLength(10);
    for (const row of stored) expect(res.body.codes.some((c) => row.codeHash.includes(c) || row.codeHash.includes(c.replace("-", "")))).toBe(false);
    expect((await status(user.id)).body.recoveryCodes).toEqual({ remaining: 10, total: 10 });

    // The login page refuses an old code (401, the form shown again) and consumes nothing.
    expect(await loginWithRecoveryCode(optional, user, old[0]!)).toEqual({ status: 401 });
    expect((await status(user.id)).body.recoveryCodes).toEqual({ remaining: 10, total: 10 });
    expect(await loginWithRecoveryCode(optional, user, res.body.codes[3]!)).toEqual({ status: 302, sub: user.id });
    expect((await status(user.id)).body.recoveryCodes).toEqual({ remaining: 9, total: 10 });

    const [audit] = await auditOf("user.2fa.recovery_codes_regenerated", user.id);
    expect(audit).toMatchObject({ actorType: "admin", actorId: adminId, organizationId: optional.org.id, targetType: "user" });
    for (const code of res.body.codes) expect(JSON.stringify(audit)).not.toContain(code);

    // No TOTP, no recovery codes.
    const plain = await createUserInState(porta, optional, "none");
    expectError(await api.post(`/users/${plain.id}/two-factor/recovery-codes`), 409, "not_enrolled");
    expect(await prisma.recoveryCode.count({ where: { userId: plain.id } })).toBe(0);
    expectError(await api.post(`/users/${UNKNOWN_ID}/two-factor/recovery-codes`), 404, "not_found");
  });

  it("reset forgets TOTP and recovery codes but keeps email codes; a TOTP policy enrolls again at the next login", async () => {
    const requireTotp = await createTenant(porta, "required_totp");
    const user = await createUserInState(porta, requireTotp, "totp");
    await porta.services.db.prisma.user.update({ where: { id: user.id }, data: { emailOtpEnabled: true } });
    expect(await stepAfterPassword(requireTotp, user)).toBe("totp");

    const res = await api.post<Status>(`/users/${user.id}/two-factor/reset`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      userId: user.id,
      totp: { enrolled: false, pending: false, enrolledAt: null },
      emailOtp: { enabled: true },
      recoveryCodes: { remaining: 0, total: 0 },
      passkeys: { count: 0 },
    });
    expect((await status(user.id)).body).toEqual(res.body);
    expect(await stepAfterPassword(requireTotp, user)).toBe("setup");
    expect(await auditOf("user.2fa.reset", user.id)).toEqual([
      expect.objectContaining({ actorType: "admin", actorId: adminId, organizationId: requireTotp.org.id, targetType: "user", data: { removed: ["totp"] } }),
    ]);
    expectError(await api.post(`/users/${UNKNOWN_ID}/two-factor/reset`), 404, "not_found");
  });

  it("disable turns every factor off: the next login has no second step", async () => {
    const user = await createUserInState(porta, optional, "totp");
    await porta.services.db.prisma.user.update({ where: { id: user.id }, data: { emailOtpEnabled: true } });
    // Both factors on: the person chooses between them.
    expect(await stepAfterPassword(optional, user)).toBe("choose");

    const res = await api.delete<Status>(`/users/${user.id}/two-factor`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      userId: user.id,
      totp: { enrolled: false, pending: false, enrolledAt: null },
      emailOtp: { enabled: false },
      recoveryCodes: { remaining: 0, total: 0 },
      passkeys: { count: 0 },
    });
    expect(["callback", "consent"]).toContain(await stepAfterPassword(optional, user));
    expect(await auditOf("user.2fa.disabled", user.id)).toEqual([
      expect.objectContaining({ actorType: "admin", actorId: adminId, organizationId: optional.org.id, targetType: "user", data: { removed: ["totp", "email"] } }),
    ]);
    expectError(await api.delete(`/users/${UNKNOWN_ID}/two-factor`), 404, "not_found");
  });
});

describe("the organization's policy", () => {
  it("reads and sets the policy with ETags; the next login follows it", async () => {
    const tenant = await createTenant(porta, "optional");
    const user = await createUserInState(porta, tenant, "none");
    const read = await policyOf(tenant.org.id);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ organizationId: tenant.org.id, policy: "optional" });
    const etag = read.headers.get("etag")!;
    expect(etag).toMatch(/^"v\d+"$/);
    expect(["callback", "consent"]).toContain(await stepAfterPassword(tenant, user));

    const set = await api.put<Policy>(`/organizations/${tenant.org.id}/two-factor-policy`, { policy: "required_totp" }, { "if-match": etag });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ organizationId: tenant.org.id, policy: "required_totp" });
    const next = set.headers.get("etag")!;
    expect(Number(next.slice(2, -1))).toBe(Number(etag.slice(2, -1)) + 1);
    expect((await policyOf(tenant.org.id)).headers.get("etag")).toBe(next);
    expect(await stepAfterPassword(tenant, user)).toBe("setup");

    // Without If-Match the write is unconditional.
    expect((await api.put<Policy>(`/organizations/${tenant.org.id}/two-factor-policy`, { policy: "optional" })).body.policy).toBe("optional");
    const audits = await auditOf("organization.2fa_policy.updated", tenant.org.id);
    expect(audits.map((a) => a.data)).toEqual([
      { change: { policy: "required_totp" }, changes: [{ field: "policy", before: "optional", after: "required_totp" }] },
      { change: { policy: "optional" }, changes: [{ field: "policy", before: "required_totp", after: "optional" }] },
    ]);
    expect(audits[0]).toMatchObject({ actorType: "admin", actorId: adminId, organizationId: tenant.org.id, targetType: "organization" });

    expectError(await policyOf(UNKNOWN_ID), 404, "not_found");
    expectError(await api.put(`/organizations/${UNKNOWN_ID}/two-factor-policy`, { policy: "optional" }), 404, "not_found");
  });

  it("two writers with the same ETag: one wins, the other gets 409 and changes nothing", async () => {
    const tenant = await createTenant(porta, "optional");
    const etag = (await policyOf(tenant.org.id)).headers.get("etag")!;
    const path = `/organizations/${tenant.org.id}/two-factor-policy`;
    const [a, b] = await Promise.all([
      api.put<Policy>(path, { policy: "required_email" }, { "if-match": etag }),
      api.put<Policy>(path, { policy: "required_any" }, { "if-match": etag }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const [winner, loser] = a.status === 200 ? [a, b] : [b, a];
    expectError(loser, 409, "etag_mismatch");
    expect((await policyOf(tenant.org.id)).body.policy).toBe(winner.body.policy);
    expect(await auditOf("organization.2fa_policy.updated", tenant.org.id)).toHaveLength(1);

    // A stale ETag stays stale.
    expectError(await api.put(path, { policy: "optional" }, { "if-match": etag }), 409, "etag_mismatch");
    expect((await policyOf(tenant.org.id)).body.policy).toBe(winner.body.policy);
  });
});

describe("summary", () => {
  it("counts users and adoption per method per organization", async () => {
    const tenant = await createTenant(porta, "required_any");
    await createUserInState(porta, tenant, "none");
    await createUserInState(porta, tenant, "email");
    await createUserInState(porta, tenant, "totp");
    await createUserInState(porta, tenant, "recovery-used");
    const both = await createUserInState(porta, tenant, "totp");
    await porta.services.db.prisma.user.update({ where: { id: both.id }, data: { emailOtpEnabled: true } });
    // Two passkeys of one user count once.
    for (const name of ["Laptop", "Phone"]) {
      await porta.services.db.prisma.passkey.create({
        data: { organizationId: tenant.org.id, userId: both.id, credentialId: `${name}-${both.id}`, userHandle: "aGFuZGxl", publicKey: Buffer.from([1]), deviceType: "singleDevice", name },
      });
    }
    const res = await api.get<Summary>("/two-factor/summary");
    expect(res.status).toBe(200);
    expect(res.body.data.find((row) => row.organizationId === tenant.org.id)).toEqual({
      organizationId: tenant.org.id,
      slug: tenant.org.slug,
      policy: "required_any",
      users: 5,
      byMethod: { totp: 3, email: 2, recoveryCodes: 2, passkey: 1 },
    });
    const empty = await createTenant(porta, "optional");
    expect((await api.get<Summary>("/two-factor/summary")).body.data.find((row) => row.organizationId === empty.org.id)).toEqual({
      organizationId: empty.org.id,
      slug: empty.org.slug,
      policy: "optional",
      users: 0,
      byMethod: { totp: 0, email: 0, recoveryCodes: 0, passkey: 0 },
    });
    // Sorted by slug.
    const slugs = res.body.data.map((row) => row.slug);
    expect(slugs).toEqual([...slugs].sort());
  });
});

describe("bad input and permissions", () => {
  it("answers 422 with field details for bad input and writes nothing", async () => {
    const user = await createUserInState(porta, optional, "totp");
    const org = `/organizations/${optional.org.id}/two-factor-policy`;
    const cases: BadRequest[] = [
      { label: "status: id not a UUID", method: "GET", path: "/users/nope/two-factor", field: "path.id" },
      { label: "status: unknown parameter", method: "GET", path: `/users/${user.id}/two-factor?verbose=1`, field: "query.verbose" },
      { label: "disable: id not a UUID", method: "DELETE", path: `/users/${OVERSIZE}/two-factor`, field: "path.id" },
      { label: "reset: id not a UUID", method: "POST", path: "/users/123/two-factor/reset", field: "path.id" },
      { label: "reset: unknown field", method: "POST", path: `/users/${user.id}/two-factor/reset`, body: { keepEmail: true }, field: "keepEmail" },
      { label: "codes: id not a UUID", method: "POST", path: "/users/nope/two-factor/recovery-codes", field: "path.id" },
      { label: "codes: unknown field", method: "POST", path: `/users/${user.id}/two-factor/recovery-codes`, body: { count: 20 }, field: "count" },
      { label: "policy: orgId not a UUID", method: "GET", path: "/organizations/nope/two-factor-policy", field: "path.orgId" },
      { label: "policy: unknown value", method: "PUT", path: org, body: { policy: "sometimes" }, field: "policy" },
      { label: "policy: wrong type", method: "PUT", path: org, body: { policy: 1 }, field: "policy" },
      { label: "policy: oversize", method: "PUT", path: org, body: { policy: OVERSIZE }, field: "policy" },
      { label: "policy: missing", method: "PUT", path: org, body: {}, field: "policy" },
      { label: "policy: unknown field", method: "PUT", path: org, body: { policy: "optional", users: "all" }, field: "users" },
      { label: "policy: orgId not a UUID on write", method: "PUT", path: "/organizations/nope/two-factor-policy", body: { policy: "optional" }, field: "path.orgId" },
      { label: "summary: unknown parameter", method: "GET", path: "/two-factor/summary?organizationId=x", field: "query.organizationId" },
    ];
    const before = await dataFingerprint(porta);
    const statusBefore = (await status(user.id)).body;
    const policyBefore = await policyOf(optional.org.id);
    for (const c of cases) expect422(await api.call(c.method, c.path, c.body), c.field, c.label);
    expect(await dataFingerprint(porta)).toEqual(before);
    expect((await status(user.id)).body).toEqual(statusBefore);
    const policyAfter = await policyOf(optional.org.id);
    expect(policyAfter.body).toEqual(policyBefore.body);
    expect(policyAfter.headers.get("etag")).toBe(policyBefore.headers.get("etag"));
    expectError(await api.put(org, { policy: "optional" }, { "if-match": "yesterday" }), 400, "bad_request");
  });

  it("needs admin:2fa:read, admin:2fa:write, admin:org:read and admin:org:update for the respective operations", async () => {
    const prisma = porta.services.db.prisma;
    const user = await createUserInState(porta, optional, "totp");
    const withoutPermission = async (permission: string, check: () => Promise<void>) => {
      const link = await prisma.rolePermission.findFirstOrThrow({ where: { role: { name: "service-admin" }, permission: { name: permission } } });
      await prisma.rolePermission.delete({ where: { roleId_permissionId: { roleId: link.roleId, permissionId: link.permissionId } } });
      try {
        await check();
      } finally {
        await prisma.rolePermission.create({ data: link });
      }
    };
    const org = `/organizations/${optional.org.id}/two-factor-policy`;
    await withoutPermission("admin:2fa:read", async () => {
      expectError(await status(user.id), 403, "forbidden");
      expectError(await api.get("/two-factor/summary"), 403, "forbidden");
    });
    const before = await dataFingerprint(porta);
    await withoutPermission("admin:2fa:write", async () => {
      const after = await dataFingerprint(porta);
      expectError(await api.delete(`/users/${user.id}/two-factor`), 403, "forbidden");
      expectError(await api.post(`/users/${user.id}/two-factor/reset`), 403, "forbidden");
      expectError(await api.post(`/users/${user.id}/two-factor/recovery-codes`), 403, "forbidden");
      expect(await dataFingerprint(porta)).toEqual(after);
    });
    await withoutPermission("admin:org:read", async () => {
      expectError(await api.get(org), 403, "forbidden");
    });
    await withoutPermission("admin:org:update", async () => {
      expectError(await api.put(org, { policy: "required_totp" }), 403, "forbidden");
      expect((await api.get<Policy>(org)).body.policy).toBe("optional");
    });
    expect((await dataFingerprint(porta)).orgVersions).toBe(before.orgVersions);
    expect((await status(user.id)).body.recoveryCodes).toEqual({ remaining: 10, total: 10 });
    expectError(await adminApi(porta, undefined).get(`/users/${user.id}/two-factor`), 401, "unauthorized");
  });
});
