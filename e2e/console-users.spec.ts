import { expect, test, type Browser } from "@playwright/test";
import { check as checkPage, signInToConsole, watchForPageErrors } from "./console-helpers";
import { CONSOLE_ADMINS, readSeed, type Seed } from "./seed";

/**
 * The console's user and role pages in Chromium: create a user without an invitation (the
 * browser's own check first), edit the profile while a second person edits the same user (their
 * save shows the conflict view), see the sessions and the history, give a role a permission and
 * take it away, delete a permission and the user. Every new page and state is screenshotted and
 * checked with axe (no serious or critical findings).
 */
let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

/** The shared check, with this spec's names in the artifacts. */
const check: typeof checkPage = (page, testInfo, name) => checkPage(page, testInfo, `users-${name}`);
const signIn = (page: Parameters<typeof signInToConsole>[0]) => signInToConsole(page, seed, CONSOLE_ADMINS.users);

async function signedInContext(browser: Browser) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signIn(page);
  return { context, page };
}

/** axe on a dozen pages of one journey takes a while on a small shared machine. */
const JOURNEY_TIMEOUT = 150_000;

test("a service-admin creates and edits a user, a second editor gets the conflict view, then the user is deleted", async ({ browser }, testInfo) => {
  test.setTimeout(JOURNEY_TIMEOUT);
  const alice = await signedInContext(browser);
  const bob = await signedInContext(browser);
  const page = alice.page;
  const problems = watchForPageErrors(page);
  const org = seed.organizations[0]!;

  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Organizations" }).click();
  await page.getByRole("link", { name: org.name }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(org.name);
  const orgUrl = page.url().replace(/\?.*$/, "");
  await page.getByRole("link", { name: "Users", exact: true }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Users");
  await expect(page.getByRole("heading", { name: "Create a user" })).toBeVisible();
  await check(page, testInfo, "users");

  // The browser checks with the same schema first: nothing is sent, the error is next to its field.
  await page.locator("#newEmail").fill("not an address");
  await page.getByRole("button", { name: "Create user" }).click();
  await expect(page.locator("#newEmail-error")).toHaveText("must be an email address");
  await check(page, testInfo, "user-create-invalid");

  const email = `created.${Date.now()}@e2e.example.test`;
  await page.locator("#newEmail").fill(email);
  await page.locator("#newGivenName").fill("Katherine");
  await page.locator("#newFamilyName").fill("Johnson");
  await page.locator("#newPassword").fill("a created users password 5");
  await page.getByRole("button", { name: "Create user" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(email);
  await expect(page.getByText("The user was created.")).toBeVisible();
  await expect(page.getByRole("heading", { name: "Sessions" })).toBeVisible();
  await expect(page.getByText("No active sessions.")).toBeVisible();
  await expect(page.getByRole("table", { name: "History" })).toContainText("user.created");
  await check(page, testInfo, "user-created");
  const userUrl = page.url().replace(/\?.*$/, "");

  // Bob opens the same user before Alice saves.
  await bob.page.goto(userUrl);
  await expect(bob.page.getByRole("heading", { level: 1 })).toHaveText(email);

  await page.getByLabel("Given name").fill("Kathy");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByText("The profile was saved.")).toBeVisible();
  await expect(page.getByRole("region", { name: "Details" })).toContainText("Kathy Johnson");
  await expect(page.getByRole("table", { name: "History" }).getByRole("row").nth(1)).toContainText("user.updated");
  await check(page, testInfo, "user-saved");

  await bob.page.getByLabel("Family name").fill("Goble");
  await bob.page.getByRole("button", { name: "Save" }).click();
  await expect(bob.page.getByRole("heading", { name: "Changed by someone else" })).toBeVisible();
  const conflict = bob.page.getByRole("table");
  await expect(conflict.getByRole("row", { name: /Given name/ })).toContainText("Kathy");
  await expect(conflict.getByRole("row", { name: /Family name/ })).toContainText("Goble");
  await check(bob.page, testInfo, "user-conflict");
  await bob.page.getByRole("link", { name: "Reload the current version" }).click();
  await expect(bob.page.getByLabel("Given name")).toHaveValue("Kathy");
  await expect(bob.page.getByLabel("Family name")).toHaveValue("Johnson");
  await bob.context.close();

  // The user goes, after a confirmation.
  await page.goto(userUrl);
  await page.getByText("Delete user", { exact: true }).last().click();
  await expect(page.getByText(`Delete ${email} for good? This cannot be undone.`)).toBeVisible();
  await page.getByRole("button", { name: "Confirm: Delete user" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Users");
  await expect(page.getByText("The user was deleted.")).toBeVisible();
  await check(page, testInfo, "user-deleted");

  // Down to a phone: the user page fits.
  await page.setViewportSize({ width: 375, height: 740 });
  await page.goto(`${orgUrl}/users/${org.user.id}`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(org.user.email);
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
  await check(page, testInfo, "user-phone");
  expect(problems).toEqual([]);
  await alice.context.close();
});

test("a service-admin renames a role, gives it a permission and takes it away, and deletes the permission", async ({ page }, testInfo) => {
  test.setTimeout(JOURNEY_TIMEOUT);
  const problems = watchForPageErrors(page);
  await signIn(page);
  const org = seed.organizations[1]!;
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Organizations" }).click();
  await page.getByRole("link", { name: org.name }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(org.name);
  const orgUrl = page.url().replace(/\?.*$/, "");

  // A permission and a role made here, then the role's own page.
  await page.goto(`${orgUrl}/roles`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Roles and permissions");
  await page.locator("#permissionName").fill("reports:read");
  await page.getByRole("button", { name: "Create permission" }).click();
  await expect(page.getByText("The permission was created.")).toBeVisible();
  await page.locator("#name").fill("analyst");
  await page.getByRole("button", { name: "Create role" }).click();
  await expect(page.getByText("The role was created.")).toBeVisible();
  await check(page, testInfo, "roles");
  await page.getByRole("link", { name: "analyst" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Role analyst");
  await expect(page.getByText("This role grants no permissions yet.")).toBeVisible();
  await check(page, testInfo, "role");
  await page.getByLabel("Permission to assign").selectOption({ label: "reports:read" });
  await page.getByRole("button", { name: "Assign permission" }).click();
  await expect(page.getByText("The permission was assigned.")).toBeVisible();
  await expect(page.getByRole("region", { name: "Permissions" }).getByText("reports:read", { exact: true })).toBeVisible();
  await check(page, testInfo, "role-assigned");
  await page.getByText("Remove reports:read", { exact: true }).click();
  await expect(page.getByText("Take reports:read from the role analyst? Everyone holding the role loses it.")).toBeVisible();
  await check(page, testInfo, "role-remove-confirm");
  await page.getByRole("button", { name: "Confirm: Remove reports:read" }).click();
  await expect(page.getByText("The permission was removed.")).toBeVisible();
  await page.getByLabel("Name", { exact: true }).fill("data-analyst");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Role data-analyst");
  await expect(page.getByText("The role was saved.")).toBeVisible();

  await page.getByRole("link", { name: "Roles and permissions" }).click();
  // A row's actions are in its menu.
  const permissionRow = page.getByRole("row", { name: /reports:read/ });
  await permissionRow.getByText("Actions").click();
  await permissionRow.getByText("Delete reports:read", { exact: true }).click();
  await page.getByRole("button", { name: "Confirm: Delete reports:read" }).click();
  await expect(page.getByText("The permission was deleted.")).toBeVisible();
  await check(page, testInfo, "permission-deleted");

  // Down to a phone: the role page fits.
  await page.setViewportSize({ width: 375, height: 740 });
  await page.getByRole("link", { name: "data-analyst" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Role data-analyst");
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
  await check(page, testInfo, "role-phone");
  expect(problems).toEqual([]);
});
