import { randomBytes } from "node:crypto";
import * as oidc from "openid-client";
import type { Prisma } from "~/generated/prisma/client";
import { resources, type Language } from "~/i18n/config";
import { csrfOf, startAuthorization, TestBrowser, type AuthorizationStart } from "../support/browser";
import { createClient, type ClientInput } from "../support/factories";
import type { TestPorta } from "../support/porta";

/**
 * Shared steps of the login-page tests: an organization with a client, a login page reached
 * the way a relying party sends a browser there, and small readers of what a page shows.
 */

export const PASSWORD = "a long test password 1";
export const RP_CALLBACK = "https://rp.example.com/cb";

export interface TenantOptions {
  defaultLoginMethods?: string[];
  /** The client's override; absent or empty means the client inherits the organization's. */
  clientLoginMethods?: string[];
  defaultLocale?: string;
  branding?: Prisma.InputJsonValue;
  name?: string;
  client?: ClientInput;
}

export interface Tenant {
  org: { id: string; slug: string; name: string };
  client: { id: string };
  secret: string | undefined;
  issuer: string;
  redirectUri: string;
}

/** An organization (written straight through Prisma, so branding and locale can be set) and one client. */
export async function createTenant(porta: TestPorta, options: TenantOptions = {}): Promise<Tenant> {
  const prisma = porta.services.db.prisma;
  const slug = `login-${randomBytes(4).toString("hex")}`;
  const org = await prisma.organization.create({
    data: {
      slug,
      name: options.name ?? `Organization ${slug}`,
      defaultLoginMethods: options.defaultLoginMethods ?? ["password", "magic_link"],
      ...(options.defaultLocale ? { defaultLocale: options.defaultLocale } : {}),
      ...(options.branding === undefined ? {} : { branding: options.branding }),
    },
  });
  const { client, secret } = await createClient(prisma, org.id, { loginMethods: options.clientLoginMethods ?? [], ...options.client });
  return {
    org,
    client,
    secret: secret?.value,
    issuer: `${porta.baseUrl}/${org.slug}`,
    redirectUri: options.client?.redirectUris?.[0] ?? RP_CALLBACK,
  };
}

export interface LoginPage extends AuthorizationStart {
  res: Response;
  html: string;
}

/** Starts an authorization for the tenant's client and opens the login page it lands on. */
export async function openLoginPage(
  tenant: Tenant,
  options: { headers?: Record<string, string>; extra?: Record<string, string>; browser?: TestBrowser; redirectUri?: string } = {},
): Promise<LoginPage> {
  const start = await startAuthorization({
    issuer: tenant.issuer,
    clientId: tenant.client.id,
    ...(tenant.secret ? { clientSecret: tenant.secret } : {}),
    redirectUri: options.redirectUri ?? tenant.redirectUri,
    browser: options.browser ?? new TestBrowser(options.headers),
    ...(options.extra ? { extra: options.extra } : {}),
  });
  const res = await start.browser.get(start.interactionUrl);
  return { ...start, res, html: await res.text() };
}

/** Posts the password form of a login page, with the page's own CSRF token unless one is given. */
export function submitPassword(page: LoginPage, email: string, password: string, extra: { csrf?: string; headers?: Record<string, string> } = {}) {
  return page.browser.post(page.interactionUrl, { csrf: extra.csrf ?? csrfOf(page.html), email, password }, extra.headers);
}

/** The page's <main> element: what a person sees, without the hydration data that follows it. */
export function mainOf(html: string): string {
  const start = html.indexOf("<main");
  const end = html.indexOf("</main>");
  if (start < 0 || end < 0) throw new Error(`no <main> in the page: ${html.slice(0, 500)}`);
  return html.slice(start, end + "</main>".length);
}

export function htmlLang(html: string): string | undefined {
  return /<html[^>]*\slang="([^"]*)"/.exec(html)?.[1];
}

