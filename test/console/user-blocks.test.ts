import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { UserBlock, UserDetail } from "~/schemas/user";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { TestBrowser } from "../support/browser";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, mainOf, openLoginPage, PASSWORD, submitPassword, type Tenant } from "../login/helpers";
import { enrollTotp, freshTotpCode, readStep } from "../two-factor/helpers";
import { consoleSignIn, pageWithCsrf, type ConsoleVisit } from "./helpers";

/**
 * Every block that refuses a person is visible where an operator looks (the user's console page,
 * the Admin API's user object), with when it ends, and can be cleared there, audited: the
 * account's lockout, the rate-limit windows of the account and of an address the person used, a
 * device cookie's lock and the per-user second-factor window. (A second factor refused after too
 * many wrong codes in a row: test/two-factor/factor-lockout.test.ts.)
 */
let porta: TestPorta;
let tenant: Tenant;
let api: ReturnType<typeof adminApi>;
let operator: ConsoleVisit;
beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  operator = await consoleSignIn(porta);
  tenant = await createTenant(porta);
});
afterAll(async () => {
  await porta?.stop();
});

const WRONG = "a wrong password 9";
const SLOW = { timeout: 180_000 };
const prisma = () => porta.services.db.prisma;
let addressCount = 0;
const newAddress = () => `192.0.2.${++addressCount}`;
const from = (ip: string) => ({ "x-forwarded-for": ip });

