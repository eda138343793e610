import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { resources } from "~/i18n/config";
import type { UserBlock, UserDetail } from "~/schemas/user";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { csrfOf } from "../support/browser";
import { startTestPorta, type TestPorta } from "../support/porta";
import { consoleSignIn, pageWithCsrf, type ConsoleVisit } from "../console/helpers";
import {
  auditEntries,
  createTenant,
  createUserInState,
  freshTotpCode,
  mainOf,
  openLoginPage,
  openRecovery,
  PASSWORD,
  RetryingBrowser,
  signInWithPassword,
  submitCode,
  toCallback,
  type Step,
  type Tenant,
  type TestUser,
} from "./helpers";

/**
 * NIST SP 800-63B §5.2.2: wrong codes are counted per user and factor across rate-limit windows,
 * not only within one. Past `auth.twoFactor.maxConsecutiveFailures` (100) the factor is refused
 * whatever the code, the person is told so in their language, the operator reads it in the audit
 * log and on the user's page, and it ends with a sign-in by recovery code or passkey, or when an
 * administrator clears it. A right code of the factor starts its count again. To reach 100 the
 * count is seeded in the database; the counting itself is shown with real wrong codes.
 */
vi.setConfig({ testTimeout: 180_000, hookTimeout: 240_000 });
let porta: TestPorta;
let tenant: Tenant;
let api: ReturnType<typeof adminApi>;
let operator: ConsoleVisit;
beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  operator = await consoleSignIn(porta);
  tenant = await createTenant(porta, "optional");
});
afterAll(async () => {
  await porta?.stop();
});

const prisma = () => porta.services.db.prisma;
const en = resources.en.login.twoFactor;
const de = resources.de.login.twoFactor;
const escape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#x27;");

async function failures(userId: string, factor: "totp" | "email") {
  return (await prisma().secondFactorFailureCount.findUnique({ where: { userId_factor: { userId, factor } } }))?.failures ?? 0;
}
const seed = (userId: string, factor: "totp" | "email", count: number) =>
  prisma().secondFactorFailureCount.upsert({ where: { userId_factor: { userId, factor } }, create: { userId, factor, failures: count }, update: { failures: count } });

/** The rate-limit windows of the second factor end, as 15 minutes passing would end them. */
const endWindows = () => porta.services.db.executeSql(`UPDATE "RateLimiterFlexible" SET "expire" = now() - interval '1 second' WHERE "key" LIKE 'rl:twoFactor%'`);

/** The password, then the page of the authenticator app's step (read as is: a refused factor's page has no code form). */
async function totpStep(user: TestUser, browser = new RetryingBrowser()) {
  const page = await openLoginPage(tenant, browser);
  const posted = await page.browser.post(page.interactionUrl, { csrf: csrfOf(page.html), email: user.email, password: PASSWORD });
  expect(posted.status).toBe(302);
  const { res, url } = await page.browser.follow(posted, page.interactionUrl);
  expect(res.status).toBe(200);
  expect(new URL(url).pathname).toBe(`/interaction/${page.uid}/two-factor`);
  const step: Step & { html: string } = { kind: "totp", url, html: await res.text(), recoveryLink: true };
  return { page, step };
}

async function blocksOf(userId: string): Promise<UserBlock[]> {
  return (await api.get<UserDetail>(`/users/${userId}`)).body.blocks;
}

