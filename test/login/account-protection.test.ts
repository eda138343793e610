import argon2 from "argon2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_ARGON2_PARAMS } from "~/.server/auth/password-hash";
import { argon2Parameters } from "~/schemas/argon2-hash";
import { DEFAULT_LOCKOUT } from "~/.server/sign-in/methods/password";
import { DEFAULT_LIMITS } from "~/.server/rate-limit/limiters";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { auditDuring, createTenant, htmlLang, mainOf, message, openLoginPage, PASSWORD, pluralOf, submitPassword, type Tenant } from "./helpers";

/**
 * Rate limits per email and organization, account lockout with recovery after the cooldown,
 * and rehashing of passwords stored with weaker Argon2id parameters.
 */
let porta: TestPorta;
let tenant: Tenant;
let otherTenant: Tenant;
beforeAll(async () => {
  porta = await startTestPorta();
  tenant = await createTenant(porta);
  otherTenant = await createTenant(porta);
});
afterAll(async () => {
  await porta?.stop();
});

const WRONG = "a wrong password 9";
/** A dozen Argon2id verifications and several authorizations: generous on a busy two-core machine. */
const MANY_ATTEMPTS = { timeout: 120_000 };
const prisma = () => porta.services.db.prisma;

describe("rate limit per email and organization", () => {
  it(`answers 429 with Retry-After and a localized message after ${DEFAULT_LIMITS.passwordLogin.points} attempts; other emails and organizations are unaffected`, MANY_ATTEMPTS, async () => {
    const email = `limited-${Date.now()}@example.com`;
    const user = await createUser(prisma(), tenant.org.id, { email, password: PASSWORD });
    const bystander = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    const sameEmailElsewhere = await createUser(prisma(), otherTenant.org.id, { email, password: PASSWORD });
    const page = await openLoginPage(tenant);

    for (let i = 0; i < DEFAULT_LIMITS.passwordLogin.points; i++) {
      const res = await submitPassword(page, email, WRONG);
      expect(res.status).toBe(401);
      expect(res.headers.get("retry-after")).toBeNull();
      await res.arrayBuffer();
    }

    const { result: limited, entries } = await auditDuring(porta, { eventType: "auth.login.failure", organizationId: tenant.org.id }, () =>
      submitPassword(page, email, PASSWORD),
    );
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(DEFAULT_LIMITS.passwordLogin.durationSeconds);
    const minutes = Math.ceil(retryAfter / 60);
    const html = await limited.text();
    expect(mainOf(html)).toContain(message("en", (m) => m.signIn[`rateLimited_${pluralOf("en", minutes)}`], { count: minutes }));
    expect(mainOf(html)).not.toContain(message("en", (m) => m.signIn.failed));
    expect(entries.map((e) => e.data)).toEqual([{ method: "password", email, reason: "rate_limited", clientId: tenant.client.id }]);

    // The counter ignores letter case, and the message follows the browser's language.
    const german = await submitPassword(page, email.toUpperCase(), PASSWORD, { headers: { "accept-language": "de" } });
    expect(german.status).toBe(429);
    expect(german.headers.get("retry-after")).toMatch(/^\d+$/);
    const germanHtml = await german.text();
    expect(htmlLang(germanHtml)).toBe("de");
    const germanMinutes = Math.ceil(Number(german.headers.get("retry-after")) / 60);
    expect(mainOf(germanHtml)).toContain(message("de", (m) => m.signIn[`rateLimited_${pluralOf("de", germanMinutes)}`], { count: germanMinutes }));

    // Even the right password waits: the account itself is fine once the window has passed.
    expect((await prisma().user.findUniqueOrThrow({ where: { id: user.id } })).lastLoginAt).toBeNull();

    // Another email in the same organization signs in.
    const other = await submitPassword(await openLoginPage(tenant), bystander.email, PASSWORD);
    expect(other.status).toBe(302);
    // The same email in another organization signs in too.
    const elsewhere = await submitPassword(await openLoginPage(otherTenant), sameEmailElsewhere.email, PASSWORD);
    expect(elsewhere.status).toBe(302);
  });
});

