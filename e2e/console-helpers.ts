import { expect, type Page, type TestInfo } from "@playwright/test";
import { checkPage } from "./journey-helpers";
import type { Seed } from "./seed";

/** What every console spec does: screenshot and axe each page, watch for script errors, sign in. */

export async function check(page: Page, testInfo: TestInfo, name: string) {
  await checkPage(page, testInfo, `console-${name}`, `the console ${name} page`);
}

/** Uncaught errors and CSP refusals (a missing nonce would stop hydration and the live slug check). */
export function watchForPageErrors(page: Page): string[] {
  const problems: string[] = [];
  // The page's address tells which page threw (a navigation may already have left it).
  page.on("pageerror", (error) => problems.push(`pageerror at ${page.url()}: ${error.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error" && /Content Security Policy|Refused to/i.test(msg.text())) problems.push(`console: ${msg.text()}`);
  });
  return problems;
}

/** Signs in as the seed's bootstrap admin, or as `person` (each spec has its own, see CONSOLE_ADMINS). */
export async function signInToConsole(page: Page, seed: Seed, person: { email: string; password: string } = seed.admin) {
  await page.goto("/console");
  await expect(page).toHaveURL(/\/interaction\//);
  await page.getByLabel("Email address", { exact: true }).fill(person.email);
  await page.getByLabel("Password", { exact: true }).fill(person.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page).toHaveURL(/\/console$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Dashboard");
}

/** The header's account menu (language and Sign out live there, so that the header fits one row). */
export async function openAccountMenu(page: Page) {
  const menu = page.locator("details.console-account");
  if (!(await menu.evaluate((el) => (el as HTMLDetailsElement).open))) await menu.locator("summary").click();
  await expect(menu.getByRole("button", { name: "Sign out" }).or(menu.getByRole("button", { name: "Abmelden" }))).toBeVisible();
}

/** Signs out of the console through the account menu. */
export async function signOutOfConsole(page: Page) {
  await openAccountMenu(page);
  await page.getByRole("button", { name: "Sign out" }).click();
}
