import { randomBytes } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { DEFAULT_LIMITS } from "~/.server/rate-limit/limiters";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import {
  auditDuring,
  createTenant,
  mainOf,
  message,
  openLoginPage,
  PASSWORD,
  sqlDuring,
  submitPassword,
  withoutNonces,
  type LoginPage,
  type Tenant,
} from "./helpers";

/**
 * Password rules 3 and the "Errors" row "Login failure": every failure cause gives the same
 * public response, runs the same statements and exactly one Argon2id verification; the cause
 * is written only to the audit trail.
 */
let porta: TestPorta;
let tenant: Tenant;
beforeAll(async () => {
  porta = await startTestPorta();
  tenant = await createTenant(porta, { defaultLoginMethods: ["password"] });
});
afterAll(async () => {
  await porta?.stop();
});
afterEach(() => {
  vi.restoreAllMocks();
});

const WRONG = "a wrong password 9";
/** Many Argon2id verifications in one test: generous on a busy two-core machine. */
const MANY_ATTEMPTS = { timeout: 120_000 };
const REASONS = ["unknown_user", "wrong_password", "inactive", "locked", "no_password"] as const;
const prisma = () => porta.services.db.prisma;
const uniqueEmail = () => `person-${randomBytes(4).toString("hex")}@example.com`;

/** Statements of the persistence shape: what a failure reads and writes. */
const shapeOf = (sql: string[]) => sql.filter((s) => s.includes('"User"') || s.includes('"AuditEntry"'));

describe("every failure cause gives the same public response", () => {
  it("unknown email, wrong password, inactive, locked and password-less accounts look alike", MANY_ATTEMPTS, async () => {
    // One email and one interaction for every cause: the form echoes the email back, so only
    // the account behind it changes between the attempts.
    const email = uniqueEmail();
    const page = await openLoginPage(tenant);
    const attempts: Array<{ reason: string; status: number; body: string; contentType: string | null; sql: string[] }> = [];

    // The entry names the account the attempt targeted (decision 039): the console shows it on
    // that user's page; the public response below stays the same whether there is one or not.
    const attempt = async (reason: (typeof REASONS)[number], password: string, targetId: string | null = null) => {
      const { result, entries } = await auditDuring(porta, { eventType: "auth.login.failure", organizationId: tenant.org.id }, () =>
        sqlDuring(porta, () => submitPassword(page, email, password)),
      );
      const res = result.result;
      const body = await res.text();
      attempts.push({ reason, status: res.status, body, contentType: res.headers.get("content-type"), sql: shapeOf(result.sql) });
      // The private reason is in the audit trail, and only there.
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ organizationId: tenant.org.id, data: { email, reason, clientId: tenant.client.id } });
      expect({ targetType: entries[0]!.targetType, targetId: entries[0]!.targetId }).toEqual(targetId ? { targetType: "user", targetId } : { targetType: null, targetId: null });
      expect(entries[0]!.ip).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
      expect(JSON.stringify(entries[0]!.data)).not.toContain(password);
      for (const r of REASONS) expect(body).not.toContain(r);
    };

    await attempt("unknown_user", PASSWORD);

    const user = await createUser(prisma(), tenant.org.id, { email, password: PASSWORD });
    await attempt("wrong_password", WRONG, user.id);

    // The right password does not get an inactive, locked or password-less account in.
    await prisma().user.update({ where: { id: user.id }, data: { status: "inactive", failedLoginCount: 0 } });
    await attempt("inactive", PASSWORD, user.id);

    await prisma().user.update({ where: { id: user.id }, data: { status: "active", failedLoginCount: 0, lockedUntil: new Date(Date.now() + 10 * 60_000) } });
    await attempt("locked", PASSWORD, user.id);

    await prisma().user.update({ where: { id: user.id }, data: { lockedUntil: null, failedLoginCount: 0, passwordHash: null } });
    await attempt("no_password", PASSWORD, user.id);

    const [first, ...others] = attempts;
    expect(first!.status).toBe(401);
    expect(mainOf(first!.body)).toContain(message("en", (m) => m.signIn.failed));
    // Byte for byte the same page once the CSP nonce is set aside: it is random per response by
    // design (see withoutNonces) and the only thing that may differ.
    expect(withoutNonces(first!.body)).not.toBe(first!.body);
    for (const other of others) {
      expect({ reason: other.reason, status: other.status }).toEqual({ reason: other.reason, status: first!.status });
      expect(other.contentType).toBe(first!.contentType);
      expect(withoutNonces(other.body), `public response for ${other.reason}`).toBe(withoutNonces(first!.body));
      // The same persistence operations (statement texts, in order) on every failure path.
      expect(other.sql, `statements for ${other.reason}`).toEqual(first!.sql);
    }
    expect(first!.sql.length).toBeGreaterThanOrEqual(3);
    expect(first!.sql.some((s) => /^UPDATE "(public"\.")?User"/.test(s.trim()))).toBe(true);
    expect(first!.sql.some((s) => /^INSERT INTO "(public"\.")?AuditEntry"/.test(s.trim()))).toBe(true);
  });
});

