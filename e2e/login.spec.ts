import { readFileSync } from "node:fs";
import { expect, test, type Page } from "@playwright/test";
import * as oidc from "openid-client";
import type english from "../public/locales/en/login.json";
import { watchForPageErrors } from "./console-helpers";
import { answerRelyingParty, callbackAfter, checkPage, screenshot, startAuthorization } from "./journey-helpers";
import { readSeed, type MatrixRow, type Seed, type SeededOrganization } from "./seed";

type Messages = typeof english;

/**
 * What a person does in Chromium: open the authorization URL a relying party built, see the
 * controls of the organization's login methods, sign in, allow consent, and land on the
 * redirect_uri with a code that the relying party redeems. Every page is screenshotted into
 * test-results/ and the login and consent pages are checked with axe.
 */
// Read as files: Playwright's ESM loader does not take JSON imports without an import attribute.
const messages = (language: "en" | "de") =>
  JSON.parse(readFileSync(new URL(`../public/locales/${language}/login.json`, import.meta.url), "utf8")) as Messages;
const en = messages("en");
const de = messages("de");

let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

const organization = (row: MatrixRow): SeededOrganization => {
  const found = seed.organizations.find((o) => o.row === row);
  if (!found) throw new Error(`no seeded organization for ${row}`);
  return found;
};

/** The visible controls of the login page: input names, button labels, link labels. */
async function controlsOf(page: Page) {
  const main = page.locator("main");
  return {
    inputs: await main.locator("input:not([type=hidden])").evaluateAll((nodes) => nodes.map((n) => (n as HTMLInputElement).name)),
    buttons: (await main.getByRole("button").allInnerTexts()).map((t) => t.trim()),
    links: (await main.getByRole("link").allInnerTexts()).map((t) => t.trim()),
  };
}

const EXPECTED_CONTROLS: Record<MatrixRow, Awaited<ReturnType<typeof controlsOf>>> = {
  "password+magic_link": { inputs: ["email", "password"], buttons: [en.signIn.submit, en.signIn.magicLink], links: [en.signIn.forgotPassword] },
  password: { inputs: ["email", "password"], buttons: [en.signIn.submit], links: [en.signIn.forgotPassword] },
  magic_link: { inputs: ["email"], buttons: [en.signIn.magicLink], links: [] },
};

for (const row of ["password+magic_link", "password"] as const) {
  test(`[${row}] sign in with the password, allow consent, land on the redirect_uri with a code`, async ({ page }, testInfo) => {
    const org = organization(row);
    const problems = watchForPageErrors(page);
    await answerRelyingParty(page.context());
    const rp = await startAuthorization(org, { scope: "openid profile email" });

    await page.goto(rp.url.href);
    await expect(page).toHaveURL(/\/interaction\/[^/?]+$/);
    await expect(page.locator("html")).toHaveAttribute("lang", "en");
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(en.signIn.title.replace("{{organization}}", org.name));
    expect(await controlsOf(page)).toEqual(EXPECTED_CONTROLS[row]);
    await expect(page.getByLabel(en.signIn.email, { exact: true })).toBeFocused();
    await checkPage(page, testInfo, `${row}-1-login`);

    // A wrong password first: the generic failure is announced, the email kept, the password empty.
    await page.getByLabel(en.signIn.email, { exact: true }).fill(org.user.email);
    await page.getByLabel(en.signIn.password, { exact: true }).fill("not the password 0");
    await page.getByRole("button", { name: en.signIn.submit }).click();
    await expect(page.getByRole("alert")).toHaveText(en.signIn.failed);
    await expect(page.getByLabel(en.signIn.email, { exact: true })).toHaveValue(org.user.email);
    await expect(page.getByLabel(en.signIn.password, { exact: true })).toHaveValue("");
    await expect(page.getByLabel(en.signIn.password, { exact: true })).toBeFocused();
    await checkPage(page, testInfo, `${row}-1b-login-failed`);

    await page.getByLabel(en.signIn.password, { exact: true }).fill(org.user.password);
    await page.getByRole("button", { name: en.signIn.submit }).click();

    // Consent, on a new interaction of the same browser session.
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(en.consent.title.replace("{{client}}", "Test client"));
    await expect(page).toHaveURL(/\/interaction\/[^/?]+$/);
    await expect(page.getByText(org.user.email)).toBeVisible();
    await checkPage(page, testInfo, `${row}-2-consent`);

    const callback = await callbackAfter(page, org.redirectUri, () => page.getByRole("button", { name: en.consent.allow }).click());
    await screenshot(page, testInfo, `${row}-3-callback`);
    expect(callback.searchParams.get("code")).toBeTruthy();
    expect(callback.searchParams.get("state")).toBe(rp.state);
    expect(callback.searchParams.get("iss")).toBe(org.issuer);

    // The relying party redeems the code.
    const tokens = await oidc.authorizationCodeGrant(rp.config, callback, { pkceCodeVerifier: rp.verifier, expectedState: rp.state });
    expect(tokens.claims()?.sub).toBe(org.user.id);
    expect(tokens.claims()?.email).toBe(org.user.email);
    expect(problems).toEqual([]);
  });
}

test("[magic_link] the page offers only an email field and the sign-in link button; submitting answers", async ({ page }, testInfo) => {
  const org = organization("magic_link");
  const problems = watchForPageErrors(page);
  await answerRelyingParty(page.context());
  const rp = await startAuthorization(org, { scope: "openid profile email" });

  await page.goto(rp.url.href);
  await expect(page).toHaveURL(/\/interaction\/[^/?]+$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(en.signIn.title.replace("{{organization}}", org.name));
  expect(await controlsOf(page)).toEqual(EXPECTED_CONTROLS.magic_link);
  await expect(page.getByLabel(en.signIn.password, { exact: true })).toHaveCount(0);
  await checkPage(page, testInfo, "magic_link-1-login");

  await page.getByLabel(en.signIn.email, { exact: true }).fill(org.user.email);
  await page.getByRole("button", { name: en.signIn.magicLink }).click();
  await expect(page).toHaveURL(/\/interaction\/[^/?]+\/magic-link$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(en.magicLink.title);
  await expect(page.getByRole("link", { name: en.forgot.back })).toBeVisible();
  await screenshot(page, testInfo, "magic_link-2-after-submit");
  expect(problems).toEqual([]);
});

test.describe("in a German browser", () => {
  test.use({ locale: "de-DE" });

  test("[password+magic_link] the login page is German", async ({ page }, testInfo) => {
    const org = organization("password+magic_link");
    const rp = await startAuthorization(org, { scope: "openid profile email" });
    await page.goto(rp.url.href);
    await expect(page.locator("html")).toHaveAttribute("lang", "de");
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(de.signIn.title.replace("{{organization}}", org.name));
    await expect(page.getByRole("button", { name: de.signIn.submit })).toBeVisible();
    await expect(page.getByRole("link", { name: de.signIn.forgotPassword })).toBeVisible();
    await checkPage(page, testInfo, "password+magic_link-de-login");
  });
});