describe("lockout", () => {
  it(`${DEFAULT_LOCKOUT.maxFailures} wrong passwords lock the account; after the cooldown the right password works again`, MANY_ATTEMPTS, async () => {
    const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    const page = await openLoginPage(tenant);
    const failedBody = async (res: Response) => mainOf(await res.text());

    let genericFailure = "";
    for (let i = 1; i <= DEFAULT_LOCKOUT.maxFailures; i++) {
      const before = Date.now();
      const res = await submitPassword(page, user.email, WRONG);
      expect(res.status).toBe(401);
      genericFailure = await failedBody(res);
      const row = await prisma().user.findUniqueOrThrow({ where: { id: user.id } });
      expect(row.failedLoginCount).toBe(i);
      if (i < DEFAULT_LOCKOUT.maxFailures) {
        expect(row.lockedUntil).toBeNull();
      } else {
        // Locked for the cooldown, counted from this attempt.
        expect(row.lockedUntil!.getTime()).toBeGreaterThanOrEqual(before + DEFAULT_LOCKOUT.cooldownSeconds * 1000 - 1000);
        expect(row.lockedUntil!.getTime()).toBeLessThanOrEqual(Date.now() + DEFAULT_LOCKOUT.cooldownSeconds * 1000 + 1000);
      }
    }
    expect(genericFailure).toContain(message("en", (m) => m.signIn.failed));

    // Locked: the right password fails with the same generic answer, and the reason is private.
    const lockedUntil = (await prisma().user.findUniqueOrThrow({ where: { id: user.id } })).lockedUntil;
    const { result: whileLocked, entries } = await auditDuring(porta, { eventType: "auth.login.failure", organizationId: tenant.org.id }, () =>
      submitPassword(page, user.email, PASSWORD),
    );
    expect(whileLocked.status).toBe(401);
    expect(await failedBody(whileLocked)).toBe(genericFailure);
    expect(entries.map((e) => (e.data as { reason: string }).reason)).toEqual(["locked"]);
    // Attempts during the lock do not extend it.
    expect((await prisma().user.findUniqueOrThrow({ where: { id: user.id } })).lockedUntil).toEqual(lockedUntil);

    // The cooldown passes (simulated in the database).
    await prisma().user.update({ where: { id: user.id }, data: { lockedUntil: new Date(Date.now() - 1000) } });
    const after = await submitPassword(page, user.email, PASSWORD);
    expect(after.status).toBe(302);
    const row = await prisma().user.findUniqueOrThrow({ where: { id: user.id } });
    expect(row.failedLoginCount).toBe(0);
    expect(row.lockedUntil).toBeNull();
    expect(row.lastLoginAt).not.toBeNull();
  });

  it("a wrong password after an expired lock starts a fresh count instead of locking again at once", async () => {
    const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    await prisma().user.update({
      where: { id: user.id },
      data: { failedLoginCount: DEFAULT_LOCKOUT.maxFailures, lockedUntil: new Date(Date.now() - 1000) },
    });
    const res = await submitPassword(await openLoginPage(tenant), user.email, WRONG);
    expect(res.status).toBe(401);
    const row = await prisma().user.findUniqueOrThrow({ where: { id: user.id } });
    expect(row.failedLoginCount).toBe(1);
    expect(row.lockedUntil).toBeNull();
  });
});

describe("rehash on login", () => {
  it("a hash made with weaker parameters is replaced by one with the current parameters", async () => {
    const weak = await argon2.hash(PASSWORD, { type: argon2.argon2id, memoryCost: 4096, timeCost: 1, parallelism: 1 });
    expect(argon2Parameters(weak)).toEqual({ type: "argon2id", memoryCost: 4096, timeCost: 1, parallelism: 1 });
    const user = await createUser(prisma(), tenant.org.id, { password: null });
    await prisma().user.update({ where: { id: user.id }, data: { passwordHash: weak } });

    const res = await submitPassword(await openLoginPage(tenant), user.email, PASSWORD);
    expect(res.status).toBe(302);

    const stored = (await prisma().user.findUniqueOrThrow({ where: { id: user.id } })).passwordHash!;
    expect(stored).not.toBe(weak);
    const { memoryCost, timeCost, parallelism } = DEFAULT_ARGON2_PARAMS;
    expect(stored).toMatch(/^\$argon2id\$v=19\$/);
    expect(argon2Parameters(stored)).toEqual({ type: "argon2id", memoryCost, timeCost, parallelism });
    expect(argon2.needsRehash(stored, { memoryCost, timeCost, parallelism })).toBe(false);
    expect(await argon2.verify(stored, PASSWORD)).toBe(true);

    // And the new hash signs in (without another rehash).
    const again = await submitPassword(await openLoginPage(tenant), user.email, PASSWORD);
    expect(again.status).toBe(302);
    expect((await prisma().user.findUniqueOrThrow({ where: { id: user.id } })).passwordHash).toBe(stored);
  });

  it("a wrong password does not rehash", async () => {
    const weak = await argon2.hash(PASSWORD, { type: argon2.argon2id, memoryCost: 4096, timeCost: 1, parallelism: 1 });
    const user = await createUser(prisma(), tenant.org.id, { password: null });
    await prisma().user.update({ where: { id: user.id }, data: { passwordHash: weak } });
    const res = await submitPassword(await openLoginPage(tenant), user.email, WRONG);
    expect(res.status).toBe(401);
    expect((await prisma().user.findUniqueOrThrow({ where: { id: user.id } })).passwordHash).toBe(weak);
  });
});
