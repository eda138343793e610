import { randomBytes } from "node:crypto";
import * as oidc from "openid-client";
import type { Prisma } from "~/generated/prisma/client";
import { systemActor } from "~/.server/auth/actors";
import { beginTotpEnrollment, confirmTotpEnrollment } from "~/.server/auth/two-factor/service";
import { stagedContext } from "~/.server/context";
import { currentTotpCode, TOTP_PERIOD_SECONDS } from "~/.server/auth/two-factor/totp";
import { csrfOf, startAuthorization, TestBrowser, type AuthorizationStart } from "../support/browser";
import { createClient, createUser } from "../support/factories";
import type { TestPorta } from "../support/porta";
import type { ReceivedMail, SmtpSink } from "../support/smtp-sink";

/**
 * Shared steps of the two-factor tests: organizations with a policy, users in each state of
 * enrollment, TOTP codes a person's authenticator app would show, the emailed codes read from
 * the SMTP peer, and the login pages walked as a browser walks them.
 */

export const PASSWORD = "a long test password 1";
export const RP_CALLBACK = "https://rp.example.com/cb";
export const POLICIES = ["optional", "required_email", "required_totp", "required_any"] as const;
export type Policy = (typeof POLICIES)[number];

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString("hex")}`;

// ---------------------------------------------------------------------------------------------
// Data

export interface Tenant {
  org: { id: string; slug: string; name: string };
  client: { id: string };
  secret: string;
  issuer: string;
}

export async function createTenant(porta: TestPorta, policy: Policy, options: { defaultLoginMethods?: string[] } = {}): Promise<Tenant> {
  const prisma = porta.services.db.prisma;
  const slug = unique(`tf-${policy.replace("_", "-")}`);
  const org = await prisma.organization.create({
    data: { slug, name: `Organization ${slug}`, twoFactorPolicy: policy, defaultLoginMethods: options.defaultLoginMethods ?? ["password", "magic_link"] },
  });
  const { client, secret } = await createClient(prisma, org.id, { redirectUris: [RP_CALLBACK] });
  return { org, client, secret: secret!.value, issuer: `${porta.baseUrl}/${org.slug}` };
}

export const uniqueEmail = (label: string) => `${unique(label)}@example.com`;

/** The user states of the policy matrix. */
export const USER_STATES = ["none", "email", "totp", "recovery-used"] as const;
export type UserState = (typeof USER_STATES)[number];

export interface TestUser {
  id: string;
  email: string;
  /** Base32 TOTP secret, when enrolled. */
  totpSecret?: string;
  /** The recovery codes shown at enrollment, when enrolled. */
  recoveryCodes?: string[];
}

/** TOTP enrollment as the setup page does it: begin, confirm with the current code; returns the secret and the ten recovery codes. */
export async function enrollTotp(porta: TestPorta, userId: string): Promise<{ secret: string; recoveryCodes: string[] }> {
  const ctx = stagedContext(porta.services, systemActor(null));
  const secret = await beginTotpEnrollment(ctx, userId);
  const recoveryCodes = await confirmTotpEnrollment(ctx, userId, currentTotpCode(secret));
  if (!recoveryCodes) throw new Error("enrollment was not confirmed");
  return { secret, recoveryCodes };
}

/**
 * A user in one state: "none" (password only), "email" (emailOtpEnabled), "totp" (enrolled,
 * ten unused recovery codes) or "recovery-used" (enrolled, every recovery code used).
 */
export async function createUserInState(porta: TestPorta, tenant: Tenant, state: UserState): Promise<TestUser> {
  const prisma = porta.services.db.prisma;
  const user = await createUser(prisma, tenant.org.id, { email: uniqueEmail(state), password: PASSWORD });
  if (state === "none") return { id: user.id, email: user.email };
  if (state === "email") {
    await prisma.user.update({ where: { id: user.id }, data: { emailOtpEnabled: true } });
    return { id: user.id, email: user.email };
  }
  const { secret, recoveryCodes } = await enrollTotp(porta, user.id);
  if (state === "recovery-used") await prisma.recoveryCode.updateMany({ where: { userId: user.id }, data: { usedAt: new Date() } });
  return { id: user.id, email: user.email, totpSecret: secret, recoveryCodes };
}

const stepNow = () => Math.floor(Date.now() / 1000 / TOTP_PERIOD_SECONDS);

/**
 * A code the user's authenticator app would show that the server has not accepted yet: the
 * earliest step within ±1 of now later than the last step used (waiting for the clock if the
 * next step is already used up).
 */
export async function freshTotpCode(porta: TestPorta, userId: string, secret: string): Promise<string> {
  const credential = await porta.services.db.prisma.totpCredential.findUniqueOrThrow({ where: { userId } });
  const last = Number(credential.lastUsedStep);
  for (;;) {
    const now = stepNow();
    for (const step of [now - 1, now, now + 1]) {
      // Not the edge steps when the clock is about to move: the code must still be accepted when it arrives.
      const secondsIntoStep = (Date.now() / 1000) % TOTP_PERIOD_SECONDS;
      if (step === now - 1 && secondsIntoStep > TOTP_PERIOD_SECONDS - 3) continue;
      if (step > last) return currentTotpCode(secret, step * TOTP_PERIOD_SECONDS * 1000);
    }
    await sleep(1000);
  }
}

// ---------------------------------------------------------------------------------------------
// Mail

/** Messages the peer received for one address, oldest first. */
export function mailsTo(sink: SmtpSink, address: string): ReceivedMail[] {
  return sink.received.filter((m) => m.envelope.to.includes(address));
}

/** Waits for the `count`-th message to `address` and returns it. */
export async function waitForMail(sink: SmtpSink, address: string, count = 1, timeoutMs = 15_000): Promise<ReceivedMail> {
  const deadline = Date.now() + timeoutMs;
  while (mailsTo(sink, address).length < count) {
    if (Date.now() > deadline) throw new Error(`expected ${count} message(s) to ${address}, got ${mailsTo(sink, address).length}`);
    await sink.waitFor(sink.received.length + 1, Math.max(1, Math.min(500, deadline - Date.now()))).catch(() => undefined);
  }
  return mailsTo(sink, address)[count - 1]!;
}

/** The six-digit code of an email-code message. */
export function codeIn(mail: ReceivedMail): string {
  const text = mail.parsed.text ?? "";
  const match = /(?:^|\s)(\d{6})(?:\s|$)/.exec(text);
  if (!match) throw new Error(`no code in the mail: ${text}`);
  return match[1]!;
}

/** The magic-link URL of a message. */
export function magicLinkIn(mail: ReceivedMail): string {
  const match = /https?:\/\/\S+\/magic-link\/verify\S+/.exec(mail.parsed.text ?? "");
  if (!match) throw new Error(`no magic link in the mail: ${mail.parsed.text}`);
  return match[0];
}

// ---------------------------------------------------------------------------------------------
// Pages

export interface LoginPage extends AuthorizationStart {
  html: string;
}

/**
 * A TestBrowser that, like a real browser, sends a GET again when the kept-alive connection it
 * reused turns out to have been closed by the server meanwhile (ECONNRESET before any answer):
 * on a busy machine a step that hashes recovery codes can outlast the server's keep-alive.
 */
export class RetryingBrowser extends TestBrowser {
  override async get(url: string, headers: Record<string, string> = {}): Promise<Response> {
    try {
      return await super.get(url, headers);
    } catch (error) {
      const cause = error instanceof Error ? (error.cause as { code?: string } | undefined) : undefined;
      if (cause?.code !== "ECONNRESET" && cause?.code !== "UND_ERR_SOCKET") throw error;
      return super.get(url, headers);
    }
  }
}

export async function openLoginPage(tenant: Tenant, browser: TestBrowser = new RetryingBrowser(), extra?: Record<string, string>): Promise<LoginPage> {
  const start = await startAuthorization({ issuer: tenant.issuer, clientId: tenant.client.id, clientSecret: tenant.secret, redirectUri: RP_CALLBACK, browser, ...(extra ? { extra } : {}) });
  const res = await start.browser.get(start.interactionUrl);
  if (res.status !== 200) throw new Error(`login page answered ${res.status}`);
  return { ...start, html: await res.text() };
}

export function mainOf(html: string): string {
  const start = html.indexOf("<main");
  const end = html.indexOf("</main>");
  return start < 0 || end < 0 ? html : html.slice(start, end + "</main>".length);
}

/** Where a page is, by its path and what it shows. */
export type Step =
  | { kind: "callback"; url: string; callback: URL }
  | { kind: "consent"; url: string; html: string }
  | { kind: "setup"; url: string; html: string; secret: string }
  | { kind: "choose"; url: string; html: string; methods: string[] }
  | { kind: "totp" | "email" | "recovery"; url: string; html: string; recoveryLink: boolean }
  | { kind: "login"; url: string; html: string };

/** Reads the page at `url`: which step of the login it is. */
export function readStep(url: string, status: number, html: string): Step {
  if (url.startsWith(RP_CALLBACK)) return { kind: "callback", url, callback: new URL(url) };
  if (status !== 200) throw new Error(`${url} answered ${status}: ${mainOf(html).slice(0, 800)}`);
  const path = new URL(url).pathname;
  const main = mainOf(html);
  if (path.endsWith("/consent") || main.includes(`action="${path}/consent"`)) return { kind: "consent", url, html };
  if (path.endsWith("/two-factor/setup")) {
    const secret = /data-testid="totp-secret"[^>]*>([^<]*)</.exec(main)?.[1];
    if (!secret) throw new Error(`no manual key on the setup page: ${main.slice(0, 800)}`);
    return { kind: "setup", url, html, secret };
  }
  if (path.endsWith("/two-factor")) {
    const uid = path.split("/")[2]!;
    const recoveryLink = main.includes(`href="/interaction/${uid}/two-factor?method=recovery"`);
    if (main.includes('name="intent" value="choose"')) {
      return { kind: "choose", url, html, methods: [...main.matchAll(/name="method" value="(totp|email)"/g)].map((m) => m[1]!) };
    }
    const view = /type="hidden" name="method" value="(totp|email|recovery)"/.exec(main)?.[1] as "totp" | "email" | "recovery" | undefined;
    if (!view) throw new Error(`unknown two-factor page: ${main.slice(0, 800)}`);
    return { kind: view, url, html, recoveryLink };
  }
  return { kind: "login", url, html };
}

/** Follows the redirects of `res` to the next page (or the relying party) and reads it. */
export async function next(browser: TestBrowser, res: Response, from: string): Promise<Step> {
  const { res: last, url } = await browser.follow(res, from, (u) => u.startsWith(RP_CALLBACK));
  if (url.startsWith(RP_CALLBACK)) return readStep(url, 302, "");
  return readStep(url, last.status, await last.text());
}

/** Posts the password form of the login page and returns the step it leads to. */
export async function signInWithPassword(page: LoginPage, email: string, password = PASSWORD): Promise<Step> {
  const res = await page.browser.post(page.interactionUrl, { csrf: csrfOf(page.html), email, password });
  if (res.status !== 302 && res.status !== 303) throw new Error(`password login answered ${res.status}: ${mainOf(await res.text()).slice(0, 800)}`);
  return next(page.browser, res, page.interactionUrl);
}

/** Where the page's form with the given intent posts to (its action attribute, resolved against the page URL). */
export function formAction(pageUrl: string, html: string, intent: string): string {
  const form = new RegExp(`<form[^>]*action="([^"]*)"[^>]*>(?:(?!</form>).)*name="intent" value="${intent}"`, "s").exec(mainOf(html));
  if (!form) throw new Error(`no form with intent ${intent} in the page`);
  return new URL(form[1]!.replace(/&amp;/g, "&"), pageUrl).href;
}

