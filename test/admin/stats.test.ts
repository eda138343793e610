import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createApplication, createClient, createOrganization, createUser } from "../support/factories";
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
  users: { total: number; active: number; inactive: number; locked: number; importedPassword: number };
  logins: { last24h: LoginWindow; last7d: LoginWindow; daily: LoginDay[] };
  twoFactor: { totpEnrolled: number; emailOtpEnabled: number; anyEnrolled: number; adoptionRate: number };
}

interface LoginWindow {
  total: number;
  byMethod: Record<string, number>;
}
interface LoginDay extends LoginWindow {
  date: string;
}
interface OrganizationStats {
  generatedAt: string;
  organization: { id: string; slug: string; status: string };
  users: Overview["users"];
  logins: { last24h: LoginWindow; last7d: LoginWindow; last30d: LoginWindow; daily: LoginDay[] };
  twoFactor: Overview["twoFactor"];
  clients: { total: number; active: number; inactive: number };
  applications: { total: number; active: number; inactive: number };
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

/**
 * The series a person expects from the successful logins in the database: one entry per UTC
 * day, oldest first, today last, counted here in JavaScript from the rows themselves.
 */
async function expectedDaily(days: number, organizationId?: string): Promise<LoginDay[]> {
  const rows = await porta.services.db.prisma.auditEntry.findMany({
    where: { eventType: "auth.login.success", ...(organizationId ? { organizationId } : {}) },
    select: { createdAt: true, data: true },
  });
  const today = new Date();
  const series: LoginDay[] = [];
  for (let back = days - 1; back >= 0; back--) {
    const date = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - back)).toISOString().slice(0, 10);
    const byMethod: Record<string, number> = { password: 0, magic_link: 0, passkey: 0, federated: 0 };
    for (const row of rows) {
      if (row.createdAt.toISOString().slice(0, 10) !== date) continue;
      const method = (row.data as { method?: string } | null)?.method ?? "unknown";
      byMethod[method] = (byMethod[method] ?? 0) + 1;
    }
    series.push({ date, total: Object.values(byMethod).reduce((a, b) => a + b, 0), byMethod });
  }
  return series;
}

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
  // The total is what the dashboard shows and its chart adds up to: deleted organizations are not counted.
  expect(res.body.organizations).toEqual({ total: 3, byStatus: { active: 2, suspended: 1, deleted: 1 } });
  // Admin + 7 in the tenant + 1 in the suspended organization; the deleted organization's users do not count.
  expect(res.body.users).toEqual({ total: 9, active: 8, inactive: 1, locked: 1, importedPassword: 0 });
  expect(res.body.logins).toEqual({
    last24h: { total: 4, byMethod: { password: 2, magic_link: 2, passkey: 0, federated: 0 } },
    last7d: { total: 6, byMethod: { password: 3, magic_link: 3, passkey: 0, federated: 0 } },
    daily: await expectedDaily(14),
  });
  // Two weeks, today last; the 8-day-old login is in the series, the 30-day-old one is not.
  expect(res.body.logins.daily).toHaveLength(14);
  expect(res.body.logins.daily.at(-1)!.date).toBe(new Date().toISOString().slice(0, 10));
  expect(res.body.logins.daily.reduce((n, d) => n + d.total, 0)).toBe(7);
  expect(res.body.twoFactor).toEqual({ totpEnrolled: 2, emailOtpEnabled: 2, anyEnrolled: 3, adoptionRate: 0.3333 });

  // Counted in the database: apart from the authentication's lookups (the admin by id, the
  // super-admin organization by slug when its cached record has lapsed), every statement over
  // organizations, users, factors and audit entries is an aggregate.
  const adminLookup = (statement: string) => /\."id" = \$1|WHERE u\.id = \$1::uuid|"Organization"\."slug" = \$1/.test(statement);
  // The first-app checklist (firstSteps) asks five existence questions: each reads at most one id.
  const existence = (statement: string) => /LIMIT \$\d+/i.test(statement) && !/COUNT\(/i.test(statement);
  const over = sql.filter((s) => /"(User|TotpCredential|AuditEntry|Organization|Application|Client)"/.test(s) && !adminLookup(s));
  expect(over.filter(existence)).toHaveLength(5);
  const statsSql = over.filter((s) => !existence(s) && /"(User|TotpCredential|AuditEntry|Organization)"/.test(s));
  expect(statsSql).toHaveLength(9);
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

describe("GET /stats/organizations/{orgId}", () => {
  it("counts one organization's users, logins by method over 24 hours, 7 and 30 days, 2FA adoption, clients and applications", async () => {
    const prisma = porta.services.db.prisma;
    const tenant = await createTenant(porta);
    const org = tenant.org.id;
    const other = await createTenant(porta);
    const email = () => `${unique("o")}@example.com`;
    const totp = await createUser(prisma, org, { email: email(), password: null });
    await enrollTotp(porta, totp.id);
    await createUser(prisma, org, { email: email(), password: null }).then((u) => prisma.user.update({ where: { id: u.id }, data: { emailOtpEnabled: true } }));
    const both = await createUser(prisma, org, { email: email(), password: null });
    await enrollTotp(porta, both.id);
    await prisma.user.update({ where: { id: both.id }, data: { emailOtpEnabled: true } });
    await createUser(prisma, org, { email: email(), password: null, status: "inactive" });
    const locked = await createUser(prisma, org, { email: email(), password: null });
    await prisma.user.update({ where: { id: locked.id }, data: { lockedUntil: new Date(Date.now() + 3_600_000) } });
    const unlocked = await createUser(prisma, org, { email: email(), password: null });
    await prisma.user.update({ where: { id: unlocked.id }, data: { lockedUntil: hoursAgo(1) } });
    await prisma.totpCredential.create({ data: { userId: unlocked.id, secretEncrypted: "x", status: "pending" } });
    const signer = await createUser(prisma, org, { email: email(), password: PASSWORD });
    // The other organization's users, factors, clients and logins do not count here.
    const elsewhere = await createUser(prisma, other.org.id, { email: email(), password: PASSWORD });
    await enrollTotp(porta, (await createUser(prisma, other.org.id, { email: email(), password: null })).id);
    await createApplication(prisma, other.org.id);

    await createClient(prisma, org, { status: "inactive" });
    const app = await createApplication(prisma, org);
    await createClient(prisma, org, { applicationId: app.id });
    await createApplication(prisma, org, { status: "inactive" });

    await signIn(tenant, { email: signer.email, password: PASSWORD });
    await signIn(other, { email: elsewhere.email, password: PASSWORD });
    const login = (organizationId: string, method: string, at: Date, eventType = "auth.login.success") =>
      prisma.auditEntry.create({ data: { eventType, organizationId, actorType: "user", createdAt: at, data: { method } } });
    await login(org, "magic_link", hoursAgo(1));
    await login(org, "password", hoursAgo(48));
    await login(org, "magic_link", hoursAgo(24 * 6));
    await login(org, "password", hoursAgo(24 * 8));
    await login(org, "magic_link", hoursAgo(24 * 20));
    await login(org, "magic_link", hoursAgo(24 * 29));
    await login(org, "password", hoursAgo(24 * 31));
    await login(org, "password", hoursAgo(1), "auth.login.failure");
    await login(other.org.id, "magic_link", hoursAgo(1));

    const sql: string[] = [];
    const stop = porta.services.db.onQuery((statement) => sql.push(statement));
    const res = await api.get<OrganizationStats>(`/stats/organizations/${org}`);
    stop();
    expect(res.status).toBe(200);
    expect(Math.abs(Date.parse(res.body.generatedAt) - Date.now())).toBeLessThan(60_000);
    expect(res.body).toEqual({
      generatedAt: res.body.generatedAt,
      organization: { id: org, slug: tenant.org.slug, status: "active" },
      users: { total: 7, active: 6, inactive: 1, locked: 1, importedPassword: 0 },
      logins: {
        last24h: { total: 2, byMethod: { password: 1, magic_link: 1, passkey: 0, federated: 0 } },
        last7d: { total: 4, byMethod: { password: 2, magic_link: 2, passkey: 0, federated: 0 } },
        last30d: { total: 7, byMethod: { password: 3, magic_link: 4, passkey: 0, federated: 0 } },
        daily: await expectedDaily(30, org),
      },
      twoFactor: { totpEnrolled: 2, emailOtpEnabled: 2, anyEnrolled: 3, adoptionRate: 0.4286 },
      // createTenant's client, the inactive one, and the application's client.
      clients: { total: 3, active: 2, inactive: 1 },
      applications: { total: 2, active: 1, inactive: 1 },
    });

    // The 29-day-old login is the series' first day; the 31-day-old one is outside it.
    expect(res.body.logins.daily.reduce((n, d) => n + d.total, 0)).toBe(7);
    expect(res.body.logins.daily[0]!.date).toBe(new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10));

    // Counted in the database: apart from the admin's authentication and the organization's
    // lookup by id, every statement is an aggregate.
    const byId = (statement: string) => /\."id" = \$1|WHERE u\.id = \$1::uuid/.test(statement);
    const statsSql = sql.filter((s) => /"(User|TotpCredential|AuditEntry|Client|Application)"/.test(s) && !byId(s));
    expect(statsSql).toHaveLength(10);
    for (const statement of statsSql) expect(statement, statement).toMatch(/COUNT\(/i);
    expect(statsSql.filter((s) => /GROUP BY/i.test(s))).toHaveLength(3);
  });

  it("answers zeros for an organization without users, logins or clients, and figures for a deleted one", async () => {
    const prisma = porta.services.db.prisma;
    const empty = await createOrganization(prisma);
    const res = await api.get<OrganizationStats>(`/stats/organizations/${empty.id}`);
    expect(res.status).toBe(200);
    const none = { total: 0, byMethod: { password: 0, magic_link: 0, passkey: 0, federated: 0 } };
    expect(res.body.logins.daily).toHaveLength(30);
    for (const day of res.body.logins.daily) expect(day).toEqual({ date: day.date, ...none });
    expect(res.body).toEqual({
      generatedAt: res.body.generatedAt,
      organization: { id: empty.id, slug: empty.slug, status: "active" },
      users: { total: 0, active: 0, inactive: 0, locked: 0, importedPassword: 0 },
      logins: { last24h: none, last7d: none, last30d: none, daily: res.body.logins.daily },
      twoFactor: { totpEnrolled: 0, emailOtpEnabled: 0, anyEnrolled: 0, adoptionRate: 0 },
      clients: { total: 0, active: 0, inactive: 0 },
      applications: { total: 0, active: 0, inactive: 0 },
    });
    const deleted = await createOrganization(prisma, { status: "deleted" });
    await createUser(prisma, deleted.id, { email: `${unique("d")}@example.com`, password: null });
    const gone = await api.get<OrganizationStats>(`/stats/organizations/${deleted.id}`);
    expect(gone.status).toBe(200);
    expect(gone.body.organization.status).toBe("deleted");
    expect(gone.body.users).toEqual({ total: 1, active: 1, inactive: 0, locked: 0, importedPassword: 0 });
  });

  it("is 404 for an unknown organization, 422 for a malformed id or a parameter, 403 without admin:stats:read", async () => {
    const prisma = porta.services.db.prisma;
    const tenant = await createTenant(porta);
    const before = await dataFingerprint(porta);
    expectError(await api.get("/stats/organizations/0190a000-0000-7000-8000-000000000000"), 404, "not_found");
    expect422(await api.get("/stats/organizations/not-a-uuid"), "path.orgId");
    expect422(await api.get(`/stats/organizations/${"x".repeat(5000)}`), "path.orgId");
    expect422(await api.get(`/stats/organizations/${tenant.org.id}?window=30d`), "query.window");
    expect(await dataFingerprint(porta)).toEqual(before);

    const link = await prisma.rolePermission.findFirstOrThrow({ where: { role: { name: "service-admin" }, permission: { name: "admin:stats:read" } } });
    await prisma.rolePermission.delete({ where: { roleId_permissionId: { roleId: link.roleId, permissionId: link.permissionId } } });
    try {
      expectError(await api.get(`/stats/organizations/${tenant.org.id}`), 403, "forbidden");
    } finally {
      await prisma.rolePermission.create({ data: link });
    }
    expect((await api.get(`/stats/organizations/${tenant.org.id}`)).status).toBe(200);
    expectError(await adminApi(porta, undefined).get(`/stats/organizations/${tenant.org.id}`), 401, "unauthorized");
  });
});