describe("authenticator app codes", () => {
  it("counts wrong codes across windows; a right code starts the count again", async () => {
    const user = await createUserInState(porta, tenant, "totp");
    const { page, step } = await totpStep(user);
    for (let i = 0; i < 3; i++) expect((await submitCode(page.browser, step, "000000")).res.status).toBe(401);
    expect(await failures(user.id, "totp")).toBe(3);

    // A new window of the rate limit does not forget them.
    await endWindows();
    for (let i = 0; i < 3; i++) expect((await submitCode(page.browser, step, "000001")).res.status).toBe(401);
    expect(await failures(user.id, "totp")).toBe(6);
    expect(await blocksOf(user.id)).toEqual([]);

    const right = await submitCode(page.browser, step, await freshTotpCode(porta, user.id, user.totpSecret!));
    expect(right.res.status).toBe(302);
    await toCallback(page.browser, right.step!);
    expect(await failures(user.id, "totp")).toBe(0);
  });

  it("past the limit the factor is refused even with the right code, the person is told, the operator sees and clears it", async () => {
    const user = await createUserInState(porta, tenant, "totp");
    await seed(user.id, "totp", 97);
    const { page, step } = await totpStep(user);
    // The 98th, 99th and 100th wrong codes are still checked (and wrong).
    for (let i = 0; i < 3; i++) expect((await submitCode(page.browser, step, "000000")).res.status).toBe(401);
    const locked = await auditEntries(porta, { eventType: "auth.2fa.factor_locked", targetId: user.id });
    expect(locked).toHaveLength(1);
    expect(locked[0]!.data).toMatchObject({ userId: user.id, method: "totp", failures: 100 });

    // The 101st attempt: refused without looking at the code.
    const refused = await submitCode(page.browser, step, await freshTotpCode(porta, user.id, user.totpSecret!));
    expect(refused.res.status).toBe(403);
    const html = mainOf(await refused.res.text());
    expect(html).toContain(escape(en.factorLockedTotp));
    expect(html).not.toContain('name="code"');
    expect(html).toContain(`href="/interaction/${page.uid}/two-factor?method=recovery"`);
    expect((await auditEntries(porta, { eventType: "auth.2fa.failed", targetId: user.id })).at(-1)!.data).toMatchObject({ method: "totp", reason: "factor_locked" });
    expect(await auditEntries(porta, { eventType: "auth.login.success", targetId: user.id })).toEqual([]);

    // A new sign-in says so before any code is typed, in the person's language.
    const german = await totpStep(user, new RetryingBrowser({ "accept-language": "de" }));
    expect(mainOf(german.step.html)).toContain(escape(de.factorLockedTotp));

    // The operator: the Admin API's user object and the console's user page.
    const [block, ...others] = await blocksOf(user.id);
    expect(others).toEqual([]);
    expect(block).toEqual({ id: "factor:totp", kind: "factor", limit: null, setting: "auth.twoFactor.maxConsecutiveFailures", address: null, factor: "totp", until: null });
    const url = `${porta.baseUrl}/console/organizations/${tenant.org.id}/users/${user.id}`;
    const { html: consoleHtml, csrf } = await pageWithCsrf(operator.browser, url);
    expect(consoleHtml).toContain("Authenticator app codes refused after too many wrong codes in a row");
    expect(consoleHtml).toContain("until cleared, or until the person signs in with a recovery code or a passkey");

    const cleared = await operator.browser.post(url, { csrf, intent: "clearBlock", block: "factor:totp" });
    expect(cleared.status).toBe(302);
    expect(await blocksOf(user.id)).toEqual([]);
    const entry = (await auditEntries(porta, { eventType: "user.block_cleared", targetId: user.id }))[0]!;
    expect(entry).toMatchObject({ actorType: "admin", data: { change: { block } } });

    // The app's codes work again.
    const again = await totpStep(user);
    const signedIn = await submitCode(again.page.browser, again.step, await freshTotpCode(porta, user.id, user.totpSecret!));
    expect(signedIn.res.status).toBe(302);
  });

  it("a sign-in with a recovery code lifts the refusal", async () => {
    const user = await createUserInState(porta, tenant, "totp");
    await seed(user.id, "totp", 100);
    const { page, step } = await totpStep(user);
    expect(mainOf(step.html)).toContain(escape(en.factorLockedTotp));
    const form = await openRecovery(page.browser, step);
    if (form.kind !== "recovery") throw new Error(`expected the recovery form, got ${form.kind}`);
    const used = await submitCode(page.browser, form, user.recoveryCodes![0]!);
    expect(used.res.status).toBe(302);
    await toCallback(page.browser, used.step!);
    expect(await failures(user.id, "totp")).toBe(0);
    expect(await blocksOf(user.id)).toEqual([]);

    const next = await totpStep(user);
    expect(mainOf(next.step.html)).not.toContain(escape(en.factorLockedTotp));
    expect((await submitCode(next.page.browser, next.step, await freshTotpCode(porta, user.id, user.totpSecret!))).res.status).toBe(302);
  });

  it("the limit is a configuration entry of at most 100 (NIST SP 800-63B)", async () => {
    expect((await api.put("/config/auth.twoFactor.maxConsecutiveFailures", { value: 101 })).status).toBe(422);
    expect((await api.put("/config/auth.twoFactor.maxConsecutiveFailures", { value: 3 })).status).toBe(200);
    try {
      const user = await createUserInState(porta, tenant, "totp");
      const { page, step } = await totpStep(user);
      for (let i = 0; i < 3; i++) expect((await submitCode(page.browser, step, "000000")).res.status).toBe(401);
      expect((await submitCode(page.browser, step, "000000")).res.status).toBe(403);
      expect(await blocksOf(user.id)).toEqual([expect.objectContaining({ id: "factor:totp" })]);
    } finally {
      expect((await api.put("/config/auth.twoFactor.maxConsecutiveFailures", { value: 100 })).status).toBe(200);
    }
  });
});

describe("emailed codes", () => {
  it("are counted per factor too: the authenticator app's count is not the email's", async () => {
    const user = await createUserInState(porta, tenant, "email");
    await seed(user.id, "email", 99);
    await seed(user.id, "totp", 40);
    const page = await openLoginPage(tenant);
    const step = await signInWithPassword(page, user.email);
    expect(step.kind).toBe("email");
    if (step.kind !== "email") throw new Error("no email step");
    expect((await submitCode(page.browser, step, "000000")).res.status).toBe(401);
    expect((await auditEntries(porta, { eventType: "auth.2fa.factor_locked", targetId: user.id }))[0]!.data).toMatchObject({ method: "otp", failures: 100 });
    const refused = await submitCode(page.browser, step, "000000");
    expect(refused.res.status).toBe(403);
    expect(mainOf(await refused.res.text())).toContain(escape(en.factorLockedEmail));
    expect(await failures(user.id, "totp")).toBe(40);
    expect((await blocksOf(user.id)).map((b) => b.id)).toEqual(["factor:email"]);

    // An administrator's reset of the second factors forgets the counts with the factors.
    expect((await api.post(`/users/${user.id}/two-factor/reset`, {})).status).toBe(200);
    expect(await failures(user.id, "totp")).toBe(0);
    expect((await api.delete(`/users/${user.id}/two-factor`)).status).toBe(200);
    expect(await failures(user.id, "email")).toBe(0);
  });
});
