import type { Prisma } from "~/generated/prisma/client";
import { ACCOUNT_CLIENT_ID } from "~/.server/oidc/storage/account-client";
import { accountSessionsKey } from "~/.server/oidc/storage/sessions";
import { csrfOf, TestBrowser } from "../support/browser";
import { createUser } from "../support/factories";
import type { TestPorta } from "../support/porta";
import { mainOf } from "../login/helpers";
import { formAction } from "../two-factor/helpers";

/**
 * The account page walked as a browser walks it: `/{slug}/account` sends a signed-out person to
 * the organization's sign-in (client `porta-account`), the password page signs in, the callback
 * returns to the account page. No consent page on the way: the account page is the organization's own.
 */
export const PASSWORD = "a long test password 1";

export interface AccountTenant {
  org: { id: string; slug: string; name: string };
  accountUrl: string;
}

export async function createAccountTenant(porta: TestPorta, data: Partial<Prisma.OrganizationCreateInput> = {}): Promise<AccountTenant> {
  const slug = `acct-${Math.random().toString(16).slice(2, 10)}`;
  const org = await porta.services.db.prisma.organization.create({ data: { slug, name: `Organization ${slug}`, defaultLoginMethods: ["password", "magic_link"], ...data } });
  return { org, accountUrl: `${porta.baseUrl}/${org.slug}/account` };
}

export async function createAccountUser(porta: TestPorta, tenant: AccountTenant, email = `person-${Math.random().toString(16).slice(2, 10)}@example.com`) {
  return createUser(porta.services.db.prisma, tenant.org.id, { email, password: PASSWORD });
}

export interface SignedInPage {
  browser: TestBrowser;
  html: string;
  csrf: string;
}

/** From the account URL through the password page and back; returns the account page as shown. */
export async function signInToAccount(tenant: AccountTenant, email: string, password = PASSWORD, browser = new TestBrowser({ "user-agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0 Safari/537.36" })): Promise<SignedInPage> {
  const first = await browser.get(tenant.accountUrl);
  if (first.status !== 302) throw new Error(`account page answered ${first.status} to a signed-out browser`);
  const authorize = new URL(first.headers.get("location")!);
  if (authorize.searchParams.get("client_id") !== ACCOUNT_CLIENT_ID) throw new Error(`not the account client: ${authorize.href}`);
  return completeSignIn(browser, tenant, await browser.get(authorize.href), authorize.href, email, password);
}

/** Signs in at the login page the authorization `res` leads to, then follows back to the account page. */
export async function completeSignIn(browser: TestBrowser, tenant: AccountTenant, res: Response, from: string, email: string, password = PASSWORD): Promise<SignedInPage> {
  if (res.status !== 303) throw new Error(`authorize answered ${res.status}: ${await res.text()}`);
  const interactionUrl = new URL(res.headers.get("location")!, from).href;
  const login = await browser.get(interactionUrl);
  const posted = await browser.post(interactionUrl, { csrf: csrfOf(await login.text()), email, password });
  const landed = await browser.follow(posted, interactionUrl);
  if (landed.url !== tenant.accountUrl || landed.res.status !== 200) throw new Error(`sign-in ended at ${landed.url} (${landed.res.status}) after ${posted.status}: ${shown(await landed.res.text()).slice(0, 600)}`);
  const html = await landed.res.text();
  return { browser, html, csrf: csrfOf(html) };
}

export async function openAccount(tenant: AccountTenant, browser: TestBrowser): Promise<SignedInPage> {
  const res = await browser.get(tenant.accountUrl);
  if (res.status !== 200) throw new Error(`account page answered ${res.status}`);
  const html = await res.text();
  return { browser, html, csrf: csrfOf(html) };
}

/** Posts one of the account page's forms with the page's CSRF token (unless one is given). */
export function postAccount(tenant: AccountTenant, page: SignedInPage, form: Record<string, string>, path = "") {
  return page.browser.post(`${tenant.accountUrl}${path}`, { csrf: page.csrf, ...form });
}

/** Makes every session of the user look signed in `secondsAgo` ago: the step-up tests' clock. */
export async function ageSignIns(porta: TestPorta, tenant: AccountTenant, userId: string, secondsAgo: number): Promise<void> {
  const { store } = porta.services;
  for (const key of await store.setMembers(accountSessionsKey(tenant.org.id, userId))) {
    const text = await store.get(key);
    if (!text) continue;
    const session = JSON.parse(text) as { loginTs?: number };
    await store.replace(key, JSON.stringify({ ...session, loginTs: Math.floor(Date.now() / 1000) - secondsAgo }));
  }
}

export const shown = (html: string) => mainOf(html).replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");

/** Signs in where the organization asks for a second factor after the password: `code` gives the code the page asks for. */
export async function signInWithSecondFactor(tenant: AccountTenant, email: string, code: (method: string) => Promise<string>, browser = new TestBrowser()): Promise<SignedInPage> {
  const first = await browser.get(tenant.accountUrl);
  const authorizeUrl = first.headers.get("location")!;
  const authorize = await browser.get(authorizeUrl);
  const interactionUrl = new URL(authorize.headers.get("location")!, authorizeUrl).href;
  const login = await browser.get(interactionUrl);
  const posted = await browser.post(interactionUrl, { csrf: csrfOf(await login.text()), email, password: PASSWORD });
  const step = await browser.follow(posted, interactionUrl);
  const stepHtml = await step.res.text();
  const method = /type="hidden" name="method" value="(totp|email)"/.exec(mainOf(stepHtml))?.[1];
  if (!method) throw new Error(`expected a second-factor page at ${step.url}: ${shown(stepHtml).slice(0, 400)}`);
  const verified = await browser.post(formAction(step.url, stepHtml, "verify"), { csrf: csrfOf(stepHtml), intent: "verify", method, code: await code(method) });
  const landed = await browser.follow(verified, step.url);
  if (landed.url !== tenant.accountUrl) throw new Error(`second-factor sign-in ended at ${landed.url} (${landed.res.status})`);
  const html = await landed.res.text();
  return { browser, html, csrf: csrfOf(html) };
}
