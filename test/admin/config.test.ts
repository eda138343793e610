import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createUser } from "../support/factories";
import { startTestPorta, TEST_ADMIN, type TestPorta } from "../support/porta";
import { linkIn, startSmtpPeer, type SmtpPeer } from "../support/smtp";
import { openLoginPage, requestMagicLinkOn, createTenant as createMailTenant, type Tenant as MailTenant } from "../email/helpers";
import { createTenant, dataFingerprint, expect422, expectError, OVERSIZE, PASSWORD, signIn, unique, type Tenant } from "./helpers";

/**
 * System configuration in the Admin API: every entry with its default, one entry, and writes
 * checked against the key's type and bounds that take effect in the real flows at once,
 * without a restart.
 */
interface Entry {
  key: string;
  value: unknown;
  default: unknown;
  description: string;
  updatedAt: string | null;
  updatedBy: string | null;
}

const KEYS = [
  "auth.passwordMinLength",
  "auth.magicLinkTtlMinutes",
  "auth.emailOtpTtlMinutes",
  "auth.passwordResetTtlMinutes",
  "auth.lockout.maxFailures",
  "auth.lockout.cooldownMinutes",
  "auth.twoFactor.maxConsecutiveFailures",
  "rateLimits.passwordLogin.perAccount",
  "rateLimits.passwordLogin.perIp",
  "rateLimits.magicLink.perAccount",
  "rateLimits.magicLink.perIp",
  "rateLimits.passwordReset.perAccount",
  "rateLimits.passwordReset.perIp",
  "rateLimits.twoFactor.perUser",
  "rateLimits.twoFactor.perIp",
  "rateLimits.emailOtpResend.perUser",
  "rateLimits.passkeyLogin.perIp",
  "rateLimits.federatedLogin.perIp",
  "rateLimits.federatedLogin.perInteraction",
  "rateLimits.deviceCodeEntry.perIp",
  "rateLimits.clientRegistration.perIp",
  "rateLimits.scim.perIp",
  "rateLimits.scim.perToken",
  "rateLimits.ssf.perIp",
  "rateLimits.ssf.perClient",
  "tokens.accessTokenTtlSeconds",
  "webhooks.disableAfterFailures",
];

let peer: SmtpPeer;
let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
let adminId: string;
let tenant: Tenant;
let mailTenant: MailTenant;

beforeAll(async () => {
  peer = await startSmtpPeer();
  porta = await startTestPorta({ env: peer.env });
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  adminId = (await porta.services.db.prisma.user.findFirstOrThrow({ where: { email: TEST_ADMIN.email } })).id;
  tenant = await createTenant(porta);
  mailTenant = await createMailTenant(porta);
});
afterAll(async () => {
  await porta?.stop();
  await peer?.close();
});

const entry = (key: string) => api.get<Entry>(`/config/${key}`);
const set = (key: string, value: unknown) => api.put<Entry>(`/config/${key}`, { value });
const storedRows = () => porta.services.db.prisma.configEntry.findMany({ orderBy: { key: "asc" } });

describe("reading", () => {
  it("lists every entry with its default, and reads one", async () => {
    const res = await api.get<{ data: Entry[] }>("/config");
    expect(res.status).toBe(200);
    expect(res.body.data.map((e) => e.key)).toEqual(KEYS);
    for (const e of res.body.data) {
      expect(e.value, e.key).toEqual(e.default);
      expect(e.updatedAt).toBeNull();
      expect(e.updatedBy).toBeNull();
      expect(e.description.length).toBeGreaterThan(10);
    }
    const min = await entry("auth.passwordMinLength");
    expect(min.status).toBe(200);
    expect(min.body).toEqual({
      key: "auth.passwordMinLength",
      value: 8,
      default: 8,
      description: "Minimum length of new passwords (NIST SP 800-63B: at least 8).",
      updatedAt: null,
      updatedBy: null,
    });
    expect(res.body.data.find((e) => e.key === "auth.magicLinkTtlMinutes")).toMatchObject({ value: 15, default: 15 });
  });

  it("is 404 for an unknown key, and 422 for an oversize one", async () => {
    expectError(await entry("auth.unknownSetting"), 404, "not_found");
    expectError(await set("auth.unknownSetting", 10), 404, "not_found");
    expect422(await entry(OVERSIZE), "path.key");
    expect422(await set(OVERSIZE, 10), "path.key");
    expect(await storedRows()).toEqual([]);
  });
});

