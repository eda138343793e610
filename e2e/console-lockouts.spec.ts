import { expect, test, type Page } from "@playwright/test";
import { check as checkPage, signInToConsole, watchForPageErrors } from "./console-helpers";
import { answerRelyingParty, callbackAfter, startAuthorization } from "./journey-helpers";
import { CONSOLE_ADMINS, readSeed, type Seed } from "./seed";

/**
 * Lockouts and pending invitations as an operator meets them (decision 040): strangers'
 * wrong passwords lock a person out; the organization's figure leads to the locked users, the
 * list and the user page say until when, Unlock lets the person sign in again at once. On the
 * users page, the pending invitations are listed; inviting the same address again is refused
 * beside the field; an invitation is sent again and revoked from its row menu. Each state is
 * screenshotted and checked with axe at 1280 px and at 390 px.
 */
let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

const check: typeof checkPage = (page, testInfo, name) => checkPage(page, testInfo, `lockouts-${name}`);
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

/** A state at both widths: a phone's page must not scroll sideways. */
async function checkBoth(page: Page, testInfo: Parameters<typeof checkPage>[1], name: string) {
  await page.setViewportSize(DESKTOP);
  await check(page, testInfo, `${name}-1280`);
  await page.setViewportSize(PHONE);
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), "the page scrolls sideways").toBe(true);
  await check(page, testInfo, `${name}-390`);
  await page.setViewportSize(DESKTOP);
}

const USER_PASSWORD = "a lockout users password 7";

