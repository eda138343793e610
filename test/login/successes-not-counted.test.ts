import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { TestBrowser } from "../support/browser";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, mainOf, openLoginPage, PASSWORD, submitPassword, type Tenant } from "./helpers";

/**
 * The password limits count failures only. Browsers without the account's device cookie (a
 * relying party's test suite that opens a fresh browser per test, a kiosk, everyone behind one
 * office NAT) sign in with the right password as often as they like; wrong passwords are
 * refused at exactly the counts they always were, whatever successes come between them.
 */
let porta: TestPorta;
let tenant: Tenant;
let api: ReturnType<typeof adminApi>;
beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  tenant = await createTenant(porta);
});
afterAll(async () => {
  await porta?.stop();
});

const WRONG = "a wrong password 9";
const SLOW = { timeout: 180_000 };
const prisma = () => porta.services.db.prisma;
let addressCount = 0;
const newAddress = () => `198.51.100.${++addressCount}`;
const from = (ip: string) => ({ "x-forwarded-for": ip });

async function setRule(key: string, value: unknown) {
  const res = await api.put(`/config/${key}`, { value });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** A password attempt in a fresh browser (no device cookie) on a fresh login page, from `ip`. */
async function attempt(email: string, password: string, ip: string) {
  const browser = new TestBrowser(from(ip));
  const page = await openLoginPage(tenant, { browser, extra: { prompt: "login" } });
  const res = await submitPassword(page, email, password, { headers: from(ip) });
  const html = res.status === 302 ? "" : mainOf(await res.text());
  return { status: res.status, html };
}

const rateLimited = (html: string) => html.includes("Too many attempts");

describe("per account", () => {
  it("the right password from fresh browsers is never refused; wrong ones are refused after exactly the limit", SLOW, async () => {
    await setRule("rateLimits.passwordLogin.perAccount", { points: 3, windowMinutes: 15 });
    try {
      const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
      // Five sign-ins, each from a browser that never saw the account: more than the limit of three.
      for (let i = 0; i < 5; i++) expect((await attempt(user.email, PASSWORD, newAddress())).status, `sign-in ${i + 1}`).toBe(302);

      // Guessing is held exactly as before: three wrong passwords, then 429, even for the right one.
      for (let i = 0; i < 3; i++) expect((await attempt(user.email, WRONG, newAddress())).status, `guess ${i + 1}`).toBe(401);
      const refused = await attempt(user.email, WRONG, newAddress());
      expect(refused.status).toBe(429);
      expect(rateLimited(refused.html)).toBe(true);
      expect((await attempt(user.email, PASSWORD, newAddress())).status).toBe(429);
    } finally {
      await setRule("rateLimits.passwordLogin.perAccount", { points: 10, windowMinutes: 15 });
    }
  });

  it("successes between wrong passwords do not give the guesser more room", SLOW, async () => {
    await setRule("rateLimits.passwordLogin.perAccount", { points: 3, windowMinutes: 15 });
    try {
      const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
      const statuses: number[] = [];
      for (const password of [WRONG, PASSWORD, WRONG, PASSWORD, PASSWORD, WRONG, WRONG, PASSWORD]) statuses.push((await attempt(user.email, password, newAddress())).status);
      // The third wrong password used the last point: the fourth guess and then everything is refused.
      expect(statuses).toEqual([401, 302, 401, 302, 302, 401, 429, 429]);
    } finally {
      await setRule("rateLimits.passwordLogin.perAccount", { points: 10, windowMinutes: 15 });
    }
  });
});

describe("per client address", () => {
  it("everyone behind one address signs in; wrong passwords from it are refused after exactly the limit", SLOW, async () => {
    await setRule("rateLimits.passwordLogin.perIp", { points: 4, windowMinutes: 15 });
    try {
      const office = newAddress();
      const colleagues = await Promise.all(Array.from({ length: 6 }, () => createUser(prisma(), tenant.org.id, { password: PASSWORD })));
      for (const colleague of colleagues) expect((await attempt(colleague.email, PASSWORD, office)).status, colleague.email).toBe(302);
      // And again: twelve sign-ins from one address with a limit of four.
      for (const colleague of colleagues) expect((await attempt(colleague.email, PASSWORD, office)).status, colleague.email).toBe(302);

      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await attempt(`sprayed-${i}-${Date.now()}@example.com`, WRONG, office)).status);
      expect(statuses).toEqual([401, 401, 401, 401, 429, 429]);
      const refused = await attempt(colleagues[0]!.email, PASSWORD, office);
      expect(refused.status).toBe(429);
      expect(rateLimited(refused.html)).toBe(true);
    } finally {
      await setRule("rateLimits.passwordLogin.perIp", { points: 100, windowMinutes: 15 });
    }
  });
});
