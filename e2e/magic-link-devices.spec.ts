import { readFileSync } from "node:fs";
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page, type TestInfo } from "@playwright/test";
import * as oidc from "openid-client";
import type english from "../public/locales/en/login.json";
import { watchForPageErrors } from "./console-helpers";
import { readMailbox } from "./mail-peer";
import { readSeed, type Seed } from "./seed";

/**
 * Issue 19, decision 033: a sign-in link asked for on the laptop and opened on the phone (a second
 * browser context). The phone asks for the number the laptop shows; once it is typed, the
 * laptop's page notices by itself and finishes the sign-in at the relying party.
 */
const en = JSON.parse(readFileSync(new URL("../public/locales/en/login.json", import.meta.url), "utf8")) as typeof english;

let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

async function check(page: Page, testInfo: TestInfo, name: string) {
  const shot = testInfo.outputPath(`magic-link-${name}.png`);
  await page.screenshot({ path: shot, fullPage: true });
  await testInfo.attach(`magic-link-${name}`, { path: shot, contentType: "image/png" });
  const results = await new AxeBuilder({ page }).analyze();
  const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => ({ id: v.id, targets: v.nodes.map((n) => n.target.join(" ")) }));
  expect(serious, `serious or critical axe violations on ${name}`).toEqual([]);
}

test("a link opened on the phone signs the laptop in after the laptop's number is typed there", async ({ browser }, testInfo) => {
  const org = seed.organizations.find((o) => o.row === "magic_link")!;
  const laptop = await browser.newContext();
  const phone = await browser.newContext();
  try {
    const page = await laptop.newPage();
    const problems = watchForPageErrors(page);
    await page.route("https://rp.example.test/**", (route) =>
      route.fulfill({ status: 200, contentType: "text/html", body: "<!doctype html><html lang=en><title>Relying party</title><h1>Back at the relying party</h1></html>" }),
    );
    const config = await oidc.discovery(new URL(org.issuer), org.clientId, undefined, oidc.ClientSecretBasic(org.clientSecret), { execute: [oidc.allowInsecureRequests] });
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: org.redirectUri,
      scope: "openid email",
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state,
    });
    const before = readMailbox(seed.mailbox!).length;
    await page.goto(url.href);
    await page.getByLabel(en.signIn.email, { exact: true }).fill(org.user.email);
    await page.getByRole("button", { name: en.signIn.magicLink }).click();
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(en.magicLink.title);
    const code = (await page.locator(".pairing-code").innerText()).trim();
    expect(code).toMatch(/^\d{2}$/);
    await check(page, testInfo, "1-laptop-waiting");

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
    await check(mobile, testInfo, "2-phone-asks-number");
    const wrong = code === "10" ? "11" : "10";
    await mobile.getByLabel(en.magicLink.pairCode, { exact: true }).fill(wrong);
    await mobile.getByRole("button", { name: en.magicLink.pairSubmit }).click();
    await expect(mobile.getByText(en.magicLink.pairWrong)).toBeVisible();
    await check(mobile, testInfo, "3-phone-wrong-number");
    await mobile.getByLabel(en.magicLink.pairCode, { exact: true }).fill(code);
    await mobile.getByRole("button", { name: en.magicLink.pairSubmit }).click();
    await expect(mobile.getByRole("heading", { level: 1 })).toHaveText(en.magicLink.pairedTitle);
    await check(mobile, testInfo, "4-phone-confirmed");

    // The laptop's page notices on its own and goes on: consent, then the relying party.
    await expect(page.getByRole("button", { name: en.consent.allow })).toBeVisible({ timeout: 20_000 });
    await page.getByRole("button", { name: en.consent.allow }).click();
    await page.waitForURL((u) => u.href.startsWith(org.redirectUri));
    const tokens = await oidc.authorizationCodeGrant(config, new URL(page.url()), { pkceCodeVerifier: verifier, expectedState: state });
    expect(tokens.claims()?.sub).toBe(org.user.id);
    expect([...problems, ...phoneProblems]).toEqual([]);
  } finally {
    await laptop.close();
    await phone.close();
  }
});
