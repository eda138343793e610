import { readFileSync } from "node:fs";
import { expect, test, type Page } from "@playwright/test";
import { Secret, TOTP } from "otpauth";
import type english from "../public/locales/en/login.json";
import { watchForPageErrors } from "./console-helpers";
import { checkPage } from "./journey-helpers";
import { readMailbox } from "./mail-peer";
import { readSeed, type Seed } from "./seed";

/**
 * The account page (decision 038): a person manages their own account at /{slug}/account, as they would: signs in
 * through the organization's page, switches the page to German, turns two-factor on with an
 * authenticator app (recovery codes shown once), signs in on a phone (a second browser context)
 * with the app, sees both devices on the laptop and signs the phone out, then signs out. Every
 * page and state is screenshotted and checked with axe.
 */
type Messages = typeof english;
const messages = (language: "en" | "de") => JSON.parse(readFileSync(new URL(`../public/locales/${language}/login.json`, import.meta.url), "utf8")) as Messages;
const en = messages("en");
const de = messages("de");

let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

async function signIn(page: Page, email: string, password: string, language: Messages) {
  await expect(page).toHaveURL(/\/interaction\//);
  await page.getByLabel(language.signIn.email, { exact: true }).fill(email);
  await page.getByLabel(language.signIn.password, { exact: true }).fill(password);
  await page.getByRole("button", { name: language.signIn.submit }).click();
}

test("a person turns two-factor on from the account page, then signs a phone out from the laptop", async ({ browser }, testInfo) => {
  const org = seed.organizations.find((o) => o.row === "password+magic_link")!;
  const person = seed.accountUser!;
  const accountUrl = `/${org.slug}/account`;
  const laptop = await browser.newContext({ locale: "en-US" });
  const phone = await browser.newContext({ locale: "en-US", userAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Version/17.0 Mobile/15E148 Safari/604.1" });
  try {
    const page = await laptop.newPage();
    const problems = watchForPageErrors(page);
    await page.goto(accountUrl);
    await signIn(page, person.email, person.password, en);
    await expect(page).toHaveURL(new RegExp(`${accountUrl}$`));
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(en.account.title);
    await expect(page.getByText(en.account.intro.replace("{{email}}", person.email))).toBeVisible();
    await checkPage(page, testInfo, "account-overview");

    // The page in German, by the person's own choice.
    await page.getByLabel(en.account.profile.locale).selectOption("de");
    await page.getByRole("button", { name: en.account.profile.save }).click();
    await expect(page.locator("html")).toHaveAttribute("lang", "de");
    await expect(page.getByRole("status")).toHaveText(de.account.profile.saved);
    await checkPage(page, testInfo, "account-de");

    // Two-factor on: an authenticator app, with a wrong code first.
    await page.getByRole("link", { name: de.account.twoFactor.totpAdd }).click();
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(de.twoFactor.setupTitle);
    await checkPage(page, testInfo, "account-totp-setup");
    const key = (await page.getByTestId("totp-secret").innerText()).replace(/\s+/g, "");
    const totp = new TOTP({ algorithm: "SHA1", digits: 6, period: 30, secret: Secret.fromBase32(key) });
    await page.getByLabel(de.twoFactor.code).fill("000000");
    await page.getByRole("button", { name: de.twoFactor.verify }).click();
    await expect(page.getByRole("alert")).toHaveText(de.twoFactor.setupFailed);
    await checkPage(page, testInfo, "account-totp-setup-failed");
    await page.getByLabel(de.twoFactor.code).fill(totp.generate());
    await page.getByRole("button", { name: de.twoFactor.verify }).click();
    await expect(page.getByRole("list", { name: de.twoFactor.codesTitle }).getByRole("listitem")).toHaveCount(10);
    await expect(page.getByRole("link", { name: de.twoFactor.codesDownload })).toHaveAttribute("download", /recovery-codes-.*\.txt/);
    await checkPage(page, testInfo, "account-recovery-codes");
    await page.getByRole("link", { name: de.account.twoFactor.done }).click();
    await expect(page.getByRole("status")).toHaveText(de.account.twoFactor.added);
    await expect(page.getByText(de.account.twoFactor.on)).toBeVisible();

    // The phone: another browser signs in to the account page with the password and the app.
    const mobile = await phone.newPage();
    await mobile.goto(accountUrl);
    await signIn(mobile, person.email, person.password, en);
    await expect(mobile).toHaveURL(/\/two-factor/);
    // The next time step: the laptop's code used this one.
    await mobile.getByLabel(en.twoFactor.code).fill(totp.generate({ timestamp: Date.now() + 30_000 }));
    await mobile.getByRole("button", { name: en.twoFactor.verify }).click();
    await expect(mobile).toHaveURL(new RegExp(`${accountUrl}$`));
    await checkPage(mobile, testInfo, "account-phone");

    // The laptop sees both, and signs the phone out.
    await page.reload();
    const sessions = page.locator("#sessions");
    await expect(sessions.getByRole("listitem")).toHaveCount(2);
    await expect(sessions.getByText("Safari · iOS")).toBeVisible();
    await checkPage(page, testInfo, "account-sessions");
    await sessions.getByRole("button", { name: de.account.sessions.end }).click();
    await expect(page.getByRole("status")).toHaveText(de.account.sessions.ended);
    await expect(page.locator("#sessions").getByRole("listitem")).toHaveCount(1);
    await mobile.reload();
    await expect(mobile).toHaveURL(/\/interaction\//);

    // Signing out ends on the organization's "signed out" page, with the way back in.
    await page.getByRole("link", { name: de.account.signOut }).click();
    const confirm = page.getByRole("button", { name: /abmelden|sign out|yes/i });
    if (await confirm.count()) await confirm.first().click();
    await expect(page).toHaveURL(new RegExp(`${accountUrl}/signed-out$`));
    await checkPage(page, testInfo, "account-signed-out");
    await page.getByRole("link", { name: en.account.signInAgain }).click();
    await expect(page).toHaveURL(/\/interaction\//);
    expect(problems).toEqual([]);
  } finally {
    await laptop.close();
    await phone.close();
  }
});

test("a person changes their email address on the laptop and confirms it from the phone, in German", async ({ browser }, testInfo) => {
  const org = seed.organizations.find((o) => o.row === "password+magic_link")!;
  const person = seed.emailChangeUser!;
  const accountUrl = `/${org.slug}/account`;
  const next = `moved-${Date.now()}@${org.slug}.example.test`;
  const laptop = await browser.newContext({ locale: "de-DE" });
  const phone = await browser.newContext({ locale: "de-DE" });
  try {
    const page = await laptop.newPage();
    const problems = watchForPageErrors(page);
    await page.goto(accountUrl);
    await signIn(page, person.email, person.password, de);
    await expect(page).toHaveURL(new RegExp(`${accountUrl}$`));

    // A typo first: the message sits next to the field.
    const field = page.getByLabel(de.account.email.new, { exact: true });
    await field.fill("moved-at-example");
    await page.getByRole("button", { name: de.account.email.change }).click();
    await expect(page.locator("#newEmail-error")).toHaveText(de.account.email.invalid);
    await checkPage(page, testInfo, "account-email-refused");

    const before = readMailbox(seed.mailbox!).length;
    await page.getByLabel(de.account.email.new, { exact: true }).fill(next);
    await page.getByRole("button", { name: de.account.email.change }).click();
    await expect(page.getByRole("status")).toHaveText(de.account.email.sent);
    await expect(page.locator("#email")).toContainText(de.account.email.pendingBody.replace("{{email}}", next));
    await checkPage(page, testInfo, "account-email-pending");

    let link = "";
    await expect
      .poll(
        () => {
          const mail = readMailbox(seed.mailbox!).slice(before).find((m) => m.to.includes(next));
          link = /(https?:\/\/\S+\/account\/email\?token=[^\s)\]]+)/.exec(mail?.text ?? "")?.[1] ?? "";
          return link;
        },
        { timeout: 30_000 },
      )
      .not.toBe("");
    // The current address heard of it too.
    expect(readMailbox(seed.mailbox!).slice(before).some((m) => m.to.includes(person.email))).toBe(true);

    // The phone never signed in: the link alone confirms, after a click (a link scanner changes nothing).
    expect(new URL(link).searchParams.get("lang")).toBe("de");
    const mobile = await phone.newPage();
    const phoneProblems = watchForPageErrors(mobile);
    await mobile.goto(link);
    await expect(mobile.locator("html")).toHaveAttribute("lang", "de");
    await expect(mobile.getByRole("heading", { level: 1 })).toHaveText(de.account.email.confirmTitle);
    await checkPage(mobile, testInfo, "account-email-confirm-phone");
    await mobile.getByRole("button", { name: de.account.email.confirm }).click();
    await expect(mobile.getByRole("heading", { level: 1 })).toHaveText(de.account.email.doneTitle);
    await checkPage(mobile, testInfo, "account-email-done-phone");
    // Used once: opened again, it says so, with the way to the account page.
    await mobile.goto(link);
    await expect(mobile.getByRole("heading", { level: 1 })).toHaveText(de.account.email.usedTitle);
    await expect(mobile.getByRole("link", { name: de.account.email.toAccount })).toHaveAttribute("href", accountUrl);
    await checkPage(mobile, testInfo, "account-email-used-phone");

    await page.reload();
    await expect(page.locator("#email")).toContainText(next);
    await expect(page.locator("#email")).toContainText(de.account.profile.verified);
    expect(problems).toEqual([]);
    expect(phoneProblems).toEqual([]);
  } finally {
    await laptop.close();
    await phone.close();
  }
});
