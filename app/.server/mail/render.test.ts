import { describe, expect, it } from "vitest";
import de from "../../../public/locales/de/email.json";
import en from "../../../public/locales/en/email.json";
import { type Language } from "~/i18n/config";
import type { Branding } from "~/schemas/branding";
import { renderEmail, type EmailTemplate } from "./render";

const LINK = "https://id.example.com/interaction/abc123/magic-link/verify?org=acme&token=tok_9f8e7d";
const escapeHtml = (value: string) => value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const branding: Branding = { name: "Acme Identity", logoUrl: null, cssVariables: { "--porta-primary": "#0f766e" } };
const ctx = (language: Language, overrides: Partial<Branding> = {}) => ({
  language,
  branding: { ...branding, ...overrides },
  organizationName: "Acme",
});

const templates: Array<{ template: EmailTemplate; secret: string; subject: Record<Language, string> }> = [
  {
    template: { kind: "magic-link", link: LINK, expiresMinutes: 15 },
    secret: LINK,
    subject: { en: "Your sign-in link for Acme", de: "Ihr Anmeldelink für Acme" },
  },
  {
    template: { kind: "password-reset", link: LINK, expiresMinutes: 60 },
    secret: LINK,
    subject: { en: "Reset your password for Acme", de: "Passwort für Acme zurücksetzen" },
  },
  {
    template: { kind: "invitation", link: LINK, expiresDays: 7, invitedBy: "Ada Lovelace" },
    secret: LINK,
    subject: { en: "You are invited to join Acme", de: "Einladung zu Acme" },
  },
  {
    template: { kind: "email-otp", code: "482913", expiresMinutes: 10 },
    secret: "482913",
    subject: { en: "Your verification code for Acme", de: "Ihr Bestätigungscode für Acme" },
  },
  {
    template: { kind: "email-change", link: LINK, newEmail: "ada@new.example.com", expiresMinutes: 60 },
    secret: LINK,
    subject: { en: "Confirm your new email address for Acme", de: "Bestätigen Sie Ihre neue E-Mail-Adresse für Acme" },
  },
  {
    // No secret: the notice names the new address and carries no link to act on.
    template: { kind: "email-change-notice", newEmail: "ada@new.example.com" },
    secret: "ada@new.example.com",
    subject: { en: "Your Acme email address is about to change", de: "Ihre E-Mail-Adresse bei Acme soll geändert werden" },
  },
];

/** The line each kind must carry below its body: how long it works, or what to do when it was not you. */
const expiry: Record<EmailTemplate["kind"], Record<Language, string>> = {
  "magic-link": { en: "This link expires in 15 minutes.", de: "Dieser Link läuft in 15 Minuten ab." },
  "password-reset": { en: "This link expires in 60 minutes.", de: "Dieser Link läuft in 60 Minuten ab." },
  invitation: { en: "This invitation expires in 7 days.", de: "Diese Einladung läuft in 7 Tagen ab." },
  "email-otp": { en: "The code expires in 10 minutes.", de: "Der Code läuft in 10 Minuten ab." },
  "email-change": { en: "This link expires in 60 minutes.", de: "Dieser Link läuft in 60 Minuten ab." },
  "email-change-notice": { en: "If this was not you, sign in and change your password now", de: "Falls Sie das nicht waren, melden Sie sich an" },
};

describe.each(templates)("$template.kind email", ({ template, secret, subject }) => {
  it.each(["en", "de"] as const)("renders in %s: localized subject, secret in both parts, branding, no raw placeholders", async (language) => {
    const email = await renderEmail(template, ctx(language));
    expect(email.subject).toBe(subject[language]);
    expect(email.html).toContain(escapeHtml(secret));
    expect(email.text).toContain(secret);
    expect(email.html).toContain("Acme Identity");
    expect(email.text).toContain("Acme Identity");
    expect(email.html).toContain(`lang="${language}"`);
    expect(email.html).toContain(expiry[template.kind][language]);
    expect(email.text).toContain(expiry[template.kind][language]);
    for (const part of [email.subject, email.html, email.text]) {
      expect(part).not.toContain("{{");
      expect(part).not.toContain("}}");
      // A missing key would render as its dotted name.
      expect(part).not.toMatch(/\b(common|magicLink|passwordReset|invitation|emailOtp|emailChange|emailChangeNotice)\.[a-zA-Z]+/);
    }
    expect(email.text).not.toMatch(/<[a-z][^>]*>/i);
  });

  it("differs between English and German", async () => {
    const [english, german] = await Promise.all([renderEmail(template, ctx("en")), renderEmail(template, ctx("de"))]);
    expect(german.subject).not.toBe(english.subject);
    expect(german.text).not.toBe(english.text);
  });
});

