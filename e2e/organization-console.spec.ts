import { readFileSync } from "node:fs";
import { expect, test } from "@playwright/test";
import { Secret, TOTP } from "otpauth";
import type english from "../public/locales/en/login.json";
import type englishConsole from "../public/locales/en/console.json";
import { watchForPageErrors } from "./console-helpers";
import { checkPage } from "./journey-helpers";
import { readSeed, type Seed } from "./seed";

/**
 * An organization's own console (decision 090): its administrator signs in on the
 * organization's own page with a password and an authenticator app, sees the organization's
 * users and no one else's, and another organization's user id in the address is a not-found page.
 */
const en = JSON.parse(readFileSync(new URL("../public/locales/en/login.json", import.meta.url), "utf8")) as typeof english;
const oc = (JSON.parse(readFileSync(new URL("../public/locales/en/console.json", import.meta.url), "utf8")) as typeof englishConsole).organizationConsole;

let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

test("an organization administrator signs in with a second factor and sees only the organization's users", async ({ page }, testInfo) => {
  const { slug, admin, colleague } = seed.organizationAdmin!;
  const elsewhere = seed.organizations[0]!.user;
  const problems = watchForPageErrors(page);

  await page.goto(`/${slug}/console`);
  await expect(page).toHaveURL(/\/interaction\//);
  await page.getByLabel(en.signIn.email, { exact: true }).fill(admin.email);
  await page.getByLabel(en.signIn.password, { exact: true }).fill(admin.password);
  await page.getByRole("button", { name: en.signIn.submit }).click();
  await expect(page).toHaveURL(/\/interaction\/[^/]+\/two-factor$/);
  const app = new TOTP({ algorithm: "SHA1", digits: 6, period: 30, secret: Secret.fromBase32(admin.totpSecret) });
  // The seed confirmed the enrollment with the current step's code: the next step's is still unused.
  await page.getByLabel(en.twoFactor.code, { exact: true }).fill(app.generate({ timestamp: Date.now() + 30_000 }));
  await page.getByRole("button", { name: en.twoFactor.verify }).click();

  await expect(page).toHaveURL(new RegExp(`/${slug}/console$`));
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(oc.users);
  await expect(page.getByRole("link", { name: admin.email })).toBeVisible();
  await expect(page.getByRole("link", { name: colleague.email })).toBeVisible();
  await expect(page.getByText(elsewhere.email)).toHaveCount(0);
  await checkPage(page, testInfo, "organization-console-users");

  await page.getByRole("link", { name: colleague.email }).click();
  await expect(page).toHaveURL(new RegExp(`/${slug}/console/users/${colleague.id}$`));
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(colleague.email);

  // Another organization's person, named in the address: not found.
  const response = await page.goto(`/${slug}/console/users/${elsewhere.id}`);
  expect(response?.status()).toBe(404);
  await expect(page.getByText(elsewhere.email)).toHaveCount(0);
  expect(problems).toEqual([]);
});
