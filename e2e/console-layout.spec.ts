import { expect, test, type Page, type TestInfo } from "@playwright/test";
import { check as checkPage, openAccountMenu, signInToConsole, watchForPageErrors } from "./console-helpers";
import { CONSOLE_ADMINS, readSeed, type Seed } from "./seed";

/**
 * The console's calm layout as an operator meets it (decision 040): the header is one row at
 * 1280 px and a Menu on a phone (390 px), working without script; one danger colour only for
 * what cannot be undone, neutral buttons for what can; a list's row actions in a menu; long
 * detail pages with an "On this page" navigation; empty states that say what to do next; the
 * dashboard's figures add up, in English and German. Each state is screenshotted and checked
 * with axe at both widths.
 */
let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const check = (page: Page, testInfo: TestInfo, name: string) => checkPage(page, testInfo, `layout-${name}`);

async function checkBoth(page: Page, testInfo: TestInfo, name: string) {
  await page.setViewportSize(DESKTOP);
  await check(page, testInfo, `${name}-1280`);
  await page.setViewportSize(PHONE);
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${name}: the page scrolls sideways on a phone`).toBe(true);
  await check(page, testInfo, `${name}-390`);
  await page.setViewportSize(DESKTOP);
}

/** The rendered background colour of an element (a button or a summary styled as one). */
const background = (page: Page, selector: ReturnType<Page["locator"]>) => selector.evaluate((el) => getComputedStyle(el).backgroundColor);
const DANGER = "rgb(180, 35, 24)";

test("the header is one row at 1280 px and a menu on a phone; the account menu holds the language and sign-out", async ({ page }, testInfo) => {
  test.setTimeout(180_000);
  const problems = watchForPageErrors(page);
  await page.setViewportSize(DESKTOP);
  await signInToConsole(page, seed, CONSOLE_ADMINS.layout);
  const header = page.getByRole("banner");
  const nav = page.getByRole("navigation", { name: "Console" });
  await expect(nav.getByRole("link", { name: "Audit log" })).toBeVisible();
  // One row: the brand, every area and the account menu share a line.
  const boxes = await Promise.all([header.locator(".console-brand"), nav, header.locator(".console-account > summary")].map((l) => l.boundingBox()));
  const centers = boxes.map((b) => b!.y + b!.height / 2);
  expect(Math.max(...centers) - Math.min(...centers)).toBeLessThan(12);
  expect((await header.boundingBox())!.height).toBeLessThan(72);
  // Every area is whole and uncovered: the last one ends before the account menu begins.
  const lastArea = (await nav.getByRole("link", { name: "Audit log" }).boundingBox())!;
  const account = (await header.locator(".console-account > summary").boundingBox())!;
  expect(lastArea.x + lastArea.width).toBeLessThanOrEqual(account.x);
  await nav.getByRole("link", { name: "Audit log" }).click({ trial: true });
  await expect(page.getByRole("button", { name: "Sign out" })).toBeHidden();
  await check(page, testInfo, "header-1280");

  await openAccountMenu(page);
  await expect(page.getByText(`Signed in as ${CONSOLE_ADMINS.layout.email}`)).toBeVisible();
  await expect(page.getByRole("button", { name: "Deutsch" })).toBeVisible();
  await check(page, testInfo, "account-menu-1280");

  // The dashboard's figures add up: the organizations figure is its chart's rows, in words.
  const orgs = page.getByRole("region", { name: "Organizations" });
  const figure = (await orgs.locator(".figure").innerText()).trim();
  expect(figure).toMatch(/^(1 organization|\d+ organizations)$/);
  const rows = (await orgs.locator(".bar-value").allInnerTexts()).map(Number);
  expect(rows.reduce((a, b) => a + b, 0)).toBe(Number(figure.split(" ")[0]));
  await page.getByRole("button", { name: "Deutsch" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Übersicht");
  await expect(page.getByRole("region", { name: "Organisationen" }).locator(".figure")).toHaveText(/^(1 Organisation|\d+ Organisationen)$/);
  await checkBoth(page, testInfo, "dashboard-german");
  await openAccountMenu(page);
  await page.getByRole("button", { name: "English" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Dashboard");

  // A phone: the areas fold into a Menu; opening it shows them, choosing one goes there and closes it.
  await page.setViewportSize(PHONE);
  await expect(page.getByRole("link", { name: "Audit log" })).toBeHidden();
  const menu = header.getByText("Menu", { exact: true });
  await expect(menu).toBeVisible();
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
  await check(page, testInfo, "header-390");
  await menu.click();
  await expect(page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Organizations" })).toBeVisible();
  await check(page, testInfo, "header-menu-open-390");
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Organizations" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Organizations");
  await expect(page.getByRole("link", { name: "Audit log" })).toBeHidden();
  expect(problems).toEqual([]);
});

test("danger only for what cannot be undone, row actions in menus, section navigation and empty states that say what next", async ({ page }, testInfo) => {
  test.setTimeout(240_000);
  const problems = watchForPageErrors(page);
  await page.setViewportSize(DESKTOP);
  await signInToConsole(page, seed, CONSOLE_ADMINS.layout);
  const org = seed.organizations.find((o) => o.row === "password")!;
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Organizations" }).click();
  await page.getByRole("link", { name: org.name }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(org.name);
  const orgUrl = page.url().replace(/\?.*$/, "");

  // The organization page: its sections one click away; suspending is neutral, deleting is the danger.
  const onThisPage = page.getByRole("navigation", { name: "On this page" });
  await expect(onThisPage.getByRole("link")).toHaveText(["Connect an app", "Edit organization", "Actions", "Figures", "History"].map((s) => new RegExp(s)));
  await onThisPage.getByRole("link", { name: "History" }).click();
  await expect(page).toHaveURL(/#history-title$/);
  await expect(page.getByRole("heading", { name: "History" })).toBeInViewport();
  const actions = page.getByRole("region", { name: "Actions" });
  expect(await background(page, actions.getByText("Suspend", { exact: true }))).not.toBe(DANGER);
  expect(await background(page, actions.getByText("Delete", { exact: true }))).toBe(DANGER);
  await checkBoth(page, testInfo, "organization");

  // The user page: Deactivate is reversible (neutral); Sign out everywhere and Delete are the danger.
  await page.goto(`${orgUrl}/users/${org.user.id}`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(org.user.email);
  const userSections = page.getByRole("navigation", { name: "On this page" });
  await expect(userSections.getByRole("link", { name: "Roles" })).toBeVisible();
  await userSections.getByRole("link", { name: "Delete user" }).click();
  await expect(page.getByRole("heading", { name: "Delete user" })).toBeInViewport();
  expect(await background(page, page.getByText("Deactivate", { exact: true }))).not.toBe(DANGER);
  expect(await background(page, page.getByText("Sign out everywhere", { exact: true }))).toBe(DANGER);
  expect(await background(page, page.getByText("Delete user", { exact: true }).last())).toBe(DANGER);
  await checkBoth(page, testInfo, "user");

  // The clients list: no column of red buttons; each row's actions wait in its menu.
  await page.goto(`${orgUrl}/clients`);
  const row = page.getByRole("row", { name: /Test client/ });
  await expect(row.getByRole("button", { name: /Deactivate/ })).toHaveCount(0);
  await expect(page.locator("main .button-danger:visible")).toHaveCount(0);
  await row.getByText("Actions").click();
  await expect(row.getByText("Deactivate client", { exact: true })).toBeVisible();
  expect(await background(page, row.getByText("Deactivate client", { exact: true }))).not.toBe(DANGER);
  await checkBoth(page, testInfo, "clients-row-menu");
  await page.getByRole("link", { name: "Test client" }).first().click();
  await expect(page.getByRole("navigation", { name: "On this page" }).getByRole("link", { name: "Client secrets" })).toBeVisible();
  await checkBoth(page, testInfo, "client");

  // Empty states say what to do next.
  await page.goto(`${orgUrl}/users?q=${encodeURIComponent("nobody-matches-this")}`);
  await expect(page.getByText("No user matches this search. Try part of the email address or name.")).toBeVisible();
  await check(page, testInfo, "users-empty-search");
  await page.goto(`/console/organizations?q=${encodeURIComponent("no-such-organization")}`);
  await expect(page.getByText("No organization matches. Create one with “New organization”.")).toBeVisible();
  await checkBoth(page, testInfo, "organizations-empty");
  expect(problems).toEqual([]);
});