/** Submits a code on a two-factor page (the page's own form: csrf, intent, method, code). */
export async function submitCode(browser: TestBrowser, step: Step & { html: string }, code: string): Promise<{ res: Response; step?: Step }> {
  const method = /type="hidden" name="method" value="(totp|email|recovery)"/.exec(mainOf(step.html))?.[1];
  if (!method) throw new Error("the page has no code form");
  const res = await browser.post(formAction(step.url, step.html, "verify"), { csrf: csrfOf(step.html), intent: "verify", method, code });
  if (res.status >= 300 && res.status < 400) return { res, step: await next(browser, res, step.url) };
  return { res };
}

/** Chooses a method on the choice page. */
export async function choose(browser: TestBrowser, step: Step & { html: string }, method: "totp" | "email"): Promise<Step> {
  const res = await browser.post(step.url, { csrf: csrfOf(step.html), intent: "choose", method });
  if (res.status !== 302 && res.status !== 303) throw new Error(`choosing answered ${res.status}`);
  return next(browser, res, step.url);
}

/** Opens the recovery-code form from a two-factor page. */
export async function openRecovery(browser: TestBrowser, step: Step): Promise<Step> {
  const url = `${step.url.split("?")[0]}?method=recovery`;
  const res = await browser.get(url);
  return readStep(url, res.status, await res.text());
}

