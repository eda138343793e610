import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deviceCookieName } from "~/.server/sign-in/device-cookie";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { TestBrowser } from "../support/browser";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { auditDuring, createTenant, mainOf, message, openLoginPage, PASSWORD, pluralOf, submitPassword, type Tenant } from "./helpers";

/**
 * Brute force without locking people out: password attempts are limited per client address as
 * well as per account, the limits are configuration entries that apply at once, and a browser
 * that signed in before (it holds the account's device cookie, OWASP) keeps signing in while
 * strangers' failures hold the account locked for everyone else.
 */
let porta: TestPorta;
let tenant: Tenant;
let otherTenant: Tenant;
let api: ReturnType<typeof adminApi>;
beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  tenant = await createTenant(porta);
  otherTenant = await createTenant(porta);
});
afterAll(async () => {
  await porta?.stop();
});

const WRONG = "a wrong password 9";
const SLOW = { timeout: 180_000 };
const prisma = () => porta.services.db.prisma;
let addressCount = 0;
/** A client address of its own for each use (Porta trusts X-Forwarded-For from loopback by default). */
const newAddress = () => `203.0.113.${++addressCount}`;
const from = (ip: string) => ({ "x-forwarded-for": ip });

async function setRule(key: string, value: unknown) {
  const res = await api.put(`/config/${key}`, { value });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** A password attempt on a fresh login page of the tenant, from `ip`, in `browser`. */
async function attempt(t: Tenant, email: string, password: string, options: { ip: string; browser?: TestBrowser }) {
  const browser = options.browser ?? new TestBrowser(from(options.ip));
  const page = await openLoginPage(t, { browser, extra: { prompt: "login" } });
  return submitPassword(page, email, password, { headers: from(options.ip) });
}

async function expectGenericRateLimit(res: Response) {
  expect(res.status).toBe(429);
  const retryAfter = Number(res.headers.get("retry-after"));
  expect(retryAfter).toBeGreaterThan(0);
  const html = mainOf(await res.text());
  const minutes = Math.ceil(retryAfter / 60);
  expect(html).toContain(message("en", (m) => m.signIn[`rateLimited_${pluralOf("en", minutes)}`], { count: minutes }));
  expect(html).not.toContain(message("en", (m) => m.signIn.failed));
}

async function expectGenericFailure(res: Response) {
  expect(res.status).toBe(401);
  expect(mainOf(await res.text())).toContain(message("en", (m) => m.signIn.failed));
}

describe("per client address", () => {
  it("refuses the addresses a client tries after the per-address limit, with the generic answer, for known and unknown emails alike", SLOW, async () => {
    await setRule("rateLimits.passwordLogin.perIp", { points: 20, windowMinutes: 15 });
    try {
      const ip = newAddress();
      const known = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
      const page = await openLoginPage(tenant, { headers: from(ip) });
      const statuses: number[] = [];
      const emails: string[] = [];
      for (let i = 0; i < 30; i++) {
        // The 26th is a real account with its right password: the address is refused before any check.
        const email = i === 25 ? known.email : `sprayed-${i}-${Date.now()}@example.com`;
        emails.push(email);
        const res = await submitPassword(page, email, i === 25 ? PASSWORD : WRONG, { headers: from(ip) });
        statuses.push(res.status);
        if (i < 20) await expectGenericFailure(res);
        else await expectGenericRateLimit(res);
      }
      expect(statuses).toEqual([...Array<number>(20).fill(401), ...Array<number>(10).fill(429)]);
      // Audited as the per-account limit is: a failed sign-in, reason rate_limited.
      const failures = await prisma().auditEntry.findMany({ where: { organizationId: tenant.org.id, eventType: "auth.login.failure" }, orderBy: { id: "asc" } });
      const reasons = failures.filter((e) => emails.includes((e.data as { email: string }).email)).map((e) => (e.data as { reason: string }).reason);
      expect(reasons.filter((r) => r === "rate_limited")).toHaveLength(10);
      expect(failures.at(-1)!.ip).toBe(ip);

      // Another address is not affected, and the limit counts per address, not per organization.
      const elsewhere = await attempt(otherTenant, `someone-${Date.now()}@example.com`, WRONG, { ip: newAddress() });
      await expectGenericFailure(elsewhere);
      const sameAddressOtherOrg = await attempt(otherTenant, `someone-${Date.now()}@example.com`, WRONG, { ip });
      await expectGenericRateLimit(sameAddressOtherOrg);
    } finally {
      await setRule("rateLimits.passwordLogin.perIp", { points: 100, windowMinutes: 15 });
    }
  });

  it("counts the forwarded client address behind a trusted proxy, and ignores X-Forwarded-For without TRUST_PROXY", SLOW, async () => {
    const direct = await startTestPorta({ env: { TRUST_PROXY: "none" } });
    try {
      const rule = { points: 3, windowMinutes: 15 };
      await setRule("rateLimits.passwordLogin.perIp", rule);
      await direct.services.settings.set("rateLimits.passwordLogin.perIp", rule, "test");
      const directTenant = await createTenant(direct);

      // Trusted proxy (loopback, the default): each forwarded address has its own count.
      const client = newAddress();
      for (let i = 0; i < 3; i++) await expectGenericFailure(await attempt(tenant, `proxied-${i}-${Date.now()}@example.com`, WRONG, { ip: client }));
      await expectGenericFailure(await attempt(tenant, `proxied-x-${Date.now()}@example.com`, WRONG, { ip: newAddress() }));
      await expectGenericRateLimit(await attempt(tenant, `proxied-y-${Date.now()}@example.com`, WRONG, { ip: client }));

      // No trusted proxy: whatever X-Forwarded-For says, every attempt comes from 127.0.0.1.
      for (let i = 0; i < 3; i++) await expectGenericFailure(await attempt(directTenant, `direct-${i}-${Date.now()}@example.com`, WRONG, { ip: newAddress() }));
      await expectGenericRateLimit(await attempt(directTenant, `direct-x-${Date.now()}@example.com`, WRONG, { ip: newAddress() }));
      const refused = await direct.services.db.prisma.auditEntry.findFirstOrThrow({ where: { eventType: "auth.login.failure" }, orderBy: { id: "desc" } });
      expect(refused).toMatchObject({ ip: "127.0.0.1", data: { reason: "rate_limited" } });
    } finally {
      await setRule("rateLimits.passwordLogin.perIp", { points: 100, windowMinutes: 15 });
      await direct.stop();
    }
  });

  it("the limits are configuration entries: a change through the Admin API applies to the next attempt, without a restart", SLOW, async () => {
    const ip = newAddress();
    const email = `config-${Date.now()}@example.com`;
    await setRule("rateLimits.passwordLogin.perAccount", { points: 2, windowMinutes: 15 });
    try {
      for (let i = 0; i < 2; i++) await expectGenericFailure(await attempt(tenant, email, WRONG, { ip }));
      await expectGenericRateLimit(await attempt(tenant, email, WRONG, { ip }));
      // Raised: the attempts made so far (the refused one too) still count, the next one is admitted.
      await setRule("rateLimits.passwordLogin.perAccount", { points: 4, windowMinutes: 15 });
      await expectGenericFailure(await attempt(tenant, email, WRONG, { ip }));
      await expectGenericRateLimit(await attempt(tenant, email, WRONG, { ip }));
    } finally {
      await setRule("rateLimits.passwordLogin.perAccount", { points: 10, windowMinutes: 15 });
    }

    // A bad rule is refused with the field's problem, and nothing changes.
    const bad = await api.put<{ error: { details: Array<{ field: string }> } }>("/config/rateLimits.passwordLogin.perIp", { value: { points: 0, windowMinutes: 15 } });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details[0]!.field).toBe("value");
    const entry = await api.get<{ value: unknown; default: unknown }>("/config/rateLimits.passwordLogin.perIp");
    expect(entry.body).toMatchObject({ value: { points: 100, windowMinutes: 15 }, default: { points: 100, windowMinutes: 15 } });
  });

  it("limits magic link and password reset requests per address too, with their usual answer", SLOW, async () => {
    await setRule("rateLimits.magicLink.perIp", { points: 3, windowMinutes: 15 });
    await setRule("rateLimits.passwordReset.perIp", { points: 3, windowMinutes: 60 });
    try {
      const ip = newAddress();
      const page = await openLoginPage(tenant, { headers: from(ip) });
      const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)![1]!;
      const ask = (path: string, i: number) =>
        page.browser.post(`${page.interactionUrl}/${path}`, { csrf, email: `asked-${path}-${i}-${Date.now()}@example.com` }, from(ip));
      for (const path of ["magic-link", "forgot-password"]) {
        for (let i = 0; i < 3; i++) {
          const res = await ask(path, i);
          expect(res.status, `${path} ${i}`).toBe(200);
          expect(mainOf(await res.text())).not.toContain("Too many attempts");
        }
        const refused = await ask(path, 3);
        expect(refused.status, path).toBe(429);
        expect(mainOf(await refused.text())).toContain("Too many attempts");
      }
    } finally {
      await setRule("rateLimits.magicLink.perIp", { points: 30, windowMinutes: 15 });
      await setRule("rateLimits.passwordReset.perIp", { points: 30, windowMinutes: 60 });
    }
  });
});

