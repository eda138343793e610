import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Language } from "~/i18n/config";
import { csrfOf, TestBrowser } from "../support/browser";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import {
  auditDuring,
  createTenant,
  htmlLang,
  mainOf,
  message,
  openLoginPage,
  PASSWORD,
  sqlDuring,
  submitPassword,
  touchesUserTable,
  type LoginPage,
  type Tenant,
} from "./helpers";

/**
 * Login-method enforcement (spec "Login interaction endpoints" and "Errors"): on the five
 * endpoints, and on the password form itself, a method that is not effective for the client is
 * refused with 403, a localized "not available" message and a `security.login_method_disabled`
 * audit entry, before any user lookup and before the CSRF check. Every interaction route passes
 * the same gate, so an expired interaction is refused the same way on each of them too.
 */
let porta: TestPorta;
let passwordOnly: Tenant;
let magicLinkOnly: Tenant;
/** Both methods for the organization, magic_link only by the client's override. */
let overridden: Tenant;
const existing: Record<string, string> = {};

beforeAll(async () => {
  porta = await startTestPorta();
  passwordOnly = await createTenant(porta, { defaultLoginMethods: ["password"] });
  magicLinkOnly = await createTenant(porta, { defaultLoginMethods: ["magic_link"] });
  overridden = await createTenant(porta, { defaultLoginMethods: ["password", "magic_link"], clientLoginMethods: ["magic_link"] });
  // Real accounts behind the emails sent: a lookup, had it happened, would have found them.
  for (const tenant of [passwordOnly, magicLinkOnly, overridden]) {
    existing[tenant.org.id] = (await createUser(porta.services.db.prisma, tenant.org.id, { password: PASSWORD })).email;
  }
});
afterAll(async () => {
  await porta?.stop();
});
afterEach(() => {
  vi.restoreAllMocks();
});

const WRONG_CSRF = "not-the-csrf-token-of-this-interaction";

interface Case {
  name: string;
  tenant: () => Tenant;
  method: "GET" | "POST";
  path: (page: LoginPage) => string;
  attempted: "password" | "magic_link";
  /** A real reset link of the tenant, for the reset page (which opens without an interaction). */
  resetLink?: true;
}

/** A usable reset link of the tenant's user, issued for its client's sign-in, as the job mints one. */
async function mintResetLink(tenant: Tenant): Promise<string> {
  const prisma = porta.services.db.prisma;
  const user = await prisma.user.findFirstOrThrow({ where: { organizationId: tenant.org.id, email: existing[tenant.org.id]! } });
  const token = porta.services.tokens.derive("password-reset", `method-enforcement-${Math.random()}`);
  await prisma.passwordResetToken.create({
    data: {
      jobId: `method-enforcement-${token.slice(0, 12)}`,
      tokenHash: porta.services.tokens.hash(token),
      organizationId: tenant.org.id,
      userId: user.id,
      clientId: tenant.client.id,
      expiresAt: new Date(Date.now() + 3_600_000),
    },
  });
  return token;
}