describe("writing", () => {
  it("a new password minimum length applies to the next password set, without a restart", async () => {
    const prisma = porta.services.db.prisma;
    const user = await createUser(prisma, tenant.org.id, { email: `${unique("cfg")}@example.com`, password: PASSWORD });
    const passwordPath = `/organizations/${tenant.org.id}/users/${user.id}/password`;
    const twelve = "kq7-Vmx2-Rt9";
    expect((await api.put(passwordPath, { password: twelve })).status).toBe(200);

    const res = await set("auth.passwordMinLength", 16);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...res.body, key: "auth.passwordMinLength", value: 16, default: 8, updatedBy: adminId });
    expect(Math.abs(Date.parse(res.body.updatedAt!) - Date.now())).toBeLessThan(60_000);
    expect((await entry("auth.passwordMinLength")).body).toEqual(res.body);

    const refused = await api.put(passwordPath, { password: twelve });
    expect422(refused, "password");
    expect(JSON.stringify(refused.body)).toContain("at least 16 characters");
    expect((await api.put(passwordPath, { password: "kq7-Vmx2-Rt9-Lp4w" })).status).toBe(200);

    const audit = await prisma.auditEntry.findFirstOrThrow({ where: { eventType: "config.updated", targetId: "auth.passwordMinLength" } });
    expect(audit).toMatchObject({ actorType: "admin", actorId: adminId, targetType: "config", data: { change: { value: 16 } } });

    expect((await set("auth.passwordMinLength", 8)).body.value).toBe(8);
    expect((await api.put(passwordPath, { password: twelve })).status).toBe(200);
  });

  it("a new magic-link lifetime is the one the next link and its mail carry", async () => {
    const prisma = porta.services.db.prisma;
    expect((await set("auth.magicLinkTtlMinutes", 3)).status).toBe(200);
    const user = await createUser(prisma, mailTenant.org.id, { email: `${unique("ml")}@example.com`, password: null });
    const page = await openLoginPage(mailTenant);
    const requestedAt = Date.now();
    expect((await requestMagicLinkOn(page, user.email)).status).toBe(200);
    const mail = await peer.waitForMail(user.email);
    expect(linkIn(mail, "/magic-link/verify")).toContain("/magic-link/verify");
    expect(mail.text).toContain("This link expires in 3 minutes.");
    const row = await prisma.magicLinkToken.findFirstOrThrow({ where: { userId: user.id } });
    expect(row.expiresAt.getTime() - requestedAt).toBeGreaterThan(2 * 60_000);
    expect(row.expiresAt.getTime() - requestedAt).toBeLessThanOrEqual(3 * 60_000 + 30_000);
    expect((await set("auth.magicLinkTtlMinutes", 15)).status).toBe(200);
  });

  it("a new access token lifetime applies to the next token issued, without a restart", async () => {
    const user = await createUser(porta.services.db.prisma, tenant.org.id, { email: `${unique("ttl")}@example.com`, password: PASSWORD });
    const lifetime = async () => {
      const claims = decodeJwt((await signIn(tenant, { email: user.email, password: PASSWORD })).accessToken);
      return claims.exp! - claims.iat!;
    };
    const before = await lifetime();
    expect(before).not.toBe(120);
    expect((await set("tokens.accessTokenTtlSeconds", 120)).status).toBe(200);
    expect(await lifetime()).toBe(120);
    expect((await set("tokens.accessTokenTtlSeconds", before)).body.value).toBe(before);
    expect(await lifetime()).toBe(before);
  });

  it("answers 422 for a value of the wrong type or out of bounds, and stores nothing", async () => {
    const before = await dataFingerprint(porta);
    const rows = await storedRows();
    const current = (await entry("auth.lockout.maxFailures")).body;
    const cases: Array<{ label: string; key: string; body: unknown; field: string }> = [
      { label: "a string", key: "auth.passwordMinLength", body: { value: "16" }, field: "value" },
      { label: "below the minimum", key: "auth.passwordMinLength", body: { value: 4 }, field: "value" },
      { label: "above the maximum", key: "auth.magicLinkTtlMinutes", body: { value: 100_000 }, field: "value" },
      { label: "a fraction", key: "auth.lockout.maxFailures", body: { value: 2.5 }, field: "value" },
      { label: "null", key: "auth.lockout.maxFailures", body: { value: null }, field: "value" },
      { label: "an object", key: "tokens.accessTokenTtlSeconds", body: { value: { seconds: 60 } }, field: "value" },
      { label: "no value", key: "auth.lockout.maxFailures", body: {}, field: "value" },
      { label: "an unknown field", key: "auth.lockout.maxFailures", body: { value: 5, note: "x" }, field: "note" },
      { label: "an oversize string", key: "auth.lockout.maxFailures", body: { value: OVERSIZE }, field: "value" },
      { label: "not an object", key: "auth.lockout.maxFailures", body: [5], field: "body" },
    ];
    for (const c of cases) expect422(await api.put(`/config/${c.key}`, c.body), c.field, c.label);
    expect422(await api.put("/config/auth.lockout.maxFailures?force=1", { value: 5 }), "query.force");
    expect422(await api.get("/config/auth.lockout.maxFailures?default=1"), "query.default");
    expect(await dataFingerprint(porta)).toEqual(before);
    expect(await storedRows()).toEqual(rows);
    expect((await entry("auth.lockout.maxFailures")).body).toEqual(current);
  });

  it("needs admin:config:read to read and admin:config:write to write", async () => {
    const prisma = porta.services.db.prisma;
    const withoutPermission = async (permission: string, check: () => Promise<void>) => {
      const link = await prisma.rolePermission.findFirstOrThrow({ where: { role: { name: "service-admin" }, permission: { name: permission } } });
      await prisma.rolePermission.delete({ where: { roleId_permissionId: { roleId: link.roleId, permissionId: link.permissionId } } });
      try {
        await check();
      } finally {
        await prisma.rolePermission.create({ data: link });
      }
    };
    await withoutPermission("admin:config:read", async () => {
      expectError(await api.get("/config"), 403, "forbidden");
      expectError(await entry("auth.passwordMinLength"), 403, "forbidden");
    });
    const rows = await storedRows();
    await withoutPermission("admin:config:write", async () => {
      expectError(await set("auth.lockout.maxFailures", 3), 403, "forbidden");
      expect((await entry("auth.lockout.maxFailures")).status).toBe(200);
    });
    expect(await storedRows()).toEqual(rows);
    expect422(await api.get("/config?key=auth.passwordMinLength"), "query.key");
    expectError(await adminApi(porta, undefined).get("/config"), 401, "unauthorized");
    expectError(await adminApi(porta, undefined).put("/config/auth.lockout.maxFailures", { value: 3 }), 401, "unauthorized");
  });
});
