import { expect, test } from "@playwright/test";
import { check, openAccountMenu, signInToConsole, watchForPageErrors } from "./console-helpers";
import { CONSOLE_ADMINS, readSeed, type Seed } from "./seed";

/**
 * The console's overview parts in Chromium: logins over time on the dashboard with its figures,
 * the language switch, the audit log's day filter, an organization's figures and history, bulk
 * operations counting rows as they run, and the branding images. Each state is screenshotted and
 * checked with axe.
 */
let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

test("logins over time, the language switch, the audit day filter and an organization's history", async ({ page }, testInfo) => {
  const problems = watchForPageErrors(page);
  await signInToConsole(page, seed, CONSOLE_ADMINS.overview);
  const chart = page.getByRole("figure", { name: "Logins per day, last 14 days (UTC)" });
  await expect(chart).toBeVisible();
  await chart.getByText("Show the figures").click();
  const figures = chart.getByRole("table", { name: "Logins per day, last 14 days (UTC)" });
  await expect(figures.getByRole("row")).toHaveCount(15);
  // The admin's own sign-in a moment ago is today's (last) row.
  await expect(figures.getByRole("row").last().getByRole("cell").last()).not.toHaveText("0");
  await check(page, testInfo, "dashboard-daily");

  await openAccountMenu(page);
  await page.getByRole("button", { name: "Deutsch" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Übersicht");
  await expect(page.locator("html")).toHaveAttribute("lang", "de");
  await check(page, testInfo, "dashboard-german");
  await openAccountMenu(page);
  await page.getByRole("button", { name: "English" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Dashboard");

  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Audit log" }).click();
  const today = new Date().toISOString().slice(0, 10);
  await page.getByLabel("From (day)").fill(today);
  await page.getByLabel("Event type (e.g. organization.* )").fill("auth.login.success");
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(page).toHaveURL(new RegExp(`from=${today}`));
  await expect(page.getByRole("cell", { name: "auth.login.success" }).first()).toBeVisible();
  await check(page, testInfo, "audit-day-filter");

  // Configuration values are checked in the page with the key's own schema before they are sent.
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Configuration" }).click();
  const minLength = page.getByLabel("auth.passwordMinLength");
  await minLength.fill("3");
  let posted = false;
  page.on("request", (request) => {
    if (request.method() === "POST" && request.url().includes("/console/config")) posted = true;
  });
  await minLength.locator("xpath=ancestor::form").getByRole("button", { name: "Save" }).click();
  await expect(page.getByRole("alert")).toContainText(">=8");
  await expect(minLength).toHaveAttribute("aria-invalid", "true");
  expect(posted).toBe(false);
  await check(page, testInfo, "config-checked");

  const org = seed.organizations[0]!;
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Organizations" }).click();
  await page.getByRole("searchbox", { name: "Search by name or slug" }).fill(org.slug);
  await page.getByRole("button", { name: "Search" }).click();
  await page.getByRole("link", { name: org.name }).click();
  await expect(page.getByRole("heading", { name: "Figures" })).toBeVisible();
  await expect(page.getByRole("heading", { name: "History" })).toBeVisible();
  await check(page, testInfo, "organization-figures");
  expect(problems).toEqual([]);
});

test("bulk operations count rows as they run, and branding images can be removed", async ({ page }, testInfo) => {
  const problems = watchForPageErrors(page);
  await signInToConsole(page, seed, CONSOLE_ADMINS.overview);
  const org = seed.organizations[1]!;
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Organizations" }).click();
  await page.getByRole("searchbox", { name: "Search by name or slug" }).fill(org.slug);
  await page.getByRole("button", { name: "Search" }).click();
  await page.getByRole("link", { name: org.name }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(org.name);
  const orgUrl = page.url().replace(/\?.*$/, "");

  await page.goto(`${orgUrl}/bulk`);
  const rows = Array.from({ length: 25 }, (_, i) => `create,steps${i}@bulk-e2e.example.test,Step${i}`);
  await page.getByLabel("Operations (CSV)").setInputFiles({ name: "people.csv", mimeType: "text/csv", buffer: Buffer.from(["op,email,givenName", ...rows].join("\n")) });
  await page.getByLabel("If a row fails").selectOption("best_effort");
  // Hold the second chunk back a moment, so that the progress in between can be seen.
  let calls = 0;
  await page.route("**/bulk/run", async (route) => {
    if (calls++ === 2) await new Promise((resolve) => setTimeout(resolve, 1500));
    await route.continue();
  });
  await page.getByRole("button", { name: "Run the operations" }).click();
  const progress = page.getByRole("status").filter({ hasText: "rows done" });
  await expect(progress).toContainText("10 of 25 rows done");
  await expect(progress.getByRole("progressbar")).toHaveAttribute("value", "10");
  await expect(page.getByRole("heading", { name: "25 succeeded, 0 failed" })).toBeVisible();
  const results = page.getByRole("table", { name: "Result per row" });
  await expect(results.getByRole("row")).toHaveCount(26);
  await expect(results).toContainText("steps24@bulk-e2e.example.test");
  await check(page, testInfo, "bulk-in-steps");

  await page.goto(`${orgUrl}/branding`);
  await page.getByLabel("Image file (PNG, JPEG, WebP, SVG or ICO)").setInputFiles({
    name: "logo.png",
    mimeType: "image/png",
    buffer: Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64"),
  });
  // The file goes up with the settings' Save: choosing a file and pressing Save never drops it.
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByText("The branding was saved.")).toBeVisible();
  const images = page.getByRole("region", { name: "Current images" });
  await expect(images.getByRole("img", { name: "Logo" })).toBeVisible();
  await check(page, testInfo, "branding-images");
  await images.getByText("Remove", { exact: true }).first().click();
  await images.getByRole("button", { name: "Confirm: Remove" }).click();
  await expect(page.getByText("The image was removed.")).toBeVisible();
  await expect(page.getByRole("region", { name: "Current images" }).getByRole("img", { name: "Logo" })).toHaveCount(0);
  expect(problems).toEqual([]);
});