const CASES: Case[] = [
  { name: "GET /interaction/:uid?method=magic_link", tenant: () => passwordOnly, method: "GET", path: (p) => `${p.interactionUrl}?method=magic_link`, attempted: "magic_link" },
  { name: "POST /interaction/:uid/magic-link", tenant: () => passwordOnly, method: "POST", path: (p) => `${p.interactionUrl}/magic-link`, attempted: "magic_link" },
  { name: "GET /interaction/:uid/forgot-password", tenant: () => magicLinkOnly, method: "GET", path: (p) => `${p.interactionUrl}/forgot-password`, attempted: "password" },
  { name: "POST /interaction/:uid/forgot-password", tenant: () => magicLinkOnly, method: "POST", path: (p) => `${p.interactionUrl}/forgot-password`, attempted: "password" },
  // The reset link opens without an interaction: the link's client decides.
  { name: "POST /{slug}/reset-password", tenant: () => magicLinkOnly, method: "POST", path: () => `${porta.baseUrl}/${magicLinkOnly.org.slug}/reset-password`, attempted: "password", resetLink: true },
  { name: "GET /{slug}/reset-password", tenant: () => magicLinkOnly, method: "GET", path: () => `${porta.baseUrl}/${magicLinkOnly.org.slug}/reset-password`, attempted: "password", resetLink: true },
  { name: "GET /{slug}/reset-password, password off by client override", tenant: () => overridden, method: "GET", path: () => `${porta.baseUrl}/${overridden.org.slug}/reset-password`, attempted: "password", resetLink: true },
  // The address of reset links mailed before they named their organization (it forwards a real link).
  { name: "POST /interaction/:uid/reset-password", tenant: () => magicLinkOnly, method: "POST", path: (p) => `${p.interactionUrl}/reset-password`, attempted: "password", resetLink: true },
  { name: "GET /interaction/:uid/reset-password", tenant: () => magicLinkOnly, method: "GET", path: (p) => `${p.interactionUrl}/reset-password`, attempted: "password", resetLink: true },
  { name: "POST /interaction/:uid/reset-password, password off by client override", tenant: () => overridden, method: "POST", path: (p) => `${p.interactionUrl}/reset-password`, attempted: "password", resetLink: true },
  { name: "POST /interaction/:uid (password form)", tenant: () => magicLinkOnly, method: "POST", path: (p) => p.interactionUrl, attempted: "password" },
  // The same refusals when the client's override, not the organization, disables the method.
  { name: "GET /interaction/:uid/forgot-password, password off by client override", tenant: () => overridden, method: "GET", path: (p) => `${p.interactionUrl}/forgot-password`, attempted: "password" },
  { name: "POST /interaction/:uid (password form), password off by client override", tenant: () => overridden, method: "POST", path: (p) => p.interactionUrl, attempted: "password" },
];

const LANGUAGES: Array<{ language: Language; acceptLanguage: string }> = [
  { language: "en", acceptLanguage: "en" },
  { language: "de", acceptLanguage: "de" },
];

describe.each(LANGUAGES)("a disabled method is refused before user lookup and CSRF ($language)", ({ language, acceptLanguage }) => {
  it.each(CASES)("$name", async (c) => {
    const tenant = c.tenant();
    const page = await openLoginPage(tenant, { headers: { "accept-language": acceptLanguage } });
    expect(page.res.status).toBe(200);
    const token = c.resetLink ? await mintResetLink(tenant) : "some-reset-token";
    const url = c.resetLink && c.method === "GET" ? `${c.path(page)}?token=${token}` : c.path(page);
    const csrfVerify = vi.spyOn(porta.services.csrf, "verify");
    const where = { eventType: "security.login_method_disabled", organizationId: tenant.org.id };

    const { result: { result: res, sql }, entries } = await auditDuring(porta, where, () =>
      sqlDuring(porta, () =>
        c.method === "GET"
          ? page.browser.get(url)
          : page.browser.post(url, {
              csrf: WRONG_CSRF,
              email: existing[tenant.org.id]!,
              password: PASSWORD,
              token,
            }),
      ),
    );
    const html = await res.text();

    expect(res.status).toBe(403);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(htmlLang(html)).toBe(language);
    const expected = message(language, (m) => m.methodUnavailable[c.attempted]);
    expect(mainOf(html)).toContain(expected);
    if (language === "de") expect(expected).not.toBe(message("en", (m) => m.methodUnavailable[c.attempted]));

    // Refused before the CSRF check (a wrong token was sent) and before any user lookup.
    expect(csrfVerify).not.toHaveBeenCalled();
    expect(sql.filter(touchesUserTable)).toEqual([]);

    // Exactly one audit entry for the one refused request.
    expect(entries).toHaveLength(1);
    const entry = entries[0]!;
    expect(entry.organizationId).toBe(tenant.org.id);
    expect(entry.data).toMatchObject({ attemptedMethod: c.attempted, clientId: tenant.client.id, organizationId: tenant.org.id });
    expect(JSON.stringify(entry.data)).not.toContain(PASSWORD);
  });
});

