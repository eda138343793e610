import { randomBytes } from "node:crypto";
import * as oidc from "openid-client";
import type { JobName } from "~/.server/jobs/queue";
import { resources, type Language } from "~/i18n/config";
import en from "../../public/locales/en/email.json";
import de from "../../public/locales/de/email.json";
import { csrfOf, startAuthorization, TestBrowser, type AuthorizationStart } from "../support/browser";
import { createClient } from "../support/factories";
import type { TestPorta } from "../support/porta";

/**
 * Shared steps of the mail tests: a tenant with a client, a login page reached the way a relying
 * party sends a browser there, the link pages followed as a browser would, and the job queue
 * watched until it is idle.
 */

export const RP_CALLBACK = "https://rp.example.com/cb";
export const PASSWORD = "a long test password 1";

export interface Tenant {
  org: { id: string; slug: string; name: string };
  client: { id: string };
  secret: string;
  issuer: string;
}

export async function createTenant(
  porta: TestPorta,
  options: { defaultLoginMethods?: string[]; twoFactorPolicy?: string; name?: string } = {},
): Promise<Tenant> {
  const prisma = porta.services.db.prisma;
  const slug = `mail-${randomBytes(4).toString("hex")}`;
  const org = await prisma.organization.create({
    data: {
      slug,
      name: options.name ?? `Organization ${slug}`,
      defaultLoginMethods: options.defaultLoginMethods ?? ["password", "magic_link"],
      ...(options.twoFactorPolicy ? { twoFactorPolicy: options.twoFactorPolicy } : {}),
    },
  });
  const { client, secret } = await createClient(prisma, org.id);
  return { org, client, secret: secret!.value, issuer: `${porta.baseUrl}/${org.slug}` };
}

export const uniqueEmail = (label: string) => `${label}-${randomBytes(4).toString("hex")}@example.com`;

export interface LoginPage extends AuthorizationStart {
  html: string;
  status: number;
}

/** Starts an authorization for the tenant's client and opens the login page it lands on. */
export async function openLoginPage(
  tenant: Tenant,
  options: { headers?: Record<string, string>; extra?: Record<string, string>; scope?: string } = {},
): Promise<LoginPage> {
  const start = await startAuthorization({
    issuer: tenant.issuer,
    clientId: tenant.client.id,
    clientSecret: tenant.secret,
    redirectUri: RP_CALLBACK,
    browser: new TestBrowser(options.headers),
    ...(options.scope ? { scope: options.scope } : {}),
    ...(options.extra ? { extra: options.extra } : {}),
  });
  const res = await start.browser.get(start.interactionUrl);
  return { ...start, status: res.status, html: await res.text() };
}

export function requestMagicLinkOn(page: LoginPage, email: string): Promise<Response> {
  return page.browser.post(`${page.interactionUrl}/magic-link`, { csrf: csrfOf(page.html), email });
}

export async function requestPasswordResetOn(page: LoginPage, email: string): Promise<Response> {
  const form = await page.browser.get(`${page.interactionUrl}/forgot-password`);
  const html = await form.text();
  if (form.status !== 200) throw new Error(`forgot-password form answered ${form.status}`);
  return page.browser.post(`${page.interactionUrl}/forgot-password`, { csrf: csrfOf(html), email });
}

export function submitPassword(page: LoginPage, email: string, password: string): Promise<Response> {
  return page.browser.post(page.interactionUrl, { csrf: csrfOf(page.html), email, password });
}