/** One password attempt at the organization's sign-in page, as the relying party starts it. */
async function tryPassword(page: Page, org: Seed["organizations"][number], email: string, password: string) {
  const { url } = await startAuthorization(org, { prompt: "login" });
  await page.goto(url.href);
  await page.getByLabel("Email address", { exact: true }).fill(email);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

test("a locked-out person is found from the organization's figure, shown until when, and unlocked; they sign in again", async ({ page, browser }, testInfo) => {
  test.setTimeout(240_000);
  const problems = watchForPageErrors(page);
  await page.setViewportSize(DESKTOP);
  await signInToConsole(page, seed, CONSOLE_ADMINS.lockouts);
  const org = seed.organizations.find((o) => o.row === "password+magic_link")!;
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Organizations" }).click();
  await page.getByRole("link", { name: org.name }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(org.name);
  const orgUrl = page.url().replace(/\?.*$/, "");

  // A person with a password, created here.
  await page.goto(`${orgUrl}/users`);
  const email = `locked.${Date.now()}@e2e.example.test`;
  await page.locator("#newEmail").fill(email);
  await page.locator("#newPassword").fill(USER_PASSWORD);
  await page.getByRole("button", { name: "Create user" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(email);
  await expect(page.getByRole("region", { name: "Details" })).toContainText("not locked");

  // A stranger guesses five times: the account locks; even the right password is refused now.
  const stranger = await browser.newContext();
  await answerRelyingParty(stranger);
  const strangerPage = await stranger.newPage();
  for (let i = 0; i < 5; i++) {
    await tryPassword(strangerPage, org, email, `wrong guess ${i} of a stranger`);
    await expect(strangerPage.getByText("The email address or password is not correct.")).toBeVisible();
  }
  await stranger.close();

  // The organization's figure leads to the locked users.
  await page.goto(orgUrl);
  await page.getByRole("link", { name: /locked users?: show/ }).click();
  await expect(page).toHaveURL(/\/users\?locked=true$/);
  await expect(page.getByText("Showing only users who are locked out now.")).toBeVisible();
  const row = page.getByRole("row", { name: new RegExp(email.replace(/\./g, "\\.")) });
  await expect(row).toContainText(/Locked until .+ UTC/);
  await expect(page.getByLabel("Only locked users")).toBeChecked();
  await checkBoth(page, testInfo, "locked-list");

  await row.getByRole("link", { name: email }).click();
  const details = page.getByRole("region", { name: "Details" });
  await expect(details).toContainText(/Locked until .+ UTC/);
  await checkBoth(page, testInfo, "locked-user");

  // The owner, on a browser of their own, is refused while the lock runs.
  const owner = await browser.newContext();
  await answerRelyingParty(owner);
  const ownerPage = await owner.newPage();
  await tryPassword(ownerPage, org, email, USER_PASSWORD);
  await expect(ownerPage.getByText("The email address or password is not correct.")).toBeVisible();

  // Unlock: a neutral, reversible action, said done; the list of locked users is empty again.
  const unlock = details.getByRole("button", { name: "Unlock" });
  await expect(unlock).not.toHaveClass(/button-danger/);
  await unlock.click();
  await expect(page.getByText("The lockout was lifted: the user can sign in again.")).toBeVisible();
  await expect(details).toContainText("not locked");
  await checkBoth(page, testInfo, "unlocked-user");
  await page.goto(`${orgUrl}/users?locked=true`);
  await expect(page.getByText(/No user is locked out\./)).toBeVisible();
  await check(page, testInfo, "no-locked-users");

  // The owner signs in at once.
  await tryPassword(ownerPage, org, email, USER_PASSWORD);
  await expect(ownerPage.getByRole("heading", { level: 1 })).toHaveText("Test client wants to access your account");
  await expect(ownerPage.getByText(email)).toBeVisible();
  const callback = await callbackAfter(ownerPage, org.redirectUri, () => ownerPage.getByRole("button", { name: "Allow" }).click());
  expect(callback.searchParams.get("code")).toBeTruthy();
  await owner.close();
  expect(problems).toEqual([]);
});

test("pending invitations are listed; a second invitation is refused beside the field; one is sent again and another revoked", async ({ page }, testInfo) => {
  test.setTimeout(240_000);
  const problems = watchForPageErrors(page);
  await page.setViewportSize(DESKTOP);
  await signInToConsole(page, seed, CONSOLE_ADMINS.lockouts);
  const org = seed.organizations.find((o) => o.row === "password")!;
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Organizations" }).click();
  await page.getByRole("link", { name: org.name }).click();
  await page.getByRole("link", { name: "Users", exact: true }).click();
  const invitations = page.getByRole("region", { name: "Pending invitations" });
  await expect(invitations).toContainText("No invitation is waiting for an answer.");
  await check(page, testInfo, "no-invitations");

  const invite = async (address: string) => {
    await page.locator("#email").fill(address);
    await page.getByRole("button", { name: "Send invitation" }).click();
  };
  const first = `invited.${Date.now()}@e2e.example.test`;
  const second = `invited.second.${Date.now()}@e2e.example.test`;
  await invite(first);
  await expect(page.getByText(`An invitation was sent to ${first}.`)).toBeVisible();
  await invite(second);
  await expect(page.getByText(`An invitation was sent to ${second}.`)).toBeVisible();
  await page.goto(page.url());
  await expect(invitations.getByRole("row")).toHaveCount(3);
  await checkBoth(page, testInfo, "invitations");

  // The same address again: said beside the field, nothing new stored.
  await invite(first.toUpperCase());
  await expect(page.locator("#email-error")).toHaveText("This address already has a pending invitation. Send it again or revoke it in the list of pending invitations.");
  await expect(invitations.getByRole("row")).toHaveCount(3);
  await checkBoth(page, testInfo, "invitation-pending-error");

  // Send again, from the row's menu.
  const firstRow = invitations.getByRole("row", { name: new RegExp(first.replace(/\./g, "\\.")) });
  await firstRow.getByText("Actions").click();
  await expect(firstRow.getByRole("button", { name: "Send again" })).toBeVisible();
  await checkBoth(page, testInfo, "invitation-menu");
  await firstRow.getByRole("button", { name: "Send again" }).click();
  await expect(page.getByText("The invitation was sent again, with a new expiry.")).toBeVisible();

  // Revoke the second after a confirmation; the first stays.
  const secondRow = invitations.getByRole("row", { name: new RegExp(second.replace(/\./g, "\\.")) });
  await secondRow.getByText("Actions").click();
  await secondRow.getByText("Revoke invitation", { exact: true }).click();
  await expect(secondRow.getByText(`Revoke the invitation of ${second}? Its link stops working at once.`)).toBeVisible();
  await check(page, testInfo, "invitation-revoke-confirm");
  await secondRow.getByRole("button", { name: "Confirm: Revoke invitation" }).click();
  await expect(page.getByText("The invitation was revoked.")).toBeVisible();
  await expect(invitations).not.toContainText(second);
  await expect(invitations).toContainText(first);
  await check(page, testInfo, "invitation-revoked");
  expect(problems).toEqual([]);
});
