import { writeFileSync } from "node:fs";
import AxeBuilder from "@axe-core/playwright";
import { expect, type BrowserContext, type Page, type TestInfo } from "@playwright/test";
import * as oidc from "openid-client";
import type { SeededOrganization } from "./seed";

/**
 * What the end-user journey specs share: a screenshot attached per state and an axe check
 * (no serious or critical findings), the relying party's authorization request, and its callback
 * answered in the browser (the relying party is not a real site).
 */

/** What the relying party knows of a seeded organization (the matrix's and the two-factor ones). */
type RelyingPartyOf = Pick<SeededOrganization, "issuer" | "clientId" | "clientSecret" | "redirectUri">;

/** A screenshot, then axe: no serious or critical finding. */
export async function checkPage(page: Page, testInfo: TestInfo, name: string, what = name) {
  await screenshot(page, testInfo, name);
  // Legacy mode runs axe in the page's own frames; the default mode opens a second page per check
  // to merge frame results, which made the checked journeys take 1.5–1.8 times as long (Porta's
  // pages have no cross-origin frames, the only case the default mode exists for).
  // e2e/axe-check.spec.ts proves that this mode still finds what it must.
  const results = await new AxeBuilder({ page }).setLegacyMode(true).analyze();
  // Every finding (of any impact) is kept beside the screenshots for review.
  writeFileSync(testInfo.outputPath(`axe-${name.replace(/\W+/g, "-")}.json`), JSON.stringify(results.violations, null, 2));
  const serious = results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(" ")) }));
  expect(serious, `serious or critical axe violations on ${what}`).toEqual([]);
}

/** A full-page screenshot, attached to the test's report (checkPage takes one too). */
export async function screenshot(page: Page, testInfo: TestInfo, name: string) {
  const shot = testInfo.outputPath(`${name}.png`);
  await page.screenshot({ path: shot, fullPage: true });
  await testInfo.attach(name, { path: shot, contentType: "image/png" });
}

/** On the context, so that every request of its pages (redirects included) is answered. */
export async function answerRelyingParty(context: BrowserContext) {
  await context.route("https://rp.example.test/**", (route) =>
    route.fulfill({ status: 200, contentType: "text/html", body: "<!doctype html><html lang=en><title>Relying party</title><h1>Back at the relying party</h1></html>" }),
  );
}

/** The relying party's view of the organization, as openid-client discovers it. */
export function discover(org: RelyingPartyOf) {
  return oidc.discovery(new URL(org.issuer), org.clientId, undefined, oidc.ClientSecretBasic(org.clientSecret), { execute: [oidc.allowInsecureRequests] });
}

/** Discovery, PKCE and state as openid-client does them; `extra` adds or overrides parameters (scope, ui_locales). */
export async function startAuthorization(org: RelyingPartyOf, extra: Record<string, string> = {}) {
  const config = await discover(org);
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: org.redirectUri,
    scope: "openid email",
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
    ...extra,
  });
  return { config, verifier, state, url };
}

/**
 * After the browser was sent to a relying party's callback on a host nobody answers: waits until
 * that navigation has ended on Chromium's own error page (or, were it answered, on the callback),
 * so that the next navigation is not interrupted by it. The page's committed URL is polled:
 * Playwright's waitForURL may instead reject with the network error (net::ERR_NAME_NOT_RESOLVED)
 * before the error page has replaced the document.
 */
/**
 * Does `action`, which ends with the browser sent to the relying party's callback, and returns the
 * URL it was sent to (with the code), read from the request itself: Chromium sometimes bypasses
 * the context's route for a redirect and ends on its error page, where page.url() no longer holds
 * the code (net::ERR_NAME_NOT_RESOLVED). Then waits until that navigation has ended.
 */
export async function callbackAfter(page: Page, redirectUri: string, action: () => Promise<unknown>): Promise<URL> {
  const sent = page.waitForRequest((request) => request.isNavigationRequest() && request.url().startsWith(redirectUri));
  await action();
  const callback = new URL((await sent).url());
  await settleOnCallback(page, redirectUri);
  return callback;
}

/**
 * page.goto for the first navigation after a callback was reached. Chromium can report the
 * callback's commit (a cross-site document, fulfilled by answerRelyingParty, with no script of its
 * own) after the page already showed its URL, or after the request was seen but before the page's
 * URL changed; the next goto is then "interrupted by another navigation" to that callback. With
 * `callback` (the relying party's redirect URI) the navigation to it is first waited for. Nothing
 * in Porta can start such a navigation once the callback was reached, so this one case (the
 * interrupting URL is the page's own, the callback's, or this one's again) waits for the late
 * commit and goes again, three times at most; any other interruption fails the test.
 */
export async function gotoAfterCallback(page: Page, url: string, callback?: string) {
  if (callback) await settleOnCallback(page, callback);
  const current = page.url();
  for (let attempt = 1; ; attempt++) {
    try {
      return await page.goto(url);
    } catch (error) {
      const message = error instanceof Error ? error.message : "";
      const interruptedBy = /interrupted by another navigation to "([^"]*)"/.exec(message)?.[1];
      // Also this very URL: Chromium started the same navigation again after the late commit; the
      // pages these tests open this way are GETs that show the same page when opened twice.
      const late = interruptedBy !== undefined && (interruptedBy === current || interruptedBy === url || (callback !== undefined && interruptedBy.startsWith(callback)));
      if (!late || attempt === 3) throw error;
      await page.waitForLoadState("load");
    }
  }
}

export async function settleOnCallback(page: Page, redirectUri: string) {
  const ended = () => page.url().startsWith("chrome-error:") || page.url().startsWith(redirectUri);
  await expect.poll(ended, { timeout: 15_000, message: `the navigation to ${redirectUri} ended` }).toBe(true);
  await page.waitForLoadState("load");
}
