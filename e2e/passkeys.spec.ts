import { readFileSync } from "node:fs";
import { expect, test, type Page, type TestInfo } from "@playwright/test";
import * as oidc from "openid-client";
import type english from "../public/locales/en/login.json";
import { watchForPageErrors } from "./console-helpers";
import { checkPage, settleOnCallback, startAuthorization } from "./journey-helpers";
import { readSeed, type Seed } from "./seed";

/**
 * Passkeys (decision 041) in Debian Chromium with a CDP virtual authenticator (ctap2, internal,
 * resident keys, user verification). A person registers a passkey on the account page, signs
 * out, and signs in at a client whose only method is `passkey` without typing a password; the
 * relying party's ID token says how (amr). A client without the method refuses its endpoint;
 * a removed passkey no longer signs in. axe and screenshots at 1280 and 390 px.
 */
type Messages = typeof english;
const en = JSON.parse(readFileSync(new URL("../public/locales/en/login.json", import.meta.url), "utf8")) as Messages;
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 720 };

let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

async function checkBoth(page: Page, testInfo: TestInfo, name: string) {
  await page.setViewportSize(DESKTOP);
  await checkPage(page, testInfo, name);
  await page.setViewportSize(PHONE);
  await checkPage(page, testInfo, `${name}-390`);
  await page.setViewportSize(DESKTOP);
}

