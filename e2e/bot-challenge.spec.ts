import { readFileSync } from "node:fs";
import { expect, test } from "@playwright/test";
import type english from "../public/locales/en/login.json";
import { watchForPageErrors } from "./console-helpers";
import { answerRelyingParty, callbackAfter, checkPage, screenshot, startAuthorization } from "./journey-helpers";
import { readSeed, type Seed } from "./seed";

/**
 * Bot protection (decision 091) in Debian Chromium: an organization whose policy is `always`.
 * The login page solves its proof of work with the page's own script while the person types,
 * says so in a live region, and signs in; a form sent before the answer is found is held and
 * sent with it. Without JavaScript the page says what to do, and a post is refused with that
 * advice. axe on the page with script (it runs in the page), screenshots of every state.
 */
type Messages = typeof english;
const en = JSON.parse(readFileSync(new URL("../public/locales/en/login.json", import.meta.url), "utf8")) as Messages;

let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

test("a person signs in through the page's proof of work, and the page is accessible", async ({ browser }, testInfo) => {
  const bot = seed.botChallenge!;
  const context = await browser.newContext({ locale: "en-US" });
  await answerRelyingParty(context);
  const page = await context.newPage();
  const problems = watchForPageErrors(page);
  const rp = await startAuthorization(bot.rp);
  await page.goto(rp.url.href);
  await expect(page).toHaveURL(/\/interaction\//);
  await expect(page.getByRole("status").filter({ hasText: en.botChallenge.ready })).toBeVisible({ timeout: 60_000 });
  await expect(page.locator('input[name="altcha"]')).not.toHaveValue("");
  await checkPage(page, testInfo, "bot-challenge-1-checked");
  await page.getByLabel(en.signIn.email, { exact: true }).fill(bot.user.email);
  await page.getByLabel(en.signIn.password, { exact: true }).fill(bot.user.password);
  const callback = await callbackAfter(page, bot.rp.redirectUri, () => page.getByRole("button", { name: en.signIn.submit, exact: true }).click());
  expect(callback.searchParams.get("code")).toBeTruthy();
  expect(problems).toEqual([]);
  await context.close();
});

test("a form sent right after the page loads signs in: held until the answer is found, or sent with it", async ({ browser }) => {
  const bot = seed.botChallenge!;
  const context = await browser.newContext({ locale: "en-US" });
  await answerRelyingParty(context);
  const page = await context.newPage();
  const rp = await startAuthorization(bot.rp, { prompt: "login" });
  await page.goto(rp.url.href, { waitUntil: "domcontentloaded" });
  await page.getByLabel(en.signIn.email, { exact: true }).fill(bot.user.email);
  await page.getByLabel(en.signIn.password, { exact: true }).fill(bot.user.password);
  // Sent at once: either the answer is still being computed (held) or already there.
  const callback = await callbackAfter(page, bot.rp.redirectUri, () => page.getByRole("button", { name: en.signIn.submit, exact: true }).click());
  expect(callback.searchParams.get("code")).toBeTruthy();
  await context.close();
});

test("without JavaScript the page says what to do, and a post is refused with that advice", async ({ browser }, testInfo) => {
  const bot = seed.botChallenge!;
  const context = await browser.newContext({ locale: "en-US", javaScriptEnabled: false });
  const page = await context.newPage();
  const rp = await startAuthorization(bot.rp, { prompt: "login" });
  await page.goto(rp.url.href);
  await expect(page).toHaveURL(/\/interaction\//);
  // Chromium parses <noscript> as text even with script execution turned off (the parser's
  // scripting flag stays on), so the advice is read from the markup rather than seen.
  expect(await page.locator("main noscript").textContent()).toContain(en.botChallenge.noScript);
  // axe runs in the page: without script there are screenshots only.
  await screenshot(page, testInfo, "bot-challenge-2-no-script");
  await page.getByLabel(en.signIn.email, { exact: true }).fill(bot.user.email);
  await page.getByLabel(en.signIn.password, { exact: true }).fill(bot.user.password);
  await page.getByRole("button", { name: en.signIn.submit, exact: true }).click();
  await expect(page.getByRole("alert")).toHaveText(en.botChallenge.refused.missing);
  await expect(page).toHaveURL(/\/interaction\//);
  await screenshot(page, testInfo, "bot-challenge-3-refused");
  await context.close();
});

/** A device (RFC 8628) of the organization asks for a code, as a command-line tool does. */
async function startDevice(): Promise<{ verificationUri: string; userCode: string }> {
  const bot = seed.botChallenge!;
  const response = await fetch(`${bot.rp.issuer}/device/auth`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ client_id: bot.deviceClientId, scope: "openid" }),
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { verification_uri: string; user_code: string };
  return { verificationUri: body.verification_uri, userCode: body.user_code };
}

test("a person enters a device code through the page's proof of work, and the page is accessible", async ({ browser }, testInfo) => {
  const device = await startDevice();
  const context = await browser.newContext({ locale: "en-US" });
  const page = await context.newPage();
  const problems = watchForPageErrors(page);
  await page.goto(device.verificationUri);
  // The provider's plain page: its solver is the same-origin script, under the page's CSP.
  await expect(page.getByRole("status")).toHaveText(en.botChallenge.ready, { timeout: 60_000 });
  await expect(page.locator('input[name="altcha"]')).not.toHaveValue("");
  await checkPage(page, testInfo, "bot-challenge-4-device-checked");
  await page.getByLabel(en.providerPages.deviceCodeLabel).fill(device.userCode);
  await page.getByRole("button", { name: en.providerPages.deviceContinue }).click();
  await expect(page.locator(".user-code")).toHaveText(device.userCode);
  expect(problems).toEqual([]);
  await context.close();
});

test("a device code sent right after the page loads is held until the answer is found", async ({ browser }) => {
  const device = await startDevice();
  const context = await browser.newContext({ locale: "en-US" });
  const page = await context.newPage();
  await page.goto(device.verificationUri, { waitUntil: "domcontentloaded" });
  await page.getByLabel(en.providerPages.deviceCodeLabel).fill(device.userCode);
  await page.getByRole("button", { name: en.providerPages.deviceContinue }).click();
  await expect(page.locator(".user-code")).toHaveText(device.userCode, { timeout: 60_000 });
  await context.close();
});

test("without JavaScript the device page says what to do, and a code is refused with that advice", async ({ browser }, testInfo) => {
  const device = await startDevice();
  const context = await browser.newContext({ locale: "en-US", javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(device.verificationUri);
  expect(await page.locator("noscript").textContent()).toContain(en.botChallenge.noScript);
  await page.getByLabel(en.providerPages.deviceCodeLabel).fill(device.userCode);
  await page.getByRole("button", { name: en.providerPages.deviceContinue }).click();
  await expect(page.getByRole("alert")).toHaveText(en.botChallenge.refused.missing);
  await expect(page.getByLabel(en.providerPages.deviceCodeLabel)).toHaveValue(device.userCode);
  await screenshot(page, testInfo, "bot-challenge-5-device-refused");
  await context.close();
});
