import { readFileSync } from "node:fs";
import { expect, test, type Page, type TestInfo } from "@playwright/test";
import * as oidc from "openid-client";
import { Secret, TOTP } from "otpauth";
import type english from "../public/locales/en/login.json";
import { watchForPageErrors } from "./console-helpers";
import { readMailbox } from "./mail-peer";
import { answerRelyingParty, callbackAfter, discover, gotoAfterCallback, screenshot, startAuthorization } from "./journey-helpers";
import { readSeed, type Seed, type SeededTwoFactorOrganization } from "./seed";

/**
 * Two-factor sign-in as a person does it in Chromium. In an organization that requires an
 * authenticator app: enroll by reading the key off the setup page into an app (otpauth here),
 * keep the recovery codes shown, finish; sign out; sign in with the app; sign out; sign in with
 * a recovery code; and find that code refused the next time. In an organization that requires
 * emailed codes: sign in with the code the SMTP peer received. Every page is screenshotted.
 */
const en = JSON.parse(readFileSync(new URL("../public/locales/en/login.json", import.meta.url), "utf8")) as typeof english;
const t2 = en.twoFactor;

let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

const organization = (policy: SeededTwoFactorOrganization["policy"]): SeededTwoFactorOrganization => {
  const found = seed.twoFactor?.find((o) => o.policy === policy);
  if (!found) throw new Error(`no seeded organization with policy ${policy}`);
  return found;
};

/** The person's authenticator app: RFC 6238, SHA-1, six digits, 30 seconds. */
function authenticator(base32: string) {
  const totp = new TOTP({ algorithm: "SHA1", digits: 6, period: 30, secret: Secret.fromBase32(base32) });
  return { code: (at = Date.now()) => totp.generate({ timestamp: at }) };
}

/** Opens the relying party's authorization URL and signs in with the password on the login page. */
async function signInWithPassword(page: Page, testInfo: TestInfo, org: SeededTwoFactorOrganization, shot: string) {
  const rp = await startAuthorization(org, { scope: "openid profile email" });
  await page.goto(rp.url.href);
  await expect(page).toHaveURL(/\/interaction\/[^/?]+$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(en.signIn.title.replace("{{organization}}", org.name));
  await screenshot(page, testInfo, `${shot}-login`);
  await page.getByLabel(en.signIn.email, { exact: true }).fill(org.user.email);
  await page.getByLabel(en.signIn.password, { exact: true }).fill(org.user.password);
  await page.getByRole("button", { name: en.signIn.submit }).click();
  return rp;
}

/** After the last factor: allows consent if it is asked, lands on the redirect_uri, and redeems the code. */
async function finishAtRelyingParty(page: Page, testInfo: TestInfo, org: SeededTwoFactorOrganization, rp: Awaited<ReturnType<typeof startAuthorization>>, shot: string) {
  await page.waitForURL((url) => url.href.startsWith(org.redirectUri) || /^\/interaction\/[^/]+$/.test(url.pathname));
  let callback: URL;
  if (page.url().startsWith(org.redirectUri)) {
    callback = new URL(page.url());
  } else {
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(en.consent.title.replace("{{client}}", "Test client"));
    await screenshot(page, testInfo, `${shot}-consent`);
    callback = await callbackAfter(page, org.redirectUri, () => page.getByRole("button", { name: en.consent.allow }).click());
  }
  await screenshot(page, testInfo, `${shot}-callback`);
  expect(callback.searchParams.get("code")).toBeTruthy();
  const tokens = await oidc.authorizationCodeGrant(rp.config, callback, { pkceCodeVerifier: rp.verifier, expectedState: rp.state });
  expect(tokens.claims()?.sub).toBe(org.user.id);
  return tokens;
}

/**
 * RP-initiated logout: /{slug}/session/end with this sign-in's ID token and a registered
 * post-logout URI signs out without a question, straight back at the relying party.
 */
async function signOut(page: Page, testInfo: TestInfo, org: SeededTwoFactorOrganization, idToken: string, shot: string) {
  const config = await discover(org);
  const url = oidc.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: org.postLogoutRedirectUri });
  expect(url.pathname).toBe(`/${org.slug}/session/end`);
  await gotoAfterCallback(page, url.href, org.redirectUri);
  await page.waitForURL((u) => u.href.startsWith(org.postLogoutRedirectUri));
  await screenshot(page, testInfo, `${shot}-signed-out`);
}

/** From the TOTP page to the recovery-code form, by the link a person follows. */
async function openRecoveryForm(page: Page) {
  await page.getByRole("link", { name: t2.useRecovery }).click();
  await expect(page).toHaveURL(/\/two-factor\?method=recovery$/);
  await expect(page.getByText(t2.recoveryIntro)).toBeVisible();
}