describe("device cookies", () => {
  /** Signs in with the right password in `browser` (which then holds the account's device cookie). */
  async function signInOnce(t: Tenant, email: string, browser: TestBrowser) {
    const page = await openLoginPage(t, { browser, extra: { prompt: "login" } });
    const res = await submitPassword(page, email, PASSWORD, { headers: browser.headers });
    expect(res.status, mainOf(res.status === 302 ? "<main></main>" : await res.clone().text())).toBe(302);
    return res;
  }

  it("strangers' wrong passwords lock the account for them; the owner's browser that signed in before still signs in", SLOW, async () => {
    const owner = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    const ownerBrowser = new TestBrowser(from(newAddress()));
    const first = await signInOnce(tenant, owner.email, ownerBrowser);
    const setCookie = first.headers.getSetCookie().find((c) => c.startsWith(`${deviceCookieName(tenant.org.id)}=`));
    expect(setCookie).toBeDefined();
    expect(setCookie).toMatch(/; HttpOnly/);
    expect(setCookie).toMatch(/; SameSite=Lax/);
    expect(setCookie).toMatch(/; Path=\/interaction;/);
    // Nothing about the password in it.
    expect(setCookie).not.toContain(PASSWORD);

    const attacker = newAddress();
    for (let i = 0; i < 5; i++) await expectGenericFailure(await attempt(tenant, owner.email, WRONG, { ip: attacker }));
    expect((await prisma().user.findUniqueOrThrow({ where: { id: owner.id } })).lockedUntil).not.toBeNull();
    // Locked for untrusted clients: even the right password fails, from any other address.
    await expectGenericFailure(await attempt(tenant, owner.email, PASSWORD, { ip: attacker }));
    await expectGenericFailure(await attempt(tenant, owner.email, PASSWORD, { ip: newAddress() }));

    // The owner's browser holds the device cookie: it signs in, and the lock stays for the others.
    const again = await signInOnce(tenant, owner.email, ownerBrowser);
    expect(again.headers.get("location")).toBeTruthy();
    await expectGenericFailure(await attempt(tenant, owner.email, PASSWORD, { ip: attacker }));

    // Even after strangers used up the account's attempt limit, the known device is not refused.
    for (let i = 0; i < 10; i++) await (await attempt(tenant, owner.email, WRONG, { ip: attacker })).arrayBuffer();
    await expectGenericRateLimit(await attempt(tenant, owner.email, WRONG, { ip: attacker }));
    await signInOnce(tenant, owner.email, ownerBrowser);
  });

  it("a device that fails too often is locked itself, and only that device", SLOW, async () => {
    const owner = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    const laptop = new TestBrowser(from(newAddress()));
    const phone = new TestBrowser(from(newAddress()));
    await signInOnce(tenant, owner.email, laptop);
    await signInOnce(tenant, owner.email, phone);
    for (let i = 0; i < 5; i++) {
      const page = await openLoginPage(tenant, { browser: laptop, extra: { prompt: "login" } });
      await expectGenericFailure(await submitPassword(page, owner.email, WRONG, { headers: laptop.headers }));
    }
    const page = await openLoginPage(tenant, { browser: laptop, extra: { prompt: "login" } });
    const { result, entries } = await auditDuring(porta, { eventType: "auth.login.failure", organizationId: tenant.org.id }, () =>
      submitPassword(page, owner.email, PASSWORD, { headers: laptop.headers }),
    );
    await expectGenericFailure(result);
    expect(entries.map((e) => (e.data as { reason: string }).reason)).toEqual(["locked"]);
    // The device's failures did not lock the account for others, nor the other device.
    expect((await prisma().user.findUniqueOrThrow({ where: { id: owner.id } })).lockedUntil).toBeNull();
    await signInOnce(tenant, owner.email, phone);
    await signInOnce(tenant, owner.email, new TestBrowser(from(newAddress())));
  });

  it("a device cookie of another user, of another organization, or a tampered one counts as untrusted", SLOW, async () => {
    const victim = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    const other = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    const sameEmailElsewhere = await createUser(prisma(), otherTenant.org.id, { email: victim.email, password: PASSWORD });
    const victimBrowser = new TestBrowser(from(newAddress()));
    await signInOnce(tenant, victim.email, victimBrowser);
    const genuine = victimBrowser.cookie(deviceCookieName(tenant.org.id))!;
    expect(genuine).toBeTruthy();

    const otherUsers = new TestBrowser(from(newAddress()));
    await signInOnce(tenant, other.email, otherUsers);
    const elsewhere = new TestBrowser(from(newAddress()));
    await signInOnce(otherTenant, sameEmailElsewhere.email, elsewhere);

    const attacker = newAddress();
    for (let i = 0; i < 5; i++) await expectGenericFailure(await attempt(tenant, victim.email, WRONG, { ip: attacker }));

    const [user, nonce, signature] = genuine.split(".");
    const flipped = `${signature!.slice(0, -1)}${signature!.endsWith("A") ? "B" : "A"}`;
    const forged: Array<[string, string]> = [
      ["another user's cookie", otherUsers.cookie(deviceCookieName(tenant.org.id))!],
      ["another organization's cookie", elsewhere.cookie(deviceCookieName(otherTenant.org.id))!],
      ["a tampered signature", `${user}.${nonce}.${flipped}`],
      ["another nonce", `${user}.${"A".repeat(22)}.${signature}`],
      ["another user id under the same signature", `${other.id}.${nonce}.${signature}`],
    ];
    // Each forged cookie is one more untrusted attempt on the account: room for all of them.
    await setRule("rateLimits.passwordLogin.perAccount", { points: 20, windowMinutes: 15 });
    for (const [what, value] of forged) {
      const browser = new TestBrowser(from(newAddress()));
      browser.setCookie(deviceCookieName(tenant.org.id), value, "/interaction");
      await expectGenericFailure(await attempt(tenant, victim.email, PASSWORD, { ip: newAddress(), browser })).catch((error: unknown) => {
        throw new Error(`${what}: ${String(error)}`);
      });
    }
    await setRule("rateLimits.passwordLogin.perAccount", { points: 10, windowMinutes: 15 });
    // The genuine one still works.
    await signInOnce(tenant, victim.email, victimBrowser);
  });
});

describe("the counters' table", () => {
  it("keeps counters in PostgreSQL and deletes those whose window has ended", async () => {
    const email = `counted-${Date.now()}@example.com`;
    await expectGenericFailure(await attempt(tenant, email, WRONG, { ip: newAddress() }));
    const rows = await prisma().rateLimiterFlexible.findMany({ where: { key: { contains: email } } });
    expect(rows).toEqual([expect.objectContaining({ key: `rl:passwordLogin:${tenant.org.id}:${email}`, points: 1 })]);

    await prisma().rateLimiterFlexible.create({ data: { key: `rl:passwordLogin:ended-${email}`, points: 3, expire: new Date(Date.now() - 1000) } });
    expect(await porta.services.limits.sweep()).toBeGreaterThanOrEqual(1);
    expect(await prisma().rateLimiterFlexible.count({ where: { key: `rl:passwordLogin:ended-${email}` } })).toBe(0);
    expect(await prisma().rateLimiterFlexible.count({ where: { key: rows[0]!.key } })).toBe(1);
  });
});