/** The controls of a login page, read from its markup. */
export function loginControls(html: string, uid: string) {
  const main = mainOf(html);
  const magicLinkPath = `/interaction/${uid}/magic-link`;
  return {
    emailField: /<input[^>]*name="email"/.test(main),
    passwordField: /<input[^>]*name="password"/.test(main),
    passwordForm: main.includes(`<form method="post" action="/interaction/${uid}"`),
    /** A submit button that posts to /magic-link, as a formaction of the password form or in a form of its own. */
    magicLinkButton:
      new RegExp(`<button[^>]*type="submit"[^>]*formaction="${escapeRegExp(magicLinkPath)}"`).test(main) ||
      new RegExp(`<form[^>]*action="${escapeRegExp(magicLinkPath)}"[^>]*>(?:(?!</form>).)*<button[^>]*type="submit"`, "s").test(main),
    forgotPasswordLink: main.includes(`href="/interaction/${uid}/forgot-password"`),
  };
}

function escapeRegExp(text: string) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Text as React writes it into HTML. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#x27;");
}

type Messages = (typeof resources)["en"]["login"];

/** i18next's plural suffix for a count in one of Porta's languages (English and German have "one" and "other"). */
export function pluralOf(language: Language, count: number): "one" | "other" {
  return new Intl.PluralRules(language).select(count) === "one" ? "one" : "other";
}

/** A string of public/locales/<language>/login.json, as the page must show it. */
export function message(language: Language, pick: (messages: Messages) => string, values: Record<string, string | number> = {}): string {
  let text = pick(resources[language].login as Messages);
  for (const [name, value] of Object.entries(values)) text = text.replaceAll(`{{${name}}}`, String(value));
  return escapeHtml(text);
}

/**
 * The CSP nonce is the one part of a page that differs on every response by design (it is
 * random per response and appears only as nonce="…" on the inline script tags).
 */
export function withoutNonces(html: string): string {
  return html.replace(/ nonce="[^"]*"/g, ' nonce=""');
}

/** Runs `fn` and returns every SQL statement Prisma sent meanwhile. */
export async function sqlDuring<T>(porta: TestPorta, fn: () => Promise<T>): Promise<{ result: T; sql: string[] }> {
  const sql: string[] = [];
  const stop = porta.services.db.onQuery((statement) => sql.push(statement));
  try {
    return { result: await fn(), sql };
  } finally {
    stop();
  }
}

/** Statements that read or write the User table (and not UserRole and the like). */
export const touchesUserTable = (statement: string) => statement.includes('"User"');

export function auditEntries(porta: TestPorta, where: Prisma.AuditEntryWhereInput) {
  return porta.services.db.prisma.auditEntry.findMany({ where, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
}

/** Runs `fn` and returns the audit entries matching `where` that appeared meanwhile. */
export async function auditDuring<T>(porta: TestPorta, where: Prisma.AuditEntryWhereInput, fn: () => Promise<T>) {
  const seen = new Set((await auditEntries(porta, where)).map((e) => e.id));
  const result = await fn();
  const entries = (await auditEntries(porta, where)).filter((e) => !seen.has(e.id));
  return { result, entries };
}

/** Follows the redirects after a finished step until the relying party's redirect_uri. */
export async function followToCallback(browser: TestBrowser, res: Response, from: string, redirectUri: string) {
  return browser.follow(res, from, (url) => url.startsWith(redirectUri));
}

/** Logs in with the password, allows consent if asked, and returns the callback URL with the code. */
export async function passwordLoginToCallback(page: LoginPage, email: string, password: string, redirectUri: string) {
  const posted = await submitPassword(page, email, password);
  if (posted.status !== 302 && posted.status !== 303) throw new Error(`login answered ${posted.status}: ${mainOf(await posted.text())}`);
  let step = await followToCallback(page.browser, posted, page.interactionUrl, redirectUri);
  let consentShown = false;
  if (!step.url.startsWith(redirectUri)) {
    const consentHtml = await step.res.text();
    consentShown = true;
    const allow = await page.browser.post(`${step.url}/consent`, { csrf: csrfOf(consentHtml), decision: "allow" });
    step = await followToCallback(page.browser, allow, `${step.url}/consent`, redirectUri);
  }
  if (!step.url.startsWith(redirectUri)) throw new Error(`did not reach ${redirectUri}: ${step.url} (${step.res.status})`);
  return { callback: new URL(step.url), consentShown };
}

export function redeem(page: AuthorizationStart, callback: URL) {
  return oidc.authorizationCodeGrant(page.config, callback, { pkceCodeVerifier: page.verifier });
}
