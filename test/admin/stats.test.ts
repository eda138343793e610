import { afterAll, beforeAll, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createOrganization, createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { enrollTotp } from "../two-factor/helpers";
import { createTenant, dataFingerprint, expect422, expectError, PASSWORD, signIn, unique } from "./helpers";

/**
 * GET /stats/overview on a fresh server whose every row the test wrote: the figures are exact,
 * and they come from count and group-by queries, never from loading the rows.
 */
interface Overview {
  generatedAt: string;
  organizations: { total: number; byStatus: { active: number; suspended: number; deleted: number } };
  users: { total: number; active: number; inactive: number; locked: number };
  logins: { last24h: { total: number; byMethod: Record<string, number> }; last7d: { total: number; byMethod: Record<string, number> } };
  twoFactor: { totpEnrolled: number; emailOtpEnabled: number; anyEnrolled: number; adoptionRate: number };
}

let porta: TestPorta;
let api: ReturnType<typeof adminApi>;

beforeAll(async () => {
  porta = await startTestPorta();
  // The admin's own sign-in is the first password login of the day.
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
});
afterAll(async () => {
  await porta?.stop();
});

const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000);

it("counts organizations by status, users, logins by method and window, and 2FA adoption", async () => {
  const prisma = porta.services.db.prisma;
  const tenant = await createTenant(porta);
  const org = tenant.org.id;
  const email = () => `${unique("s")}@example.com`;
  const totp = await createUser(prisma, org, { email: email(), password: null });
  await enrollTotp(porta, totp.id);
  await createUser(prisma, org, { email: email(), password: null }).then((u) => prisma.user.update({ where: { id: u.id }, data: { emailOtpEnabled: true } }));
  const both = await createUser(prisma, org, { email: email(), password: null });
  await enrollTotp(porta, both.id);
  await prisma.user.update({ where: { id: both.id }, data: { emailOtpEnabled: true } });
  await createUser(prisma, org, { email: email(), password: null, status: "inactive" });
  const locked = await createUser(prisma, org, { email: email(), password: null });
  await prisma.user.update({ where: { id: locked.id }, data: { lockedUntil: new Date(Date.now() + 3_600_000) } });
  // A lock that ran out is no lock.
  const unlocked = await createUser(prisma, org, { email: email(), password: null });
  await prisma.user.update({ where: { id: unlocked.id }, data: { lockedUntil: hoursAgo(1) } });
  // A pending TOTP enrollment is not adoption.
  await prisma.totpCredential.create({ data: { userId: unlocked.id, secretEncrypted: "x", status: "pending" } });
  const signer = await createUser(prisma, org, { email: email(), password: PASSWORD });

  const suspended = await createOrganization(prisma, { status: "suspended" });
  await createUser(prisma, suspended.id, { email: email(), password: null });
  const deleted = await createOrganization(prisma, { status: "deleted" });
  await createUser(prisma, deleted.id, { email: email(), password: null, status: "inactive" });
  const deletedUser = await createUser(prisma, deleted.id, { email: email(), password: null });
  await enrollTotp(porta, deletedUser.id);

  // A real password login at the tenant, and recorded logins at other times.
  await signIn(tenant, { email: signer.email, password: PASSWORD });
  const login = (method: string | null, at: Date, eventType = "auth.login.success") =>
    prisma.auditEntry.create({ data: { eventType, organizationId: org, actorType: "user", createdAt: at, data: method ? { method } : {} } });
  await login("magic_link", hoursAgo(1));
  await login("magic_link", hoursAgo(23));
  await login("password", hoursAgo(48));
  await login("magic_link", hoursAgo(24 * 6));
  await login("password", hoursAgo(24 * 8));
  await login("magic_link", hoursAgo(24 * 30));
  await login("password", hoursAgo(1), "auth.login.failure");

  const sql: string[] = [];
  const stop = porta.services.db.onQuery((statement) => sql.push(statement));
  const res = await api.get<Overview>("/stats/overview");
  stop();
  expect(res.status).toBe(200);
  expect(Math.abs(Date.parse(res.body.generatedAt) - Date.now())).toBeLessThan(60_000);
  expect(res.body.organizations).toEqual({ total: 4, byStatus: { active: 2, suspended: 1, deleted: 1 } });
  // Admin + 7 in the tenant + 1 in the suspended organization; the deleted organization's users do not count.
  expect(res.body.users).toEqual({ total: 9, active: 8, inactive: 1, locked: 1 });
  expect(res.body.logins).toEqual({
    last24h: { total: 4, byMethod: { password: 2, magic_link: 2 } },
    last7d: { total: 6, byMethod: { password: 3, magic_link: 3 } },
  });
  expect(res.body.twoFactor).toEqual({ totpEnrolled: 2, emailOtpEnabled: 2, anyEnrolled: 3, adoptionRate: 0.3333 });

  // Counted in the database: apart from the authentication's lookups of the admin by id, every
  // statement over organizations, users, factors and audit entries is an aggregate.
  const adminLookup = (statement: string) => /\."id" = \$1/.test(statement);
  const statsSql = sql.filter((s) => /"(User|TotpCredential|AuditEntry|Organization)"/.test(s) && !adminLookup(s));
  expect(statsSql).toHaveLength(8);
  for (const statement of statsSql) expect(statement, statement).toMatch(/COUNT\(/i);
  expect(statsSql.filter((s) => /GROUP BY/i.test(s)).map((s) => /"(AuditEntry|Organization)"/.exec(s)?.[1]).sort()).toEqual(["AuditEntry", "Organization"]);
});

it("needs admin:stats:read, and takes no parameters", async () => {
  const prisma = porta.services.db.prisma;
  const link = await prisma.rolePermission.findFirstOrThrow({ where: { role: { name: "service-admin" }, permission: { name: "admin:stats:read" } } });
  await prisma.rolePermission.delete({ where: { roleId_permissionId: { roleId: link.roleId, permissionId: link.permissionId } } });
  try {
    expectError(await api.get("/stats/overview"), 403, "forbidden");
  } finally {
    await prisma.rolePermission.create({ data: link });
  }
  expect((await api.get("/stats/overview")).status).toBe(200);
  const before = await dataFingerprint(porta);
  expect422(await api.get("/stats/overview?organizationId=x"), "query.organizationId");
  expect422(await api.get(`/stats/overview?window=${"x".repeat(5000)}`), "query.window");
  expect(await dataFingerprint(porta)).toEqual(before);
  expectError(await adminApi(porta, undefined).get("/stats/overview"), 401, "unauthorized");
});