describe("the observers used above do see a lookup and a CSRF check when the method is enabled", () => {
  it("a password POST with the right CSRF token looks the user up and checks the token", async () => {
    const page = await openLoginPage(passwordOnly);
    const csrfVerify = vi.spyOn(porta.services.csrf, "verify");
    const { result: res, sql } = await sqlDuring(porta, () => submitPassword(page, existing[passwordOnly.org.id]!, "a wrong password 9"));
    expect(res.status).toBe(401);
    expect(csrfVerify).toHaveBeenCalledTimes(1);
    expect(csrfVerify.mock.results[0]!.value).toBe(true);
    expect(sql.some(touchesUserTable)).toBe(true);
  });

  it("an enabled method with a wrong CSRF token is refused by the CSRF check, without an enforcement audit", async () => {
    const page = await openLoginPage(magicLinkOnly);
    const csrfVerify = vi.spyOn(porta.services.csrf, "verify");
    const { result: res, entries } = await auditDuring(porta, { eventType: "security.login_method_disabled", organizationId: magicLinkOnly.org.id }, () =>
      page.browser.post(`${page.interactionUrl}/magic-link`, { csrf: WRONG_CSRF, email: existing[magicLinkOnly.org.id]! }),
    );
    expect(res.status).toBe(403);
    expect(mainOf(await res.text())).toContain(message("en", (m) => m.csrf.invalid));
    expect(csrfVerify).toHaveBeenCalledTimes(1);
    expect(entries).toEqual([]);
  });

  it("the enabled method's pages open normally", async () => {
    const page = await openLoginPage(passwordOnly);
    const forgot = await page.browser.get(`${page.interactionUrl}/forgot-password`);
    expect(forgot.status).toBe(200);
    expect(mainOf(await forgot.text())).toContain('name="email"');
    const onlyMagic = await openLoginPage(magicLinkOnly);
    const filtered = await onlyMagic.browser.get(`${onlyMagic.interactionUrl}?method=magic_link`);
    expect(filtered.status).toBe(200);
  });
});

/** Every interaction route that serves an interaction, by method and path below /interaction/:uid. */
const INTERACTION_ROUTES: Array<{ method: "GET" | "POST"; path: string }> = [
  { method: "GET", path: "" },
  { method: "POST", path: "" },
  { method: "GET", path: "/forgot-password" },
  { method: "POST", path: "/forgot-password" },
  { method: "POST", path: "/magic-link" },
  { method: "GET", path: "/two-factor" },
  { method: "POST", path: "/two-factor" },
  { method: "GET", path: "/two-factor/setup" },
  { method: "POST", path: "/two-factor/setup" },
];

const EXPIRED = [
  // The uid of a real interaction, from a browser without its cookie (another browser, or after it expired).
  { name: "another browser's interaction", target: (page: LoginPage) => ({ browser: new TestBrowser(), base: page.interactionUrl }) },
  { name: "an unknown interaction", target: (page: LoginPage) => ({ browser: page.browser, base: page.interactionUrl.replace(page.uid, "no-such-interaction") }) },
];

describe.each(EXPIRED)("every interaction route refuses $name the same way", ({ target }) => {
  it.each(INTERACTION_ROUTES)("$method /interaction/:uid$path", async (route) => {
    const tenant = passwordOnly;
    const page = await openLoginPage(tenant);
    const { browser, base } = target(page);
    const url = `${base}${route.path}`;
    const csrfVerify = vi.spyOn(porta.services.csrf, "verify");
    const form = { csrf: csrfOf(page.html), email: existing[tenant.org.id]!, password: PASSWORD, token: "some-reset-token", intent: "verify", method: "totp", code: "123456" };

    const { result: { result: res, sql }, entries } = await auditDuring(porta, { organizationId: tenant.org.id }, () =>
      sqlDuring(porta, () => (route.method === "GET" ? browser.get(url) : browser.post(url, form))),
    );
    const html = await res.text();

    expect(res.status).toBe(400);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(mainOf(html)).toContain(message("en", (m) => m.expired.title));
    expect(mainOf(html)).toContain(message("en", (m) => m.expired.body));
    // Nothing else happened: no CSRF check, no user lookup, nothing audited.
    expect(csrfVerify).not.toHaveBeenCalled();
    expect(sql.filter(touchesUserTable)).toEqual([]);
    expect(entries).toEqual([]);
  });

  it("POST /interaction/:uid/consent sends the browser back to the login page, which says it expired", async () => {
    const page = await openLoginPage(passwordOnly);
    const { browser, base } = target(page);
    const res = await browser.post(`${base}/consent`, { csrf: csrfOf(page.html), decision: "allow" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(new URL(base).pathname);
    const login = await browser.get(new URL(res.headers.get("location")!, base).href);
    expect(login.status).toBe(400);
    expect(mainOf(await login.text())).toContain(message("en", (m) => m.expired.title));
  });
});
