import { readFileSync } from "node:fs";
import { expect, test, type Page } from "@playwright/test";
import type english from "../public/locales/en/login.json";
import { watchForPageErrors } from "./console-helpers";
import { authjs, expressOpenidConnect, oidcClientTs, passportOpenidConnect, type RelyingParty } from "./interop/relying-parties";
import { readSeed, type Seed } from "./seed";

/**
 * Off-the-shelf relying parties from npm, each configured as its README says plus only what
 * docs/integrations.md gives for it, sign a person in through Porta's real pages, refresh where
 * the library does it, and sign out. A library release or a change of Porta that breaks one of
 * them fails here.
 */
const en = JSON.parse(readFileSync(new URL("../public/locales/en/login.json", import.meta.url), "utf8")) as typeof english;

let interop: NonNullable<Seed["interop"]>;
test.beforeAll(async () => {
  const seed = await readSeed();
  interop = seed.interop!;
});

/** The person signs in on Porta's page and, when the client is not first party, allows on the consent page. */
async function signInAtPorta(page: Page, consent: boolean) {
  await expect(page.getByLabel(en.signIn.email, { exact: true })).toBeVisible();
  expect(page.url().startsWith(interop.issuer.replace(/\/[^/]+$/, ""))).toBe(true);
  await page.getByLabel(en.signIn.email, { exact: true }).fill(interop.user.email);
  await page.getByLabel(en.signIn.password, { exact: true }).fill(interop.user.password);
  await page.getByRole("button", { name: en.signIn.submit }).click();
  if (consent) await page.getByRole("button", { name: en.consent.allow }).click();
}

async function withRelyingParty(start: () => Promise<RelyingParty>, use: (rp: RelyingParty) => Promise<void>) {
  const rp = await start();
  try {
    await use(rp);
  } finally {
    await rp.close();
  }
}

const signedIn = () => `signed in as ${interop.user.email}`;

test("express-openid-connect: signs in with ES256 and the code flow, refreshes and signs out at Porta", async ({ browser }) => {
  await withRelyingParty(
    () => expressOpenidConnect(interop),
    async (rp) => {
      const context = await browser.newContext();
      const page = await context.newPage();
      const problems = watchForPageErrors(page);
      await page.goto(`${rp.url}/login`);
      await signInAtPorta(page, true);
      await expect(page.locator("main")).toHaveText(signedIn());
      await page.goto(`${rp.url}/refresh`);
      await expect(page.locator("main")).toHaveText("refreshed");
      // Its /logout ends the session at Porta (id_token_hint and post_logout_redirect_uri) and comes back.
      await page.goto(`${rp.url}/logout`);
      await expect(page.locator("main")).toHaveText("signed out");
      await page.goto(`${rp.url}/login`);
      await expect(page.getByLabel(en.signIn.email, { exact: true })).toBeVisible();
      expect(problems).toEqual([]);
      await context.close();
    },
  );
});

test("Auth.js (@auth/express): signs in through its own sign-in page and signs out", async ({ browser }) => {
  await withRelyingParty(
    () => authjs(interop),
    async (rp) => {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${rp.url}/auth/signin`);
      await page.getByRole("button", { name: "Sign in with Porta" }).click();
      await signInAtPorta(page, true);
      await page.goto(rp.url);
      await expect(page.locator("main")).toHaveText(signedIn());
      await page.goto(`${rp.url}/auth/signout`);
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.goto(rp.url);
      await expect(page.locator("main")).toHaveText("signed out");
      await context.close();
    },
  );
});

test("oidc-client-ts in Chromium: a public client signs in with PKCE, refreshes without a frame and signs out at Porta", async ({ browser }) => {
  await withRelyingParty(
    () => oidcClientTs(interop),
    async (rp) => {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(rp.url);
      await expect(page.locator("#status")).toHaveText("signed out");
      await page.getByRole("button", { name: "Sign in" }).click();
      await signInAtPorta(page, true);
      await page.waitForURL(`${rp.url}/`);
      await expect(page.locator("#status")).toHaveText(signedIn());
      // The token endpoint answers the page's own origin (CORS): the refresh token is used from the browser.
      await page.getByRole("button", { name: "Refresh" }).click();
      await expect(page.locator("#status")).toHaveText("refreshed");
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.waitForURL(`${rp.url}/`);
      await expect(page.locator("#status")).toHaveText("signed out");
      await context.close();
    },
  );
});

test("passport-openidconnect: a confidential client without PKCE (its setting not_required) signs in and out", async ({ browser }) => {
  await withRelyingParty(
    () => passportOpenidConnect(interop),
    async (rp) => {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${rp.url}/login`);
      await signInAtPorta(page, true);
      await expect(page.locator("main")).toHaveText(signedIn());
      await page.goto(`${rp.url}/logout`);
      await expect(page.locator("main")).toHaveText("signed out");
      await context.close();
    },
  );
});
