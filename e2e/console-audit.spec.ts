import { expect, test, type Page, type TestInfo } from "@playwright/test";
import { check as checkPage, signInToConsole, watchForPageErrors } from "./console-helpers";
import { CONSOLE_ADMINS, readSeed, type Seed } from "./seed";

/**
 * Names, not ids (decision 039): an operator edits a person, then finds the change in the audit
 * log by the person's email, first in a browser without JavaScript (a plain GET form the server
 * resolves; a partial email offers the whole one), then with it (suggestions while typing);
 * opens the entry and reads the change as a diff; the sessions page names the user and client
 * with IP address and browser. Each new page and state is checked with axe and screenshotted at
 * 1280 px and 390 px.
 */
let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

/** axe and a full-page screenshot at both widths. */
async function check(page: Page, testInfo: TestInfo, name: string) {
  await page.setViewportSize(DESKTOP);
  await checkPage(page, testInfo, `audit-${name}-1280`);
  await page.setViewportSize(PHONE);
  await checkPage(page, testInfo, `audit-${name}-390`);
  await page.setViewportSize(DESKTOP);
}

async function screenshot(page: Page, testInfo: TestInfo, name: string) {
  for (const [width, size] of [[1280, DESKTOP], [390, PHONE]] as const) {
    await page.setViewportSize(size);
    const shot = testInfo.outputPath(`console-audit-${name}-${width}.png`);
    await page.screenshot({ path: shot, fullPage: true });
    await testInfo.attach(`console-audit-${name}-${width}`, { path: shot, contentType: "image/png" });
  }
  await page.setViewportSize(DESKTOP);
}

test("an operator finds a change by the person's email, with and without JavaScript, and reads it as a diff; sessions are named", async ({ browser }, testInfo) => {
  test.setTimeout(240_000);
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const problems = watchForPageErrors(page);
  const admin = CONSOLE_ADMINS.audit;
  await signInToConsole(page, seed, admin);
  const org = seed.organizations[0]!;

  // A person to look for: created, then renamed.
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Organizations" }).click();
  await page.getByRole("link", { name: org.name }).click();
  await page.getByRole("link", { name: "Users", exact: true }).click();
  const email = `audited.${Date.now()}@e2e.example.test`;
  await page.locator("#newEmail").fill(email);
  await page.locator("#newGivenName").fill("Dorothy");
  await page.locator("#newFamilyName").fill("Vaughan");
  await page.locator("#newPassword").fill("an audited users password 8");
  await page.getByRole("button", { name: "Create user" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(email);
  await page.getByLabel("Given name").fill("Dot");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByText("The profile was saved.")).toBeVisible();
  // The history names who did it.
  const history = page.getByRole("table", { name: "History" });
  await expect(history.getByRole("row").nth(1)).toContainText("user.updated");
  await expect(history.getByRole("row").nth(1)).toContainText(admin.email);
  await expect(history.getByRole("row").nth(1)).toContainText("givenName: Dorothy → Dot");

  // Without JavaScript: the filter is a plain form the server resolves.
  const plain = await browser.newContext({ viewport: DESKTOP, javaScriptEnabled: false, storageState: await context.storageState() });
  const noJs = await plain.newPage();
  await noJs.goto("/console/audit");
  await expect(noJs.getByRole("heading", { level: 1 })).toHaveText("Audit log");
  // A part of the address: the page says nothing is named so and offers the whole address.
  await noJs.getByLabel("Target").fill(email.slice(0, 16));
  await noJs.getByRole("button", { name: "Apply filters" }).click();
  await expect(noJs.locator("#target-error")).toContainText(`Nothing is named “${email.slice(0, 16)}”`);
  await screenshot(noJs, testInfo, "no-match-nojs");
  await noJs.getByRole("navigation", { name: "Target: did you mean" }).getByRole("link", { name: email }).click();
  await expect(noJs).toHaveURL(new RegExp(`target=${encodeURIComponent(email).replace(/\./g, "\\.")}`));
  const rows = noJs.getByRole("table", { name: "Audit log" }).getByRole("row");
  await expect(rows).toHaveCount(3);
  await expect(rows.nth(1)).toContainText("user.updated");
  await expect(rows.nth(1).getByRole("link", { name: email })).toHaveAttribute("title", /^user [0-9a-f-]{36}$/);
  await expect(rows.nth(1).getByRole("link", { name: admin.email })).toBeVisible();
  await expect(rows.nth(1).getByRole("link", { name: org.name })).toBeVisible();
  await expect(rows.nth(2)).toContainText("user.created");
  await screenshot(noJs, testInfo, "filtered-nojs");
  await plain.close();

  // With JavaScript: the same page suggests what the typed text is part of.
  await page.goto("/console/audit");
  await check(page, testInfo, "log");
  await page.getByLabel("Target").pressSequentially(email.slice(0, 16), { delay: 20 });
  await expect(page.locator(`#target-suggestions option[value="${email}"]`)).toHaveCount(1);
  await page.getByLabel("Target").fill(email);
  await page.getByRole("button", { name: "Apply filters" }).click();
  const filtered = page.getByRole("table", { name: "Audit log" }).getByRole("row");
  await expect(filtered).toHaveCount(3);
  await check(page, testInfo, "filtered");
  await page.getByLabel("Target").fill("no such person anywhere");
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(page.locator("#target-error")).toContainText("Nothing is named “no such person anywhere”");
  await check(page, testInfo, "no-match");

  // The entry on its own page: the change field by field.
  await page.goBack();
  await expect(filtered).toHaveCount(3);
  await filtered.nth(1).getByTitle("Open the user.updated entry").click();
  await expect(page).toHaveURL(/\/console\/audit\/[0-9a-f-]{36}$/);
  const diff = page.getByRole("table", { name: "What changed" });
  await expect(diff.getByRole("row")).toHaveCount(2);
  await expect(diff.getByRole("row").nth(1)).toHaveText(/givenName\s*Dorothy\s*Dot/);
  await expect(page.getByRole("region", { name: "What happened" }).getByRole("link", { name: email })).toBeVisible();
  await check(page, testInfo, "entry");

  // Sessions: the admin's own console session, by name, with where it was used from.
  await page.goto("/console/sessions");
  await page.getByLabel("User", { exact: true }).fill(admin.email);
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(page).toHaveURL(/user=audit-admin%40e2e\.example\.test/);
  const mine = page.getByRole("table", { name: "Sessions" }).getByRole("row").filter({ hasText: admin.email }).first();
  await expect(mine).toContainText("127.0.0.1");
  await expect(mine).toContainText(/Chrome/);
  await expect(mine.getByRole("link", { name: admin.email })).toBeVisible();
  await check(page, testInfo, "sessions");

  expect(problems).toEqual([]);
  await context.close();
});