async function setRule(key: string, value: unknown) {
  const res = await api.put(`/config/${key}`, { value });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

async function attempt(email: string, password: string, ip: string, browser = new TestBrowser(from(ip))) {
  const page = await openLoginPage(tenant, { browser, extra: { prompt: "login" } });
  const res = await submitPassword(page, email, password, { headers: from(ip) });
  return { status: res.status, html: res.status === 302 ? "" : mainOf(await res.text()) };
}

async function blocksOf(userId: string): Promise<UserBlock[]> {
  const res = await api.get<UserDetail>(`/users/${userId}`);
  expect(res.status).toBe(200);
  return res.body.blocks;
}

const userPage = (userId: string) => `${porta.baseUrl}/console/organizations/${tenant.org.id}/users/${userId}`;

/** The console page's list of blocks, as the operator reads it. */
async function consoleBlocks(userId: string) {
  const { html } = await pageWithCsrf(operator.browser, userPage(userId));
  const list = /<ul class="plain user-blocks">(.*?)<\/ul>/s.exec(html)?.[1] ?? "";
  return { html, list, ids: [...list.matchAll(/data-block="([^"]+)"/g)].map((m) => m[1]!) };
}

async function clearedEntries(userId: string) {
  return prisma().auditEntry.findMany({ where: { eventType: "user.block_cleared", targetId: userId }, orderBy: { createdAt: "asc" } });
}

describe("the rate-limit window of the account", () => {
  it("a person refused with 'Too many attempts' after 7 wrong passwords sees the block in the API and on the console, which clears it", SLOW, async () => {
    // As measured: the per-account window (here 7) ran out while the account lockout did not apply.
    await setRule("rateLimits.passwordLogin.perAccount", { points: 7, windowMinutes: 15 });
    await setRule("auth.lockout.maxFailures", 20);
    try {
      const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
      for (let i = 0; i < 7; i++) expect((await attempt(user.email, WRONG, newAddress())).status).toBe(401);
      const refused = await attempt(user.email, PASSWORD, newAddress());
      expect(refused.status).toBe(429);
      expect(refused.html).toContain("Too many attempts");

      const detail = await api.get<UserDetail>(`/users/${user.id}`);
      expect(detail.body.lockedUntil).toBeNull();
      const [block, ...others] = detail.body.blocks;
      expect(others).toEqual([]);
      expect(block).toMatchObject({ id: "limit:passwordLogin", kind: "account_limit", limit: "passwordLogin", setting: "rateLimits.passwordLogin.perAccount", address: null, factor: null });
      const ends = Date.parse(block!.until!);
      expect(ends).toBeGreaterThan(Date.now() + 14 * 60_000);
      expect(ends).toBeLessThanOrEqual(Date.now() + 15 * 60_000);
      // The organization-scoped read says the same.
      const scoped = await api.get<UserDetail>(`/organizations/${tenant.org.id}/users/${user.id}`);
      expect(scoped.body.blocks).toEqual(detail.body.blocks);

      const shown = await consoleBlocks(user.id);
      expect(shown.ids).toEqual(["limit:passwordLogin"]);
      expect(shown.list).toContain("Too many wrong passwords for this account");
      expect(shown.list).toMatch(/until [A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2}\s[AP]M UTC/);
      expect(shown.list).toContain("rateLimits.passwordLogin.perAccount");
      expect(shown.html).not.toContain(">not locked<");

      const { csrf } = await pageWithCsrf(operator.browser, userPage(user.id));
      const cleared = await operator.browser.post(userPage(user.id), { csrf, intent: "clearBlock", block: "limit:passwordLogin" });
      expect(cleared.status).toBe(302);
      expect(cleared.headers.get("location")).toBe(`/console/organizations/${tenant.org.id}/users/${user.id}?done=clearBlock`);
      const after = await (await operator.browser.get(`${porta.baseUrl}${cleared.headers.get("location")!}`)).text();
      expect(after).toContain("The block was cleared.");
      expect(after).toContain("not locked");
      expect(await blocksOf(user.id)).toEqual([]);
      const [entry] = await clearedEntries(user.id);
      expect(entry).toMatchObject({ actorType: "admin", targetType: "user", organizationId: tenant.org.id });
      expect((entry!.data as { change: { block: UserBlock } }).change.block).toEqual(block);

      // The person signs in again.
      expect((await attempt(user.email, PASSWORD, newAddress())).status).toBe(302);
    } finally {
      await setRule("rateLimits.passwordLogin.perAccount", { points: 10, windowMinutes: 15 });
      await setRule("auth.lockout.maxFailures", 5);
    }
  });
});

describe("the rate-limit window of an address the person used", () => {
  it("is shown with its address and cleared through the Admin API", SLOW, async () => {
    await setRule("rateLimits.passwordLogin.perIp", { points: 3, windowMinutes: 15 });
    try {
      const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
      const office = newAddress();
      for (let i = 0; i < 3; i++) expect((await attempt(`someone-${i}-${Date.now()}@example.com`, WRONG, office)).status).toBe(401);
      expect((await attempt(user.email, PASSWORD, office)).status).toBe(429);

      const blocks = await blocksOf(user.id);
      expect(blocks).toEqual([
        expect.objectContaining({ id: `limit:passwordLogin:${office}`, kind: "address_limit", limit: "passwordLogin", address: office, setting: "rateLimits.passwordLogin.perIp" }),
      ]);
      const shown = await consoleBlocks(user.id);
      expect(shown.list).toContain(`Too many wrong passwords from ${office}`);

      const cleared = await api.delete<UserDetail>(`/users/${user.id}/blocks/${encodeURIComponent(`limit:passwordLogin:${office}`)}`);
      expect(cleared.status).toBe(200);
      expect(cleared.body.blocks).toEqual([]);
      expect(await clearedEntries(user.id)).toHaveLength(1);
      expect((await attempt(user.email, PASSWORD, office)).status).toBe(302);

      // Cleared once: a second clear finds no block.
      const again = await api.delete<{ error: { code: string } }>(`/users/${user.id}/blocks/${encodeURIComponent(`limit:passwordLogin:${office}`)}`);
      expect(again.status).toBe(404);
      expect(again.body.error.code).toBe("not_found");
    } finally {
      await setRule("rateLimits.passwordLogin.perIp", { points: 100, windowMinutes: 15 });
    }
  });
});

describe("the account lockout and a device cookie's lock", () => {
  it("the lockout is a block until lockedUntil, cleared like Unlock", SLOW, async () => {
    const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    for (let i = 0; i < 5; i++) expect((await attempt(user.email, WRONG, newAddress())).status).toBe(401);
    const row = await prisma().user.findUniqueOrThrow({ where: { id: user.id } });
    expect(row.lockedUntil).not.toBeNull();
    expect(await blocksOf(user.id)).toEqual([
      { id: "lockout", kind: "lockout", limit: null, setting: "auth.lockout.maxFailures", address: null, factor: null, until: row.lockedUntil!.toISOString() },
    ]);
    expect((await consoleBlocks(user.id)).html).toContain(">Unlock</button>");

    const cleared = await api.delete<UserDetail>(`/organizations/${tenant.org.id}/users/${user.id}/blocks/lockout`);
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ lockedUntil: null, blocks: [] });
    expect(await clearedEntries(user.id)).toHaveLength(1);
    expect((await attempt(user.email, PASSWORD, newAddress())).status).toBe(302);
  });

  it("a browser locked by its own wrong passwords is a block of its own, cleared through the console", SLOW, async () => {
    const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    const ip = newAddress();
    const laptop = new TestBrowser(from(ip));
    expect((await attempt(user.email, PASSWORD, ip, laptop)).status).toBe(302);
    for (let i = 0; i < 5; i++) expect((await attempt(user.email, WRONG, ip, laptop)).status).toBe(401);
    expect((await attempt(user.email, PASSWORD, ip, laptop)).status).toBe(401);

    const [block, ...others] = await blocksOf(user.id);
    expect(others).toEqual([]);
    expect(block).toMatchObject({ kind: "device", setting: "auth.lockout.maxFailures" });
    expect(block!.id).toMatch(/^device:[0-9a-f]{16}$/);
    expect(Date.parse(block!.until!)).toBeGreaterThan(Date.now() + 14 * 60_000);
    const shown = await consoleBlocks(user.id);
    expect(shown.list).toContain("One browser is locked after wrong passwords from it");

    const { csrf } = await pageWithCsrf(operator.browser, userPage(user.id));
    expect((await operator.browser.post(userPage(user.id), { csrf, intent: "clearBlock", block: block!.id })).status).toBe(302);
    expect(await blocksOf(user.id)).toEqual([]);
    expect((await attempt(user.email, PASSWORD, ip, laptop)).status).toBe(302);
  });
});

