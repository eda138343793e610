import { readFileSync } from "node:fs";
import { expect, test, type Page } from "@playwright/test";
import type english from "../public/locales/en/login.json";
import { watchForPageErrors } from "./console-helpers";
import { readMailbox } from "./mail-peer";
import { answerRelyingParty, checkPage, gotoAfterCallback, settleOnCallback, startAuthorization } from "./journey-helpers";
import { readSeed, type Seed, type SeededOrganization } from "./seed";

/**
 * Expired or finished flows (decision 035): a sign-in page opened again after the sign-in
 * finished, and a sign-in link opened again on the phone after it was used, are no dead ends.
 * Each page is branded for its organization, says what happened and leads back to the
 * application's own sign-in start. In English and German, each page screenshotted and axe-checked.
 */
type Messages = typeof english;
const LANGUAGES = ["en", "de"] as const;
const messages = (language: (typeof LANGUAGES)[number]) => JSON.parse(readFileSync(new URL(`../public/locales/${language}/login.json`, import.meta.url), "utf8")) as Messages;
const LOCALES = { en: "en-US", de: "de-DE" } as const;
const RP_HOME = "https://rp.example.test/";

/**
 * A scope no other journey asks for alone: the consent given here must not stand in for the
 * consent other specs (magic-link-devices, login) expect their person to be asked for.
 */
const SCOPE = { scope: "openid profile" };

let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

/** Consent when asked (only the first time: the grant is remembered), then the relying party's callback. */
async function allowAndReachRelyingParty(page: Page, org: SeededOrganization, t: Messages) {
  const allow = page.getByRole("button", { name: t.consent.allow });
  await expect(allow.or(page.getByRole("heading", { name: "Back at the relying party" }))).toBeVisible();
  if (await allow.isVisible()) await allow.click();
  // The relying party's host is answered by a route, which Chromium now and then bypasses for a
  // redirect's target (net::ERR_NAME_NOT_RESOLVED in a CI rehearsal): either way the sign-in has
  // ended there, which is all this step needs.
  await settleOnCallback(page, org.redirectUri);
}

for (const language of LANGUAGES) {
  const t = messages(language);
  const signInTo = t.reset.signInTo.replace("{{client}}", "Test client");

  test(`a sign-in page opened again after the sign-in finished leads back to the application (${language})`, async ({ browser }, testInfo) => {
    const org = seed.organizations.find((o) => o.row === "password")!;
    const context = await browser.newContext({ locale: LOCALES[language] });
    try {
      const page = await context.newPage();
      const problems = watchForPageErrors(page);
      await answerRelyingParty(context);
      const rp = await startAuthorization(org, SCOPE);
      await page.goto(rp.url.href);
      const interactionUrl = page.url();
      await page.getByLabel(t.signIn.email, { exact: true }).fill(org.user.email);
      await page.getByLabel(t.signIn.password, { exact: true }).fill(org.user.password);
      await page.getByRole("button", { name: t.signIn.submit }).click();
      await allowAndReachRelyingParty(page, org, t);

      // Back to the sign-in page (history, a bookmark, a second tab): it is finished.
      const response = await gotoAfterCallback(page, interactionUrl, org.redirectUri);
      expect(response?.status()).toBe(400);
      await expect(page.locator("html")).toHaveAttribute("lang", language);
      await expect(page.getByRole("heading", { level: 1 })).toHaveText(t.expired.title);
      await expect(page.getByText(t.expired.body)).toBeVisible();
      await expect(page.getByText(org.name)).toBeVisible();
      await checkPage(page, testInfo, `expired-interaction-${language}`);
      await page.getByRole("link", { name: signInTo }).click();
      await expect(page).toHaveURL(RP_HOME);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  test(`a used sign-in link opened on the phone shows the page of any link that does not work, with the way back (${language})`, async ({ browser }, testInfo) => {
    const org = seed.organizations.find((o) => o.row === "magic_link")!;
    const laptop = await browser.newContext({ locale: LOCALES[language] });
    const phone = await browser.newContext({ locale: LOCALES[language] });
    try {
      const page = await laptop.newPage();
      await answerRelyingParty(laptop);
      await answerRelyingParty(phone);
      const rp = await startAuthorization(org, SCOPE);
      const before = readMailbox(seed.mailbox!).length;
      await page.goto(rp.url.href);
      await page.getByLabel(t.signIn.email, { exact: true }).fill(org.user.email);
      await page.getByRole("button", { name: t.signIn.magicLink }).click();
      await expect(page.getByRole("heading", { level: 1 })).toHaveText(t.magicLink.title);

      let link = "";
      await expect
        .poll(
          () => {
            const mail = readMailbox(seed.mailbox!).slice(before).find((m) => m.to.includes(org.user.email));
            link = /(https?:\/\/\S+\/magic-link\/verify\?[^\s)\]]+)/.exec(mail?.text ?? "")?.[1] ?? "";
            return link;
          },
          { timeout: 30_000 },
        )
        .not.toBe("");

      // Used where it was asked for: the laptop signs in.
      await page.goto(link);
      await allowAndReachRelyingParty(page, org, t);

      // Later, the same mail opened on the phone: the link stays used, and the page says what to do.
      // It is the page of a made-up link, word for word: nothing tells a used link from a forged one.
      const mobile = await phone.newPage();
      const problems = watchForPageErrors(mobile);
      await mobile.goto(link);
      await expect(mobile.getByRole("heading", { level: 1 })).toHaveText(t.magicLink.invalidTitle);
      await expect(mobile.locator("html")).toHaveAttribute("lang", language);
      await expect(mobile.getByRole("alert")).toHaveText(t.magicLink.invalid);
      await expect(mobile.getByText(org.name)).toBeVisible();
      await expect(mobile.getByText(t.reset.backToApplication)).toBeVisible();
      await checkPage(mobile, testInfo, `used-magic-link-${language}`);
      const used = await mobile.locator("main").innerText();
      const forged = new URL(link);
      forged.searchParams.set("token", "x".repeat(forged.searchParams.get("token")?.length ?? 43));
      await mobile.goto(forged.href);
      await expect(mobile.getByRole("heading", { level: 1 })).toHaveText(t.magicLink.invalidTitle);
      expect(await mobile.locator("main").innerText()).toBe(used);
      expect(problems).toEqual([]);
    } finally {
      await laptop.close();
      await phone.close();
    }
  });
}

test("an address of a sign-in nobody knows leads back to the page the browser came from", async ({ browser }, testInfo) => {
  const t = messages("en");
  const context = await browser.newContext({ locale: LOCALES.en });
  await answerRelyingParty(context);
  const page = await context.newPage();
  const problems = watchForPageErrors(page);
  await page.goto(RP_HOME);
  await page.goto(`/interaction/${"u".repeat(21)}`);
  await expect(page.getByRole("heading", { name: t.expired.title })).toBeVisible();
  await checkPage(page, testInfo, "unknown-interaction");
  await page.getByRole("button", { name: t.expired.goBack }).click();
  await expect(page).toHaveURL(RP_HOME);
  expect(problems).toEqual([]);
  await context.close();
});