test("[required_totp] enroll an authenticator app, keep the recovery codes, sign in with the app, then with a recovery code that works once", async ({ page }, testInfo) => {
  test.setTimeout(240_000);
  const org = organization("required_totp");
  const problems = watchForPageErrors(page);
  await answerRelyingParty(page.context());

  // 1. First sign-in: the password, then the organization requires an app: enrollment.
  const first = await signInWithPassword(page, testInfo, org, "totp-1");
  await expect(page).toHaveURL(/\/interaction\/[^/]+\/two-factor\/setup$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(t2.setupTitle);
  await expect(page.getByRole("img", { name: t2.qrAlt })).toBeVisible();
  const shownKey = (await page.getByTestId("totp-secret").innerText()).trim();
  expect(shownKey).toMatch(/^[A-Z2-7]{4}( [A-Z2-7]{4})+$/);
  await screenshot(page, testInfo, "totp-1-setup");

  // The person types the key into an app, which shows a code; a mistyped code first.
  const app = authenticator(shownKey.replace(/\s+/g, ""));
  await page.getByLabel(t2.code, { exact: true }).fill(app.code(Date.now() + 10 * 60_000));
  await page.getByRole("button", { name: t2.verify }).click();
  await expect(page.getByRole("alert")).toHaveText(t2.setupFailed);
  await screenshot(page, testInfo, "totp-1-setup-failed");
  await page.getByLabel(t2.code, { exact: true }).fill(app.code());
  await page.getByRole("button", { name: t2.verify }).click();

  // The recovery codes, shown once: the person writes them down.
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(t2.codesTitle);
  const recoveryCodes = (await page.getByRole("list", { name: t2.codesTitle }).locator("code").allInnerTexts()).map((c) => c.trim());
  expect(recoveryCodes).toHaveLength(10);
  for (const code of recoveryCodes) expect(code).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/);
  expect(new Set(recoveryCodes).size).toBe(10);
  // Or keeps them as a file: the download holds every code.
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: t2.codesDownload }).click()]);
  const file = readFileSync(await download.path(), "utf8");
  for (const code of recoveryCodes) expect(file).toContain(code);
  await expect(page.getByRole("button", { name: t2.codesCopy })).toBeVisible();
  await screenshot(page, testInfo, "totp-1-recovery-codes");
  await page.getByRole("button", { name: t2.continue }).click();
  const firstTokens = await finishAtRelyingParty(page, testInfo, org, first, "totp-1");

  await signOut(page, testInfo, org, firstTokens.id_token!, "totp-1");

  // 2. Sign in again: the password, then the app's code (the next one: the enrollment code was used).
  const second = await signInWithPassword(page, testInfo, org, "totp-2");
  await expect(page).toHaveURL(/\/interaction\/[^/]+\/two-factor$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(t2.title);
  await expect(page.getByText(t2.totpIntro)).toBeVisible();
  await expect(page.getByRole("link", { name: t2.useRecovery })).toBeVisible();
  await screenshot(page, testInfo, "totp-2-code");
  await page.getByLabel(t2.code, { exact: true }).fill(app.code(Date.now() + 30_000));
  await page.getByRole("button", { name: t2.verify }).click();
  const secondTokens = await finishAtRelyingParty(page, testInfo, org, second, "totp-2");

  await signOut(page, testInfo, org, secondTokens.id_token!, "totp-2");

  // 3. Sign in with a recovery code instead of the app (typed in lower case).
  const third = await signInWithPassword(page, testInfo, org, "totp-3");
  await expect(page).toHaveURL(/\/interaction\/[^/]+\/two-factor$/);
  await openRecoveryForm(page);
  await screenshot(page, testInfo, "totp-3-recovery");
  await page.getByLabel(t2.recoveryCode, { exact: true }).fill(recoveryCodes[0]!.toLowerCase());
  await page.getByRole("button", { name: t2.verify }).click();
  const thirdTokens = await finishAtRelyingParty(page, testInfo, org, third, "totp-3");

  await signOut(page, testInfo, org, thirdTokens.id_token!, "totp-3");

  // 4. The same recovery code again: refused, on the recovery form; another of the codes works.
  const fourth = await signInWithPassword(page, testInfo, org, "totp-4");
  await openRecoveryForm(page);
  await page.getByLabel(t2.recoveryCode, { exact: true }).fill(recoveryCodes[0]!);
  await page.getByRole("button", { name: t2.verify }).click();
  await expect(page.getByRole("alert")).toHaveText(t2.failed);
  await expect(page.getByText(t2.recoveryIntro)).toBeVisible();
  expect(page.url()).toMatch(/\/interaction\/[^/]+\/two-factor\?method=recovery$/);
  await screenshot(page, testInfo, "totp-4-recovery-reused");
  await page.getByLabel(t2.recoveryCode, { exact: true }).fill(recoveryCodes[1]!);
  await page.getByRole("button", { name: t2.verify }).click();
  await finishAtRelyingParty(page, testInfo, org, fourth, "totp-4");

  expect(problems).toEqual([]);
});

test("[required_email] sign in with the code the SMTP peer received", async ({ page }, testInfo) => {
  test.setTimeout(120_000);
  const org = organization("required_email");
  if (!seed.mailbox) throw new Error("the seed names no mailbox");
  const mailbox = seed.mailbox;
  const problems = watchForPageErrors(page);
  await answerRelyingParty(page.context());
  const before = readMailbox(mailbox).length;

  const rp = await signInWithPassword(page, testInfo, org, "email-1");
  await expect(page).toHaveURL(/\/interaction\/[^/]+\/two-factor$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(t2.title);
  await expect(page.getByText(t2.emailIntro_other.replace("{{count}}", "10"))).toBeVisible();
  await expect(page.getByRole("button", { name: t2.resend })).toBeVisible();
  await screenshot(page, testInfo, "email-1-code");

  // The person opens the mail and reads the code.
  let message: ReturnType<typeof readMailbox>[number] | undefined;
  await expect
    .poll(
      () => {
        message = readMailbox(mailbox)
          .slice(before)
          .find((m) => m.to.includes(org.user.email.toLowerCase()));
        return message !== undefined;
      },
      { timeout: 30_000 },
    )
    .toBe(true);
  expect(message!.subject).toContain(org.name);
  const code = /(?:^|\s)(\d{6})(?:\s|$)/.exec(message!.text)?.[1];
  expect(code, message!.text).toMatch(/^\d{6}$/);

  await page.getByLabel(t2.code, { exact: true }).fill(code!);
  await page.getByRole("button", { name: t2.verify }).click();
  await finishAtRelyingParty(page, testInfo, org, rp, "email-1");
  expect(problems).toEqual([]);
});
