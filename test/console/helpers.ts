import { expect } from "vitest";
import { TestBrowser, csrfOf } from "../support/browser";
import { createUser } from "../support/factories";
import { TEST_ADMIN, type TestPorta } from "../support/porta";

/**
 * A person in front of the console: a cookie jar that signs in through the real redirect to the
 * super-admin organization's login page and back through /api/oidc/callback.
 */
export interface ConsoleVisit {
  browser: TestBrowser;
  /** The last response of the sign-in (the page it landed on). */
  landed: { res: Response; url: string };
  /** Set-Cookie lines the callback answered with. */
  callbackCookies: string[];
}

export async function consoleSignIn(porta: TestPorta, credentials: { email: string; password: string } = TEST_ADMIN, path = "/console", headers: Record<string, string> = {}): Promise<ConsoleVisit> {
  const browser = new TestBrowser(headers);
  const start = await browser.get(`${porta.baseUrl}${path}`);
  expect(start.status).toBe(302);
  const authorize = await browser.follow(start, `${porta.baseUrl}${path}`, (u) => u.includes("/interaction/"));
  const loginUrl = authorize.url;
  expect(loginUrl).toContain("/interaction/");
  const page = await browser.get(loginUrl);
  const posted = await browser.post(loginUrl, { csrf: csrfOf(await page.text()), email: credentials.email, password: credentials.password });
  expect([302, 303]).toContain(posted.status);
  const atCallback = await browser.follow(posted, loginUrl, (u) => u.includes("/api/oidc/callback"));
  expect(atCallback.url).toContain("/api/oidc/callback");
  const callback = await browser.get(atCallback.url);
  const callbackCookies = callback.headers.getSetCookie();
  const landed = await browser.follow(callback, atCallback.url);
  return { browser, landed, callbackCookies };
}

/** The page's HTML and its CSRF token (console forms carry `name="csrf"`). */
export async function pageWithCsrf(browser: TestBrowser, url: string) {
  const res = await browser.get(url);
  const html = await res.text();
  return { res, html, csrf: csrfOf(html) };
}

export function cookieNamed(lines: string[], name: string): string | undefined {
  return lines.find((l) => l.startsWith(`${name}=`));
}

/** Another service-admin of the super-admin organization (a second person at the console). */
export async function createServiceAdmin(porta: TestPorta, credentials: { email: string; password: string }) {
  const prisma = porta.services.db.prisma;
  const role = await prisma.role.findFirstOrThrow({ where: { organizationId: porta.bootstrap.organizationId, name: "service-admin" } });
  const user = await createUser(prisma, porta.bootstrap.organizationId, credentials);
  await prisma.userRole.create({ data: { userId: user.id, roleId: role.id } });
  return user;
}

/** A 1×1 PNG, the smallest logo the branding upload takes. */
export const TINY_PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");

/** Uploads a logo through the branding page's multipart form, as the browser posts it. */
export function uploadLogo(visit: ConsoleVisit, url: string, csrf: string) {
  const form = new FormData();
  form.set("csrf", csrf);
  form.set("intent", "upload");
  form.set("kind", "logo");
  form.set("file", new Blob([TINY_PNG], { type: "image/png" }), "logo.png");
  return fetch(url, { method: "POST", body: form, redirect: "manual", headers: { cookie: visit.browser.cookieHeader(url) } });
}