test("a person registers a passkey on the account page, signs out, and signs in with the passkey alone", async ({ browser }, testInfo) => {
  const pk = seed.passkeys!;
  const accountUrl = `/${pk.slug}/account`;
  const context = await browser.newContext({ locale: "en-US", viewport: DESKTOP });
  const page = await context.newPage();
  const problems = watchForPageErrors(page);
  const cdp = await context.newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  try {
    // The account page, signed in with the password (the organization offers both methods).
    await page.goto(accountUrl);
    await expect(page).toHaveURL(/\/interaction\//);
    await expect(page.getByRole("button", { name: en.signIn.passkey })).toBeEnabled();
    await checkBoth(page, testInfo, "passkey-1-login-both-methods");
    await page.getByLabel(en.signIn.email, { exact: true }).fill(pk.user.email);
    await page.getByLabel(en.signIn.password, { exact: true }).fill(pk.user.password);
    await page.getByRole("button", { name: en.signIn.submit, exact: true }).click();
    await expect(page).toHaveURL(new RegExp(`${accountUrl}$`));
    const section = page.locator("#passkeys");
    await expect(section.getByRole("heading", { level: 2 })).toHaveText(en.account.passkeys.title);
    await expect(section.getByText(en.account.passkeys.none)).toBeVisible();
    await checkBoth(page, testInfo, "passkey-2-account-none");

    // Register, named.
    await section.getByLabel(en.passkey.name).fill("E2E laptop");
    await section.getByRole("button", { name: en.passkey.add }).click();
    await expect(page.getByRole("status")).toHaveText(en.account.passkeys.added);
    await expect(section.getByText("E2E laptop", { exact: true })).toBeVisible();
    await expect(section.getByText(en.account.passkeys.neverUsed, { exact: false })).toBeVisible();
    const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]!.isResidentCredential).toBe(true);
    await checkBoth(page, testInfo, "passkey-3-account-registered");

    // Sign out.
    await page.getByRole("link", { name: en.account.signOut }).click();
    const confirm = page.getByRole("button", { name: /sign out|yes/i });
    if (await confirm.count()) await confirm.first().click();
    await expect(page).toHaveURL(new RegExp(`${accountUrl}/signed-out$`));

    // A client whose only method is the passkey: no email, no password on the page.
    const rp = await startAuthorization(pk.passkeyOnly);
    await page.goto(rp.url.href);
    await expect(page).toHaveURL(/\/interaction\//);
    await expect(page.getByLabel(en.signIn.password, { exact: true })).toHaveCount(0);
    await expect(page.getByLabel(en.signIn.email, { exact: true })).toHaveCount(0);
    await expect(page.getByRole("button", { name: en.signIn.passkey })).toBeEnabled();
    await checkBoth(page, testInfo, "passkey-4-login-passkey-only");
    // The relying party's callback is read from the request itself: with a CDP session of its
    // own on the page, Chromium does not let Playwright's routing answer that host.
    const callback = page.waitForRequest((r) => r.url().startsWith(pk.passkeyOnly.redirectUri));
    await page.getByRole("button", { name: en.signIn.passkey }).click();
    const tokens = await oidc.authorizationCodeGrant(rp.config, new URL((await callback).url()), { pkceCodeVerifier: rp.verifier, expectedState: rp.state });
    // The browser then shows its own error page for the unanswered host: the next navigation
    // starts after that one has landed, or it is interrupted by it.
    await settleOnCallback(page, pk.passkeyOnly.redirectUri);
    const claims = tokens.claims()!;
    expect(claims.sub).toBe(pk.user.id);
    expect(claims.amr).toEqual(["hwk", "user"]);

    // A client without the method: no button, and its endpoint answers 403.
    const other = await startAuthorization(pk.passwordOnly, { prompt: "login" });
    await page.goto(other.url.href);
    await expect(page).toHaveURL(/\/interaction\//);
    await expect(page.getByRole("button", { name: en.signIn.passkey })).toHaveCount(0);
    const refused = await page.request.post(`${new URL(page.url()).pathname}/passkey`, { form: { intent: "options" } });
    expect(refused.status()).toBe(403);

    // Removed on the account page (the passkey sign-in is recent), it no longer signs in.
    await page.goto(accountUrl);
    await expect(page).toHaveURL(new RegExp(`${accountUrl}$`));
    await section.getByRole("button", { name: en.account.passkeys.removeNamed.replace("{{name}}", "E2E laptop") }).click();
    await expect(page.getByRole("status")).toHaveText(en.account.passkeys.removed);
    await expect(section.getByText(en.account.passkeys.none)).toBeVisible();
    const again = await startAuthorization(pk.passkeyOnly, { prompt: "login" });
    await page.goto(again.url.href);
    await page.getByRole("button", { name: en.signIn.passkey }).click();
    await expect(page.getByRole("alert")).toHaveText(en.passkey.problem.failed);
    await checkBoth(page, testInfo, "passkey-5-removed-refused");
    expect(problems).toEqual([]);
  } finally {
    await context.close();
  }
});

test("required_passkey: the first sign-in registers a passkey at the step, the next one asks for it after the password", async ({ browser }, testInfo) => {
  const { slug, user } = seed.passkeys!.secondFactor;
  const accountUrl = `/${slug}/account`;
  const context = await browser.newContext({ locale: "en-US", viewport: DESKTOP });
  const page = await context.newPage();
  const problems = watchForPageErrors(page);
  const cdp = await context.newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  const signInWithPassword = async () => {
    await expect(page).toHaveURL(/\/interaction\//);
    await page.getByLabel(en.signIn.email, { exact: true }).fill(user.email);
    await page.getByLabel(en.signIn.password, { exact: true }).fill(user.password);
    await page.getByRole("button", { name: en.signIn.submit, exact: true }).click();
    await expect(page).toHaveURL(/\/two-factor$/);
  };
  try {
    await page.goto(accountUrl);
    await signInWithPassword();
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(en.twoFactor.passkeySetupTitle);
    await checkBoth(page, testInfo, "passkey-2fa-1-register-at-step");
    await page.getByLabel(en.passkey.name).fill("Step key");
    await page.getByRole("button", { name: en.passkey.add }).click();
    await expect(page).toHaveURL(new RegExp(`${accountUrl}$`));
    await expect(page.locator("#passkeys").getByText("Step key", { exact: true })).toBeVisible();
    await expect(page.getByText(en.account.twoFactor.policy_required_passkey)).toBeVisible();

    await page.getByRole("link", { name: en.account.signOut }).click();
    const confirm = page.getByRole("button", { name: /sign out|yes/i });
    if (await confirm.count()) await confirm.first().click();
    await expect(page).toHaveURL(new RegExp(`${accountUrl}/signed-out$`));

    await page.goto(accountUrl);
    await signInWithPassword();
    await expect(page.getByText(en.twoFactor.passkeyIntro)).toBeVisible();
    await checkBoth(page, testInfo, "passkey-2fa-2-use-at-step");
    await page.getByRole("button", { name: en.twoFactor.usePasskey }).click();
    await expect(page).toHaveURL(new RegExp(`${accountUrl}$`));
    await expect(page.locator("#passkeys").getByText(en.account.passkeys.lastUsed.replace(" {{date}}", ""), { exact: false })).toBeVisible();
    expect(problems).toEqual([]);
  } finally {
    await context.close();
  }
});