describe("email branding", () => {
  const magicLink: EmailTemplate = { kind: "magic-link", link: LINK, expiresMinutes: 15 };

  it("applies the primary colour to the button", async () => {
    const { html } = await renderEmail(magicLink, ctx("en"));
    expect(html).toMatch(/<a href="[^"]*"[^>]*background-color:#0f766e/);
  });

  it("falls back to the default colour for anything but a hex colour", async () => {
    const { html } = await renderEmail(magicLink, ctx("en", { cssVariables: { "--porta-primary": "red;background:url(https://evil.test)" } }));
    expect(html).not.toContain("evil.test");
    expect(html).toContain("background-color:#3b5bdb");
  });

  it("shows an https logo with the branding name as its alt text", async () => {
    const { html, text } = await renderEmail(magicLink, ctx("en", { logoUrl: "https://cdn.example.com/acme.png" }));
    expect(html).toContain('src="https://cdn.example.com/acme.png"');
    expect(html).toContain('alt="Acme Identity"');
    expect(text).not.toContain("cdn.example.com");
  });

  it.each(["/assets/logo.png", "http://cdn.example.com/acme.png"])("shows the name instead of a logo at %s", async (logoUrl) => {
    const { html } = await renderEmail(magicLink, ctx("en", { logoUrl }));
    expect(html).not.toContain("<img");
    expect(html).toContain("Acme Identity");
  });

  it("escapes markup in names", async () => {
    const { html } = await renderEmail(magicLink, { language: "en", branding: { ...branding, name: "<b>Evil</b>" }, organizationName: '<script>alert("x")</script>' });
    expect(html).not.toContain("<script>");
    expect(html).not.toContain("<b>Evil</b>");
    expect(html).toContain("&lt;script&gt;");
  });
});

describe("email wording", () => {
  it("names the inviter when known and reads well without one", async () => {
    const withInviter = await renderEmail({ kind: "invitation", link: LINK, expiresDays: 7, invitedBy: "Ada Lovelace" }, ctx("de"));
    expect(withInviter.text).toContain("Ada Lovelace hat Sie eingeladen, Acme beizutreten.");
    const without = await renderEmail({ kind: "invitation", link: LINK, expiresDays: 1 }, ctx("en"));
    expect(without.text).toContain("You have been invited to join Acme.");
    expect(without.text).toContain("This invitation expires in 1 day.");
  });

  it("uses the singular for one minute", async () => {
    const { text } = await renderEmail({ kind: "email-otp", code: "000111", expiresMinutes: 1 }, ctx("de"));
    expect(text).toContain("Der Code läuft in 1 Minute ab.");
  });

  it("tells the recipient to ignore an email they did not ask for", async () => {
    const { text } = await renderEmail({ kind: "magic-link", link: LINK, expiresMinutes: 15 }, ctx("en"));
    expect(text).toContain("If you did not ask for this, ignore this email.");
  });

  it("shows the link once in the text part, next to the button label", async () => {
    const { text } = await renderEmail({ kind: "password-reset", link: LINK, expiresMinutes: 60 }, ctx("en"));
    expect(text.split(LINK)).toHaveLength(2);
    expect(text).toContain(`Choose a new password ${LINK}`);
  });

  it("has the same keys in every language", () => {
    const keys = (tree: object, prefix = ""): string[] =>
      Object.entries(tree).flatMap(([k, v]) => (typeof v === "string" ? [`${prefix}${k}`] : keys(v as object, `${prefix}${k}.`)));
    expect(keys(de).sort()).toEqual(keys(en).sort());
  });
});
