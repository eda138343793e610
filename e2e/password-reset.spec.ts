import { readFileSync } from "node:fs";
import { expect, test } from "@playwright/test";
import * as oidc from "openid-client";
import type english from "../public/locales/en/login.json";
import { watchForPageErrors } from "./console-helpers";
import { readMailbox } from "./mail-peer";
import { answerRelyingParty, checkPage, startAuthorization } from "./journey-helpers";
import { readSeed, type Seed } from "./seed";

/**
 * Decision 032: a password reset asked for on the laptop, in German, and finished on the phone from
 * the mailed link (a second browser context). The phone ends on "password changed" with the way
 * back to the application; the used link says it was used; the laptop's sign-in goes on with the
 * new password. Every page is screenshotted and checked with axe.
 */
type Messages = typeof english;
const messages = (language: "en" | "de") => JSON.parse(readFileSync(new URL(`../public/locales/${language}/login.json`, import.meta.url), "utf8")) as Messages;
const en = messages("en");
const de = messages("de");
const NEW_PASSWORD = "a fresh reset passphrase 4";

let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

test("a reset asked for on the laptop is finished on the phone; the laptop signs in with the new password", async ({ browser }, testInfo) => {
  const org = seed.organizations.find((o) => o.row === "password+magic_link")!;
  const person = seed.resetUser!;
  const laptop = await browser.newContext();
  const phone = await browser.newContext({ locale: "en-US" });
  try {
    const page = await laptop.newPage();
    const problems = watchForPageErrors(page);
    await answerRelyingParty(laptop);
    const rp = await startAuthorization(org, { ui_locales: "de" });
    const before = readMailbox(seed.mailbox!).length;
    await page.goto(rp.url.href);
    await expect(page.locator("html")).toHaveAttribute("lang", "de");
    const interactionUrl = page.url();
    await page.getByRole("link", { name: de.signIn.forgotPassword }).click();
    await page.getByLabel(de.signIn.email, { exact: true }).fill(person.email);
    await page.getByRole("button", { name: de.forgot.submit }).click();
    await expect(page.getByRole("status")).toHaveText(de.forgot.sent.replace("{{email}}", person.email));

    let link = "";
    await expect
      .poll(
        () => {
          const mail = readMailbox(seed.mailbox!).slice(before).find((m) => m.to.includes(person.email));
          link = /(https?:\/\/\S+\/reset-password\?token=[^\s)\]]+)/.exec(mail?.text ?? "")?.[1] ?? "";
          return link;
        },
        { timeout: 30_000 },
      )
      .not.toBe("");
    expect(new URL(link).pathname).toBe(`/${org.slug}/reset-password`);

    // The phone: another browser, which never saw this sign-in. The page speaks the sign-in's German.
    const mobile = await phone.newPage();
    const phoneProblems = watchForPageErrors(mobile);
    await mobile.goto(link);
    await expect(mobile.locator("html")).toHaveAttribute("lang", "de");
    await expect(mobile.getByRole("heading", { level: 1 })).toHaveText(de.reset.title);
    await expect(mobile.getByText(org.name)).toBeVisible();
    await checkPage(mobile, testInfo, "reset-1-phone-form");

    // A breached password is refused next to the field; the link stays usable.
    await mobile.getByLabel(de.reset.newPassword, { exact: true }).fill("password123");
    await mobile.getByRole("button", { name: de.reset.submit }).click();
    await expect(mobile.getByText(de.passwordPolicy.breached)).toBeVisible();
    await checkPage(mobile, testInfo, "reset-2-phone-refused");

    await mobile.getByLabel(de.reset.newPassword, { exact: true }).fill(NEW_PASSWORD);
    await mobile.getByRole("button", { name: de.reset.submit }).click();
    await expect(mobile.getByRole("heading", { level: 1 })).toHaveText(de.reset.changedTitle);
    await expect(mobile).toHaveURL(new RegExp(`/${org.slug}/password-changed`));
    await expect(mobile.getByRole("link", { name: de.reset.signInTo.replace("{{client}}", "Test client") })).toHaveAttribute("href", "https://rp.example.test/");
    await checkPage(mobile, testInfo, "reset-3-phone-changed");

    // The same link again, in English: it says it was used, with the way back.
    await mobile.goto(link.replace("lang=de", "lang=en"));
    await expect(mobile.getByRole("heading", { level: 1 })).toHaveText(en.reset.problemTitle);
    await expect(mobile.getByRole("alert")).toHaveText(en.reset.used);
    await checkPage(mobile, testInfo, "reset-4-phone-used");

    // The laptop's sign-in is still open: the old password fails, the new one goes through.
    await page.goto(interactionUrl);
    await page.getByLabel(de.signIn.email, { exact: true }).fill(person.email);
    await page.getByLabel(de.signIn.password, { exact: true }).fill(person.password);
    await page.getByRole("button", { name: de.signIn.submit }).click();
    await expect(page.getByRole("alert")).toHaveText(de.signIn.failed);
    await page.getByLabel(de.signIn.password, { exact: true }).fill(NEW_PASSWORD);
    await page.getByRole("button", { name: de.signIn.submit }).click();
    // The callback is read from the request: the relying party is no real host, and the browser
    // now and then reached DNS before the context's route could answer it (ERR_NAME_NOT_RESOLVED).
    const callback = page.waitForRequest((request) => request.url().startsWith(org.redirectUri));
    await page.getByRole("button", { name: de.consent.allow }).click();
    const tokens = await oidc.authorizationCodeGrant(rp.config, new URL((await callback).url()), { pkceCodeVerifier: rp.verifier, expectedState: rp.state });
    expect(tokens.claims()?.sub).toBe(person.id);
    expect([...problems, ...phoneProblems]).toEqual([]);
  } finally {
    await laptop.close();
    await phone.close();
  }
});