/** The hidden fields of the page a magic link opens (csrf, token, org). */
export function confirmFormOf(html: string): Record<string, string> {
  const fields = Object.fromEntries([...html.matchAll(/<input type="hidden" name="(csrf|token|org)" value="([^"]*)"/g)].map((m) => [m[1]!, unescapeHtml(m[2]!)]));
  if (!fields.csrf) throw new Error(`no confirm form in the page: ${html.slice(0, 300)}`);
  return fields;
}

/** Opens a magic link (GET shows the confirm page) and submits its form, as the page's script does. */
export async function useMagicLink(browser: TestBrowser, link: string): Promise<{ get: Response; post: Response; postUrl: string }> {
  const get = await browser.get(link);
  const html = await get.text();
  // The form posts back to the page's own address, as a browser (or the page's script) submits it.
  const postUrl = link;
  const post = await browser.post(postUrl, confirmFormOf(html));
  return { get, post, postUrl };
}

export function followToCallback(browser: TestBrowser, res: Response, from: string) {
  return browser.follow(res, from, (url) => url.startsWith(RP_CALLBACK));
}

/**
 * From a finished login step to the relying party: follows redirects, allows consent when asked,
 * and records every URL visited, so a test can tell which prompts were shown.
 */
export async function continueToCallback(browser: TestBrowser, res: Response, from: string) {
  const visited: string[] = [];
  let current = res;
  let url = from;
  let consentShown = false;
  for (let step = 0; step < 12; step++) {
    if (current.status >= 300 && current.status < 400) {
      url = new URL(current.headers.get("location")!, url).href;
      visited.push(url);
      if (url.startsWith(RP_CALLBACK)) return { callback: new URL(url), visited, consentShown };
      current = await browser.get(url);
      continue;
    }
    const html = await current.text();
    if (current.status === 200 && html.includes(`action="${new URL(url).pathname}/consent"`)) {
      consentShown = true;
      current = await browser.post(`${url}/consent`, { csrf: csrfOf(html), decision: "allow" });
      url = `${url}/consent`;
      continue;
    }
    throw new Error(`stopped at ${url} (${current.status}): ${mainOf(html).slice(0, 500)}`);
  }
  throw new Error(`too many steps; visited ${visited.join(" -> ")}`);
}

export function redeem(page: AuthorizationStart, callback: URL) {
  return oidc.authorizationCodeGrant(page.config, callback, { pkceCodeVerifier: page.verifier });
}

/** Signs in with a password on a fresh authorization and returns the status of the login POST and, on success, the tokens. */
export async function passwordSignIn(tenant: Tenant, email: string, password: string, options: { scope?: string; extra?: Record<string, string> } = {}) {
  const page = await openLoginPage(tenant, options);
  const posted = await submitPassword(page, email, password);
  if (posted.status !== 302 && posted.status !== 303) return { status: posted.status, html: await posted.text(), page };
  const { callback } = await continueToCallback(page.browser, posted, page.interactionUrl);
  return { status: posted.status, html: "", page, tokens: await redeem(page, callback) };
}

// ---------------------------------------------------------------------------------------------
// Page text

export function mainOf(html: string): string {
  const start = html.indexOf("<main");
  const end = html.indexOf("</main>");
  if (start < 0 || end < 0) return html;
  return html.slice(start, end + "</main>".length);
}

export function htmlLang(html: string): string | undefined {
  return /<html[^>]*\slang="([^"]*)"/.exec(html)?.[1];
}

/** The CSP nonce differs on every response by design; everything else of a generic answer must not. */
export function withoutNonces(html: string): string {
  return html.replace(/ nonce="[^"]*"/g, ' nonce=""');
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#x27;");
}

function unescapeHtml(text: string): string {
  return text.replace(/&quot;/g, '"').replace(/&#x27;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

type LoginMessages = (typeof resources)["en"]["login"];

/** A string of public/locales/<language>/login.json as a page shows it (HTML-escaped). */
export function pageText(language: Language, pick: (messages: LoginMessages) => string, values: Record<string, string | number> = {}): string {
  let text = pick(resources[language].login as LoginMessages);
  for (const [name, value] of Object.entries(values)) text = text.replaceAll(`{{${name}}}`, String(value));
  return escapeHtml(text);
}

type EmailMessages = typeof en;
const emailMessages: Record<Language, EmailMessages> = { en, de };

/** A string of public/locales/<language>/email.json, interpolated. */
export function mailText(language: Language, pick: (messages: EmailMessages) => string, values: Record<string, string | number> = {}): string {
  let text = pick(emailMessages[language]);
  for (const [name, value] of Object.entries(values)) text = text.replaceAll(`{{${name}}}`, String(value));
  return text;
}

// ---------------------------------------------------------------------------------------------
// Queue

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface JobRow {
  id: string;
  state: string;
  retry_count: number;
  data: Record<string, unknown>;
}

/** pg-boss's rows of one queue (every state), read through the app's own connection. */
export async function jobRows(porta: TestPorta, name: JobName): Promise<JobRow[]> {
  const { rows } = await porta.services.db.executeSql("SELECT id, state, retry_count, data FROM pgboss.job WHERE name = $1 ORDER BY created_on", [name]);
  return rows as JobRow[];
}

/**
 * Waits until the queue has nothing waiting (pg-boss's own count) and nothing running, then a
 * short grace, so that "no mail arrived" means the job ran and sent nothing.
 */
export async function drainQueue(porta: TestPorta, name: JobName, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const waiting = await porta.services.jobs.count(name, "waiting");
    const open = (await jobRows(porta, name)).filter((j) => j.state === "active" || j.state === "created" || j.state === "retry").length;
    if (waiting === 0 && open === 0) break;
    if (Date.now() > deadline) throw new Error(`queue ${name} did not drain: ${waiting} waiting, ${open} open`);
    await sleep(100);
  }
  await sleep(300);
}

/** Polls `read` until `accept` holds for its value (or the time is up) and returns the last value. */
export async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value) || Date.now() > deadline) return value;
    await sleep(100);
  }
}

export { sleep };
