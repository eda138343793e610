import { readFileSync } from "node:fs";
import { expect, test, type Browser, type Page } from "@playwright/test";
import * as oidc from "openid-client";
import type english from "../public/locales/en/login.json";
import { watchForPageErrors } from "./console-helpers";
import { callbackAfter, checkPage, startAuthorization } from "./journey-helpers";
import { readSeed, type Seed } from "./seed";

/**
 * SAML sign-in (decision 081) in Debian Chromium: a person who exists only at their company's
 * SAML IdP (e2e/saml-idp.ts, samlify's signatures) signs in to the company's organization. The
 * first time from the login page's button: Porta sends an AuthnRequest, the IdP posts a signed
 * response to Porta's ACS, and the account is made on the way with the role the person's group
 * maps to. The second time on another device, by typing only the address (home-realm
 * discovery): the same account, linked by the IdP's NameID.
 */
type Messages = typeof english;
const en = JSON.parse(readFileSync(new URL("../public/locales/en/login.json", import.meta.url), "utf8")) as Messages;

let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

/** From the IdP's "Sign in as" to the relying party's tokens. */
async function throughIdp(page: Page, saml: NonNullable<Seed["saml"]>, rp: Awaited<ReturnType<typeof startAuthorization>>) {
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(saml.providerName);
  await page.getByRole("button", { name: `Sign in as ${saml.person.givenName} ${saml.person.familyName}` }).click();
  const callback = await callbackAfter(page, saml.rp.redirectUri, () => page.getByRole("button", { name: "Continue to the application" }).click());
  const tokens = await oidc.authorizationCodeGrant(rp.config, callback, { pkceCodeVerifier: rp.verifier, expectedState: rp.state });
  return tokens.claims()!;
}

async function onAnotherDevice<T>(browser: Browser, work: (page: Page) => Promise<T>): Promise<T> {
  const context = await browser.newContext({ locale: "en-US" });
  try {
    return await work(await context.newPage());
  } finally {
    await context.close();
  }
}

test("a company's SAML IdP signs a new person in with their group's role, and the second sign-in elsewhere finds the same account", async ({ browser }, testInfo) => {
  const saml = seed.saml!;
  const first = await onAnotherDevice(browser, async (page) => {
    const problems = watchForPageErrors(page);
    const rp = await startAuthorization(saml.rp, { scope: "openid email profile roles" });
    await page.goto(rp.url.href);
    await expect(page).toHaveURL(/\/interaction\//);
    const button = page.getByRole("button", { name: en.signIn.federated.replace("{{provider}}", saml.providerName) });
    await expect(button).toBeVisible();
    await checkPage(page, testInfo, "saml-1-login");
    await button.click();
    await expect(page).toHaveURL(/^http:\/\/127\.0\.0\.1:3964\/sso\?SAMLRequest=/);
    const claims = await throughIdp(page, saml, rp);
    expect(problems).toEqual([]);
    return claims;
  });
  expect(first.email).toBe(saml.person.email);
  expect(first.email_verified).toBe(true);
  expect(first.given_name).toBe(saml.person.givenName);
  expect(first.family_name).toBe(saml.person.familyName);
  expect(first.amr).toEqual(["fed"]);
  expect(first.roles).toEqual([saml.role]);

  const second = await onAnotherDevice(browser, async (page) => {
    const problems = watchForPageErrors(page);
    const rp = await startAuthorization(saml.rp, { scope: "openid email roles" });
    await page.goto(rp.url.href);
    await page.getByLabel(en.signIn.email, { exact: true }).fill(saml.person.email);
    await page.getByRole("button", { name: en.signIn.sso }).click();
    await expect(page).toHaveURL(/^http:\/\/127\.0\.0\.1:3964\/sso\?SAMLRequest=/);
    const claims = await throughIdp(page, saml, rp);
    expect(problems).toEqual([]);
    return claims;
  });
  expect(second.sub).toBe(first.sub);
  expect(second.roles).toEqual([saml.role]);
});
