import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Language } from "~/i18n/config";
import { csrfOf } from "../support/browser";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { auditDuring, createTenant, htmlLang, mainOf, message, openLoginPage, PASSWORD, sqlDuring, touchesUserTable, type Tenant } from "./helpers";

/**
 * CSRF on the interaction forms (both methods enabled, so the method gate lets the request
 * through): a wrong, missing or foreign token is refused with 403 and a localized message,
 * before any user lookup, password verification or audit of a login attempt.
 */
let porta: TestPorta;
let tenant: Tenant;
let email: string;
/** The valid token of an interaction other than the one posted to. */
let foreign: string;
beforeAll(async () => {
  porta = await startTestPorta();
  tenant = await createTenant(porta, { defaultLoginMethods: ["password", "magic_link"] });
  email = (await createUser(porta.services.db.prisma, tenant.org.id, { password: PASSWORD })).email;
  foreign = csrfOf((await openLoginPage(tenant)).html);
});
afterAll(async () => {
  await porta?.stop();
});
afterEach(() => {
  vi.restoreAllMocks();
});

const TOKENS: Array<{ name: string; csrf: () => string | undefined }> = [
  { name: "a wrong token", csrf: () => "not-the-csrf-token-of-this-interaction" },
  { name: "no token", csrf: () => undefined },
  { name: "the token of another interaction", csrf: () => foreign },
];

const ENDPOINTS = [
  { name: "POST /interaction/:uid (password)", path: "" },
  { name: "POST /interaction/:uid/magic-link", path: "/magic-link" },
  { name: "POST /interaction/:uid/forgot-password", path: "/forgot-password" },
];

describe.each([{ language: "en" as Language }, { language: "de" as Language }])("CSRF refusals ($language)", ({ language }) => {
  describe.each(ENDPOINTS)("$name", ({ path }) => {
    it.each(TOKENS)("refuses $name with 403 before any user lookup", async ({ csrf }) => {
      const page = await openLoginPage(tenant, { headers: { "accept-language": language } });
      expect(csrf()).not.toBe(csrfOf(page.html));
      const verify = vi.spyOn(porta.services.csrf, "verify");
      const argon = vi.spyOn(porta.services.passwords, "verify");
      const form: Record<string, string> = { email, password: PASSWORD, token: "some-reset-token" };
      const token = csrf();
      if (token !== undefined) form.csrf = token;

      const { result, entries } = await auditDuring(porta, { organizationId: tenant.org.id }, () =>
        sqlDuring(porta, () => page.browser.post(`${page.interactionUrl}${path}`, form)),
      );
      const res = result.result;
      const html = await res.text();

      expect(res.status).toBe(403);
      expect(htmlLang(html)).toBe(language);
      expect(mainOf(html)).toContain(message(language, (m) => m.csrf.invalid));
      expect(verify).toHaveBeenCalledTimes(1);
      expect(verify.mock.results[0]!.value).toBe(false);
      expect(result.sql.filter(touchesUserTable)).toEqual([]);
      expect(argon).not.toHaveBeenCalled();
      expect(entries).toEqual([]);
    });
  });
});

describe("the right token", () => {
  it("is accepted and the attempt goes on to the user lookup", async () => {
    const page = await openLoginPage(tenant);
    const verify = vi.spyOn(porta.services.csrf, "verify");
    const { result: res, sql } = await sqlDuring(porta, () => page.browser.post(page.interactionUrl, { csrf: csrfOf(page.html), email, password: PASSWORD }));
    expect(res.status).toBe(302);
    expect(verify.mock.results.map((r) => r.value)).toEqual([true]);
    expect(sql.some(touchesUserTable)).toBe(true);
  });
});

describe("browser form posts", () => {
  it("the pages ask for a referrer policy under which a browser's same-origin POST carries its Origin, and such a POST is accepted", async () => {
    const page = await openLoginPage(tenant);
    // Under "no-referrer" Chromium sends `Origin: null` with a form POST, which Remix refuses as
    // a cross-site action (e2e/login.spec.ts found that no one could sign in).
    expect(page.res.headers.get("referrer-policy")).toBe("same-origin");
    const res = await page.browser.post(page.interactionUrl, { csrf: csrfOf(page.html), email, password: PASSWORD }, { origin: new URL(page.interactionUrl).origin });
    expect(res.status).toBe(302);
  });

  it("a POST from another origin is refused", async () => {
    const page = await openLoginPage(tenant);
    const res = await page.browser.post(page.interactionUrl, { csrf: csrfOf(page.html), email, password: PASSWORD }, { origin: "https://evil.example" });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).not.toBe(302);
  });
});
