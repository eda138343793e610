import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Language } from "~/i18n/config";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, followToCallback, htmlLang, mainOf, message, openLoginPage, PASSWORD, submitPassword, type Tenant } from "./helpers";

/**
 * The language of the login pages (ui_locales, then Accept-Language, then the organization's
 * default, then English) and the organization's branding, reduced to safe values.
 */
let porta: TestPorta;
let englishOrg: Tenant;
let germanOrg: Tenant;
beforeAll(async () => {
  porta = await startTestPorta();
  englishOrg = await createTenant(porta, { name: "Example Org" });
  germanOrg = await createTenant(porta, { name: "Beispiel GmbH", defaultLocale: "de" });
});
afterAll(async () => {
  await porta?.stop();
});

function expectLanguage(html: string, language: Language, organization: string) {
  expect(htmlLang(html)).toBe(language);
  const main = mainOf(html);
  expect(main).toContain(message(language, (m) => m.signIn.title, { organization }));
  expect(main).toContain(message(language, (m) => m.signIn.email));
  const other: Language = language === "de" ? "en" : "de";
  expect(main).not.toContain(message(other, (m) => m.signIn.title, { organization }));
}

describe("language of the login page", () => {
  const CASES: Array<{ name: string; tenant: () => Tenant; headers?: Record<string, string>; uiLocales?: string; expected: Language }> = [
    { name: "ui_locales=de beats an English browser", tenant: () => englishOrg, uiLocales: "de", headers: { "accept-language": "en-US,en;q=0.9" }, expected: "de" },
    { name: "ui_locales skips languages we lack (fr de → de)", tenant: () => englishOrg, uiLocales: "fr de", expected: "de" },
    { name: "ui_locales=en beats a German organization and browser", tenant: () => germanOrg, uiLocales: "en", headers: { "accept-language": "de" }, expected: "en" },
    { name: "Accept-Language: de-DE gives German", tenant: () => englishOrg, headers: { "accept-language": "de-DE" }, expected: "de" },
    { name: "Accept-Language: de-CH,de;q=0.9,en;q=0.5 gives German", tenant: () => englishOrg, headers: { "accept-language": "de-CH,de;q=0.9,en;q=0.5" }, expected: "de" },
    { name: "a language we lack (fr) falls back to the organization's default (de)", tenant: () => germanOrg, headers: { "accept-language": "fr" }, expected: "de" },
    { name: "a browser asking for English gets English in a German organization", tenant: () => germanOrg, headers: { "accept-language": "en-GB" }, expected: "en" },
    { name: "a language we lack (fr) in an English organization gives English", tenant: () => englishOrg, headers: { "accept-language": "fr" }, expected: "en" },
    { name: "no preference at all in an English organization gives English", tenant: () => englishOrg, expected: "en" },
    { name: "no preference at all in a German organization gives German", tenant: () => germanOrg, expected: "de" },
    { name: "Accept-Language: * in a German organization gives German", tenant: () => germanOrg, headers: { "accept-language": "*" }, expected: "de" },
  ];

  it.each(CASES)("$name", async ({ tenant, headers, uiLocales, expected }) => {
    const t = tenant();
    const page = await openLoginPage(t, { ...(headers ? { headers } : {}), ...(uiLocales ? { extra: { ui_locales: uiLocales } } : {}) });
    expect(page.res.status).toBe(200);
    expectLanguage(page.html, expected, t.org.name);
  });

  // Each language's translator is made once and shared by the pages rendered in it.
  it("pages rendered at the same time in English and German each keep their own language", async () => {
    const languages: Language[] = Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? "de" : "en"));
    const pages = await Promise.all(languages.map((language) => openLoginPage(englishOrg, { extra: { ui_locales: language } })));
    pages.forEach((page, i) => {
      expect(page.res.status).toBe(200);
      expectLanguage(page.html, languages[i]!, englishOrg.org.name);
    });
  });

  it("the generic failure and the consent page keep the language of ui_locales", async () => {
    const user = await createUser(porta.services.db.prisma, englishOrg.org.id, { password: PASSWORD });
    const page = await openLoginPage(englishOrg, { extra: { ui_locales: "de" } });
    const failed = await submitPassword(page, user.email, "a wrong password 9");
    const failedHtml = await failed.text();
    expect(htmlLang(failedHtml)).toBe("de");
    expect(mainOf(failedHtml)).toContain(message("de", (m) => m.signIn.failed));

    const posted = await submitPassword(page, user.email, PASSWORD);
    const consent = await followToCallback(page.browser, posted, page.interactionUrl, englishOrg.redirectUri);
    const consentHtml = await consent.res.text();
    expect(htmlLang(consentHtml)).toBe("de");
    expect(mainOf(consentHtml)).toContain(message("de", (m) => m.consent.allow));
  });
});

describe("branding", () => {
  it("shows the organization's name, primary colour and logo", async () => {
    const tenant = await createTenant(porta, {
      branding: { name: "Acme Identity", primaryColor: "#aa0000", logoUrl: "https://cdn.example.com/logo.png" },
    });
    const page = await openLoginPage(tenant);
    const main = mainOf(page.html);
    expect(main).toMatch(/^<main class="page" style="--porta-primary:#aa0000">/);
    expect(main).toMatch(/<img src="https:\/\/cdn\.example\.com\/logo\.png" alt="Acme Identity"/);
    expect(main).toContain(message("en", (m) => m.signIn.title, { organization: "Acme Identity" }));
  });

  it("accepts a same-origin logo path and a background colour", async () => {
    const tenant = await createTenant(porta, { branding: { logoUrl: "/brand/logo.svg", backgroundColor: "#fff", primaryColor: "#123456" } });
    const main = mainOf((await openLoginPage(tenant)).html);
    expect(main).toMatch(/<img src="\/brand\/logo\.svg"/);
    expect(main).toMatch(/style="[^"]*--porta-primary:#123456/);
    expect(main).toMatch(/style="[^"]*--porta-bg:#fff/);
  });

  const MALICIOUS = [
    { primaryColor: "red;}</style><script>alert(1)</script>", logoUrl: "javascript:alert(1)" },
    { primaryColor: "expression(alert(1))", logoUrl: "http://cdn.example.com/logo.png" },
    { primaryColor: "#aa0000; background: url(https://evil.example/x)", logoUrl: "//evil.example/logo.png" },
    { backgroundColor: "url(javascript:alert(1))", logoUrl: "data:image/svg+xml,<svg onload=alert(1)>" },
    { cssVariables: { "--porta-primary": "red;}</style><script>alert(1)</script>", "color": "red", "--porta-x": "url(javascript:alert(1))" } },
  ];

  it.each(MALICIOUS)("drops unsafe values: %j", async (branding) => {
    const tenant = await createTenant(porta, { name: "Safe Name Org", branding });
    const page = await openLoginPage(tenant);
    expect(page.res.status).toBe(200);
    const main = mainOf(page.html);
    expect(main).toMatch(/^<main class="page">/);
    expect(main).not.toContain("<img");
    expect(main).toContain('<p class="brand-name">Safe Name Org</p>');
    for (const bad of ["javascript:", "alert(1)", "</style>", "evil.example", "expression(", "onload"]) {
      expect(page.html, bad).not.toContain(bad);
    }
  });

  it("escapes markup in the brand name", async () => {
    const tenant = await createTenant(porta, { branding: { name: '<img src=x onerror="alert(1)">Acme' } });
    const page = await openLoginPage(tenant);
    const main = mainOf(page.html);
    expect(main).not.toContain("<img src=x");
    expect(main).toContain("&lt;img src=x onerror=");
  });
});