/** On the setup page: confirms with the code of the shown key, returns the recovery codes page's codes and the step after "continue". */
export async function completeSetup(browser: TestBrowser, step: Step & { kind: "setup" }): Promise<{ recoveryCodes: string[]; after: Step; secret: string }> {
  const secret = step.secret.replace(/\s+/g, "");
  const confirm = await browser.post(step.url, { csrf: csrfOf(step.html), intent: "confirm", code: currentTotpCode(secret) });
  const html = await confirm.text();
  if (confirm.status !== 200) throw new Error(`confirming answered ${confirm.status}: ${mainOf(html).slice(0, 800)}`);
  const recoveryCodes = [...mainOf(html).matchAll(/<li><code>([A-Z0-9]{4}-[A-Z0-9]{4})<\/code><\/li>/g)].map((m) => m[1]!);
  const cont = await browser.post(step.url, { csrf: csrfOf(html), intent: "continue" });
  if (cont.status !== 302 && cont.status !== 303) throw new Error(`continue answered ${cont.status}`);
  return { recoveryCodes, after: await next(browser, cont, step.url), secret };
}

/** From a step to the relying party, allowing consent when it is asked; returns the callback URL. */
export async function toCallback(browser: TestBrowser, step: Step): Promise<URL> {
  if (step.kind === "callback") return step.callback;
  if (step.kind !== "consent") throw new Error(`expected consent or the callback, got ${step.kind} at ${step.url}`);
  const res = await browser.post(`${step.url}/consent`, { csrf: csrfOf(step.html), decision: "allow" });
  const after = await next(browser, res, `${step.url}/consent`);
  if (after.kind !== "callback") throw new Error(`consent led to ${after.kind} at ${after.url}`);
  return after.callback;
}

/** Redeems the authorization code of a callback at the token endpoint, as the relying party does. */
export async function redeem(page: AuthorizationStart, callback: URL) {
  if (!callback.searchParams.get("code")) throw new Error(`no code at the callback: ${callback.href}`);
  return oidc.authorizationCodeGrant(page.config, callback, { pkceCodeVerifier: page.verifier });
}

// ---------------------------------------------------------------------------------------------
// Audit

export function auditEntries(porta: TestPorta, where: Prisma.AuditEntryWhereInput) {
  return porta.services.db.prisma.auditEntry.findMany({ where, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
}
