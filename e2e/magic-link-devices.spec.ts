import { readFileSync } from "node:fs";
import { expect, test } from "@playwright/test";
import * as oidc from "openid-client";
import type english from "../public/locales/en/login.json";
import { watchForPageErrors } from "./console-helpers";
import { readMailbox } from "./mail-peer";
import { answerRelyingParty, callbackAfter, checkPage, startAuthorization } from "./journey-helpers";
import { readSeed, type Seed } from "./seed";

/**
 * Decision 033: a sign-in link asked for on the laptop and opened on the phone (a second
 * browser context). The phone asks for the number the laptop shows; once it is typed, the
 * laptop's page notices by itself and finishes the sign-in at the relying party.
 */
const en = JSON.parse(readFileSync(new URL("../public/locales/en/login.json", import.meta.url), "utf8")) as typeof english;

let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

test("a link opened on the phone signs the laptop in after the laptop's number is typed there", async ({ browser }, testInfo) => {
  const org = seed.organizations.find((o) => o.row === "magic_link")!;
  const laptop = await browser.newContext();
  const phone = await browser.newContext();
  try {
    const page = await laptop.newPage();
    const problems = watchForPageErrors(page);
    await answerRelyingParty(laptop);
    const { config, verifier, state, url } = await startAuthorization(org);
    const before = readMailbox(seed.mailbox!).length;
    await page.goto(url.href);
    await page.getByLabel(en.signIn.email, { exact: true }).fill(org.user.email);
    await page.getByRole("button", { name: en.signIn.magicLink }).click();
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(en.magicLink.title);
    const code = (await page.locator(".pairing-code").innerText()).trim();
    expect(code).toMatch(/^\d{2}$/);
    await checkPage(page, testInfo, "magic-link-1-laptop-waiting");

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

    const mobile = await phone.newPage();
    const phoneProblems = watchForPageErrors(mobile);
    await mobile.goto(link);
    await expect(mobile.getByRole("heading", { level: 1 })).toHaveText(en.magicLink.pairTitle);
    await checkPage(mobile, testInfo, "magic-link-2-phone-asks-number");
    const wrong = code === "10" ? "11" : "10";
    await mobile.getByLabel(en.magicLink.pairCode, { exact: true }).fill(wrong);
    await mobile.getByRole("button", { name: en.magicLink.pairSubmit }).click();
    await expect(mobile.getByText(en.magicLink.pairWrong)).toBeVisible();
    await checkPage(mobile, testInfo, "magic-link-3-phone-wrong-number");
    await mobile.getByLabel(en.magicLink.pairCode, { exact: true }).fill(code);
    await mobile.getByRole("button", { name: en.magicLink.pairSubmit }).click();
    await expect(mobile.getByRole("heading", { level: 1 })).toHaveText(en.magicLink.pairedTitle);
    await checkPage(mobile, testInfo, "magic-link-4-phone-confirmed");

    // The laptop's page notices on its own and goes on: consent, then the relying party.
    await expect(page.getByRole("button", { name: en.consent.allow })).toBeVisible({ timeout: 20_000 });
    const callback = await callbackAfter(page, org.redirectUri, () => page.getByRole("button", { name: en.consent.allow }).click());
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
    expect(tokens.claims()?.sub).toBe(org.user.id);
    expect([...problems, ...phoneProblems]).toEqual([]);
  } finally {
    await laptop.close();
    await phone.close();
  }
});