describe("the second-factor window", () => {
  it("the per-user window of code checks is a block, and clearing it lets the right code in", SLOW, async () => {
    await setRule("rateLimits.twoFactor.perUser", { points: 3, windowMinutes: 15 });
    try {
      const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
      const { secret } = await enrollTotp(porta, user.id);
      const ip = newAddress();
      const browser = new TestBrowser(from(ip));
      const page = await openLoginPage(tenant, { browser, extra: { prompt: "login" } });
      const posted = await submitPassword(page, user.email, PASSWORD, { headers: from(ip) });
      expect(posted.status).toBe(302);
      const { res, url } = await browser.follow(posted, page.interactionUrl);
      const step = readStep(url, res.status, await res.text());
      expect(step.kind).toBe("totp");
      const csrf = /name="csrf" value="([^"]+)"/.exec(mainOf("html" in step ? step.html : ""))![1]!;
      const submit = (code: string) => browser.post(url, { csrf, intent: "verify", method: "totp", code }, from(ip));
      for (let i = 0; i < 3; i++) expect((await submit("000000")).status).toBe(401);
      expect((await submit(await freshTotpCode(porta, user.id, secret))).status).toBe(429);

      expect(await blocksOf(user.id)).toEqual([expect.objectContaining({ id: "limit:twoFactor", kind: "account_limit", limit: "twoFactor", setting: "rateLimits.twoFactor.perUser" })]);
      expect((await consoleBlocks(user.id)).list).toContain("Too many wrong second-factor codes");
      expect((await api.delete(`/users/${user.id}/blocks/limit:twoFactor`)).status).toBe(200);
      expect((await submit(await freshTotpCode(porta, user.id, secret))).status).toBe(302);
    } finally {
      await setRule("rateLimits.twoFactor.perUser", { points: 10, windowMinutes: 15 });
    }
  });
});

describe("bad input", () => {
  it("a malformed block id is 422 naming the field; a block that does not hold the user is 404", async () => {
    const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    const malformed = await api.delete<{ error: { code: string; details: Array<{ field: string }> } }>(`/users/${user.id}/blocks/${encodeURIComponent("rl:anything goes")}`);
    expect(malformed.status).toBe(422);
    expect(malformed.body.error.details.map((d) => d.field)).toEqual(["path.blockId"]);
    for (const id of ["lockout", "limit:passwordLogin", "limit:twoFactor:203.0.113.200", "device:0123456789abcdef", "factor:totp"]) {
      const res = await api.delete<{ error: { code: string } }>(`/users/${user.id}/blocks/${encodeURIComponent(id)}`);
      expect(res.status, id).toBe(404);
    }
    expect(await clearedEntries(user.id)).toHaveLength(0);
  });
});