describe("exactly one Argon2id verification per admitted attempt", () => {
  async function verificationsFor(page: LoginPage, email: string, password: string) {
    const verify = vi.spyOn(porta.services.passwords, "verify");
    try {
      const res = await submitPassword(page, email, password);
      await res.arrayBuffer();
      return { status: res.status, calls: verify.mock.calls.map(([hash]) => hash) };
    } finally {
      verify.mockRestore();
    }
  }

  it("existing user, right password: one verification, against the account's hash", async () => {
    const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    const hash = (await prisma().user.findUniqueOrThrow({ where: { id: user.id } })).passwordHash;
    const result = await verificationsFor(await openLoginPage(tenant), user.email, PASSWORD);
    expect(result.status).toBe(302);
    expect(result.calls).toEqual([hash]);
  });

  it("existing user, wrong password: one verification, against the account's hash", async () => {
    const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    const result = await verificationsFor(await openLoginPage(tenant), user.email, WRONG);
    expect(result.status).toBe(401);
    expect(result.calls).toEqual([user.passwordHash]);
  });

  it("unknown email, inactive, locked and password-less accounts: one verification each, against the dummy hash", async () => {
    const dummy = await porta.services.passwords.dummyHash();
    const inactive = await createUser(prisma(), tenant.org.id, { password: PASSWORD, status: "inactive" });
    const locked = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    await prisma().user.update({ where: { id: locked.id }, data: { lockedUntil: new Date(Date.now() + 10 * 60_000) } });
    const passwordless = await createUser(prisma(), tenant.org.id, { password: null });
    const page = await openLoginPage(tenant);
    for (const email of [uniqueEmail(), inactive.email, locked.email, passwordless.email]) {
      const result = await verificationsFor(page, email, PASSWORD);
      expect({ email, status: result.status }).toEqual({ email, status: 401 });
      expect(result.calls).toEqual([dummy]);
    }
  });

  it("a rate-limited attempt runs no verification", MANY_ATTEMPTS, async () => {
    const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    const page = await openLoginPage(tenant);
    for (let i = 0; i < DEFAULT_LIMITS.passwordLogin.points; i++) {
      const result = await verificationsFor(page, user.email, WRONG);
      expect(result.status).toBe(401);
      expect(result.calls).toHaveLength(1);
    }
    const limited = await verificationsFor(page, user.email, PASSWORD);
    expect(limited.status).toBe(429);
    expect(limited.calls).toEqual([]);
  });

  it("a password beyond the 1,024-character maximum is not admitted: no verification, the same generic answer", async () => {
    const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    const page = await openLoginPage(tenant);
    const verify = vi.spyOn(porta.services.passwords, "verify");
    const res = await submitPassword(page, user.email, "x".repeat(1025));
    expect(res.status).toBe(401);
    expect(mainOf(await res.text())).toContain(message("en", (m) => m.signIn.failed));
    expect(verify).not.toHaveBeenCalled();
  });
});
