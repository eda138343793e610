import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { translator } from "~/.server/i18n";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { TestBrowser } from "../support/browser";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, mainOf, openLoginPage, PASSWORD, submitPassword, type Tenant } from "./helpers";

/**
 * A number in a message takes the word that goes with it ("1 minute", "2 minutes"; "1 Minute",
 * "2 Minuten"): every count-bearing message has i18next's plural forms (`_one`, `_other`) in
 * every language Porta has, and the pages pass the number as `count`.
 */
const LOCALES = path.resolve(__dirname, "../../public/locales");
const languages = readdirSync(LOCALES);

type Messages = { [key: string]: string | Messages };
function flatten(messages: Messages, prefix = ""): Array<[string, string]> {
  return Object.entries(messages).flatMap(([key, value]) => (typeof value === "string" ? [[`${prefix}${key}`, value] as [string, string]] : flatten(value, `${prefix}${key}.`)));
}
const messagesOf = (language: string, file: string) => new Map(flatten(JSON.parse(readFileSync(path.join(LOCALES, language, file), "utf8")) as Messages));

describe("the locale files", () => {
  const files = readdirSync(path.join(LOCALES, "en"));

  it("exist for English and German, with the same files", () => {
    expect(languages.sort()).toEqual(["de", "en"]);
    for (const language of languages) expect(readdirSync(path.join(LOCALES, language)).sort()).toEqual([...files].sort());
  });

  it("give every count-bearing message both plural forms in every language, and keep no number outside them", () => {
    for (const file of files) {
      const keys = new Map(languages.map((language) => [language, messagesOf(language, file)]));
      for (const [language, messages] of keys) {
        for (const [key, text] of messages) {
          const where = `${language}/${file} ${key}: ${text}`;
          // The same plural keys in every language: a German reader never falls back to a singular-less form.
          for (const other of languages) expect(keys.get(other)!.has(key), `${where} (missing in ${other})`).toBe(true);
          if (key.endsWith("_one")) expect(messages.has(`${key.slice(0, -4)}_other`), where).toBe(true);
          if (key.endsWith("_other")) expect(messages.has(`${key.slice(0, -6)}_one`), where).toBe(true);
          // A time is a count: never "{{minutes}} minutes"; and never "mail(s)".
          expect(text, where).not.toMatch(/\{\{(minutes|seconds|hours|days)\}\}/);
          expect(text, where).not.toMatch(/\p{L}\((s|n|en|e)\)/u);
          if (/\{\{count\}\}\s+\p{L}/u.test(text) && !/(per day|pro Tag)$/.test(text)) expect(key, where).toMatch(/_(one|other)$/);
        }
      }
    }
  });

  it("render the singular and the plural through i18next", async () => {
    const en = await translator("en");
    const de = await translator("de");
    expect(en("signIn.rateLimited", { count: 1 })).toBe("Too many attempts. Try again in 1 minute.");
    expect(en("signIn.rateLimited", { count: 2 })).toBe("Too many attempts. Try again in 2 minutes.");
    expect(de("signIn.rateLimited", { count: 1 })).toBe("Zu viele Versuche. Versuchen Sie es in 1 Minute erneut.");
    expect(de("signIn.rateLimited", { count: 15 })).toBe("Zu viele Versuche. Versuchen Sie es in 15 Minuten erneut.");
    expect(en("twoFactor.emailIntro", { count: 1 })).toBe("We sent a 6-digit code to your email address. It expires in 1 minute.");
    expect(de("twoFactor.resendLimited", { count: 1 })).toBe("Sie haben zu viele neue Codes angefordert. Versuchen Sie es in 1 Minute erneut.");
    expect(en("account.passkeys.limit", { count: 1 })).toBe("You have 1 passkey, the most an account may have.");
    expect(de("account.stepUp.body", { count: 1 })).toMatch(/mehr als 1 Minute zurück\.$/);
    const operator = { en: await translator("en"), de: await translator("de") };
    expect(operator.en("webhooks.offFailures", { ns: "console", count: 1 })).toBe("Off after 1 failed attempt in a row");
    expect(operator.de("mail.redrivenAll", { ns: "console", count: 1, expired: 0 })).toBe("1 E-Mail wieder in der Warteschlange; 0 mit abgelaufenem Link nicht gesendet.");
  });
});

describe("the pages", () => {
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

  it("say 'Try again in 1 minute' when the window ends within a minute, in English and German", { timeout: 120_000 }, async () => {
    expect((await api.put("/config/rateLimits.passwordLogin.perAccount", { value: { points: 1, windowMinutes: 1 } })).status).toBe(200);
    try {
      const user = await createUser(porta.services.db.prisma, tenant.org.id, { password: PASSWORD });
      const tries = async (language: string) => {
        const page = await openLoginPage(tenant, { browser: new TestBrowser({ "accept-language": language }) });
        const res = await submitPassword(page, user.email, "a wrong password 9");
        return { status: res.status, retryAfter: Number(res.headers.get("retry-after")), main: mainOf(await res.text()) };
      };
      expect((await tries("en")).status).toBe(401);
      const english = await tries("en");
      expect(english.status).toBe(429);
      expect(english.retryAfter).toBeLessThanOrEqual(60);
      expect(english.main).toContain("Too many attempts. Try again in 1 minute.");
      expect(english.main).not.toContain("1 minutes");
      const german = await tries("de");
      expect(german.status).toBe(429);
      expect(german.main).toContain("Zu viele Versuche. Versuchen Sie es in 1 Minute erneut.");
    } finally {
      expect((await api.put("/config/rateLimits.passwordLogin.perAccount", { value: { points: 10, windowMinutes: 15 } })).status).toBe(200);
    }
  });
});
