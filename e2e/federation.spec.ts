import { readFileSync } from "node:fs";
import { expect, test } from "@playwright/test";
import * as oidc from "openid-client";
import type english from "../public/locales/en/login.json";
import { watchForPageErrors } from "./console-helpers";
import { checkPage, settleOnCallback, startAuthorization } from "./journey-helpers";
import { readSeed, type Seed } from "./seed";

/**
 * Federation (decision 046): one enterprise single sign-on in Debian Chromium. A person of a company whose email
 * domain an upstream identity provider claims types only their address at the application's
 * organization, is sent to the company's provider (another Porta organization, real pages and
 * tokens), signs in there, and comes back signed in: their account is created on the way, the
 * relying party's ID token says how (amr fed). axe on every page on the way.
 */
type Messages = typeof english;
const en = JSON.parse(readFileSync(new URL("../public/locales/en/login.json", import.meta.url), "utf8")) as Messages;

let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

test("home-realm discovery: the company address goes to the company's provider and back, signed in", async ({ browser }, testInfo) => {
  const sso = seed.federation!;
  const context = await browser.newContext({ locale: "en-US" });
  const page = await context.newPage();
  const problems = watchForPageErrors(page);
  try {
    const rp = await startAuthorization(sso.rp);
    await page.goto(rp.url.href);
    await expect(page).toHaveURL(/\/interaction\//);
    await expect(page.getByRole("button", { name: en.signIn.federated.replace("{{provider}}", sso.providerName) })).toBeVisible();
    await checkPage(page, testInfo, "federation-1-login");

    // Only the address: "Continue with single sign-on" finds the provider that claims its domain.
    await page.getByLabel(en.signIn.email, { exact: true }).fill(sso.user.email);
    await page.getByRole("button", { name: en.signIn.sso }).click();
    await expect(page).toHaveURL(new RegExp(`/interaction/[^/]+$`));
    await expect(page.getByRole("heading", { level: 1 })).toContainText("Corp Identity");
    // The upstream's page got the address as login_hint.
    await expect(page.getByLabel(en.signIn.email, { exact: true })).toHaveValue(sso.user.email);
    await checkPage(page, testInfo, "federation-2-upstream-login");

    await page.getByLabel(en.signIn.password, { exact: true }).fill(sso.user.password);
    const callback = page.waitForRequest((r) => r.url().startsWith(sso.rp.redirectUri));
    await page.getByRole("button", { name: en.signIn.submit, exact: true }).click();
    const tokens = await oidc.authorizationCodeGrant(rp.config, new URL((await callback).url()), { pkceCodeVerifier: rp.verifier, expectedState: rp.state });
    await settleOnCallback(page, sso.rp.redirectUri);
    const claims = tokens.claims()!;
    expect(claims.amr).toEqual(["fed"]);
    expect(claims.sub).not.toBe(sso.user.id);
    const info = await oidc.fetchUserInfo(rp.config, tokens.access_token, claims.sub);
    expect(info.email).toBe(sso.user.email);
    expect(problems).toEqual([]);
  } finally {
    await context.close();
  }
});
