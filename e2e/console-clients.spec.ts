import { expect, test, type Browser, type Page } from "@playwright/test";
import { check, signInToConsole, watchForPageErrors } from "./console-helpers";
import { CONSOLE_ADMINS, readSeed, type Seed } from "./seed";

/**
 * The console's client and application pages in Chromium: create a confidential client, open its
 * page, generate a second secret (shown once, with a copy button), revoke the first one, set a
 * login-method override, meet the conflict view when a second person saved first, and manage an
 * application's modules. Every new page and state is screenshotted and checked with axe.
 */
let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

const signIn = (page: Page) => signInToConsole(page, seed, CONSOLE_ADMINS.clients);

async function createOrganization(page: Page, name: string, slug: string) {
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Organizations" }).click();
  await page.getByRole("link", { name: "New organization" }).click();
  await page.getByLabel("Name", { exact: true }).fill(name);
  await page.getByLabel("Slug", { exact: true }).fill(slug);
  await expect(page.getByText("This slug is available.")).toBeVisible();
  await page.getByRole("button", { name: "Create organization" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(name);
}

async function signedInContext(browser: Browser) {
  const context = await browser.newContext({ permissions: ["clipboard-read", "clipboard-write"] });
  const page = await context.newPage();
  await signIn(page);
  return { context, page };
}

test("a service-admin adds, edits and deactivates an application's module", async ({ page }, testInfo) => {
  const problems = watchForPageErrors(page);
  await signIn(page);
  await createOrganization(page, "Module Pages GmbH", "e2e-module-pages");

  // An application with a module, edited and deactivated.
  await page.getByRole("link", { name: "Applications" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Applications");
  await page.getByLabel("Name", { exact: true }).fill("Billing Portal");
  await page.getByRole("button", { name: "Create application" }).click();
  await page.getByRole("link", { name: "Billing Portal" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Billing Portal");
  await check(page, testInfo, "app-detail");
  const newModule = page.getByRole("form", { name: "New module" });
  await newModule.getByRole("button", { name: "Add module" }).click();
  await expect(page.locator("#module-name-error")).toHaveText("must not be empty");
  await newModule.getByLabel("Module name").fill("Invoices");
  await newModule.getByLabel("Description").fill("Monthly bills");
  await newModule.getByRole("button", { name: "Add module" }).click();
  await expect(page.getByText("The module was added.")).toBeVisible();
  const modules = page.getByRole("region", { name: "Modules" });
  await expect(modules.getByRole("row", { name: /Invoices/ })).toContainText("Monthly bills");
  await check(page, testInfo, "app-module-added");
  await page.getByText("Edit Invoices", { exact: true }).click();
  const row = modules.getByRole("row", { name: /Invoices/ });
  await row.getByLabel("Module name").fill("Invoicing");
  await row.getByRole("button", { name: "Save" }).click();
  await expect(page.getByText("The module was saved.")).toBeVisible();
  await page.getByText("Deactivate Invoicing", { exact: true }).click();
  await expect(page.getByText("Deactivate the module Invoicing?")).toBeVisible();
  await check(page, testInfo, "app-module-confirm");
  await page.getByRole("button", { name: "Confirm: Deactivate Invoicing" }).click();
  await expect(page.getByText("The module was deactivated.")).toBeVisible();
  await expect(modules.getByRole("row", { name: /Invoicing/ })).toContainText("inactive");
  await expect(page.getByRole("region", { name: "History" })).toContainText("application.module_deactivated");
  await check(page, testInfo, "app-history");
  expect(problems).toEqual([]);
});

test("a service-admin manages a confidential client: secrets, override, conflict, delete", async ({ browser }, testInfo) => {
  // Two signed-in browsers and a dozen page loads, each checked with axe: more than the default minute on a busy machine.
  const alice = await signedInContext(browser);
  const page = alice.page;
  const problems = watchForPageErrors(page);
  await createOrganization(page, "Client Pages GmbH", "e2e-client-pages");
  const orgUrl = page.url().replace(/\?.*$/, "");

  // A confidential client: its first secret is shown once on the list page.
  await page.goto(`${orgUrl}/clients`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Clients");
  await page.getByLabel("Client name", { exact: true }).fill("Console Machine");
  await page.getByLabel("Redirect URIs").fill("https://rp.example.test/console-clients-cb");
  await page.getByRole("button", { name: "Create client" }).click();
  const firstSecret = await page.locator("#client-secret").inputValue();
  expect(firstSecret.length).toBeGreaterThanOrEqual(32);
  // The notice of the new client links to its page, as the list below does.
  await page.getByRole("link", { name: "Open Console Machine" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Console Machine");
  // A new organization's default is both methods, from the console as from the Admin API.
  await expect(page.getByText("Inherits the organization default (Password, Magic link).")).toBeVisible();
  await expect(page.locator("#client-secret")).toHaveCount(0);
  await check(page, testInfo, "client-detail");
  const clientUrl = page.url().replace(/\?.*$/, "");

  // A second secret: visible once, with a copy button that copies it.
  await page.getByRole("button", { name: "Generate new secret" }).click();
  const secretPanel = page.getByRole("region", { name: "Client secret — shown only once" });
  await expect(secretPanel).toBeVisible();
  const secondSecret = await secretPanel.getByLabel("Client secret").inputValue();
  expect(secondSecret).not.toBe(firstSecret);
  await secretPanel.getByRole("button", { name: "Copy secret" }).click();
  await expect(secretPanel.getByText("Copied to the clipboard.")).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secondSecret);
  await check(page, testInfo, "client-secret-once");
  await page.goto(clientUrl);
  await expect(page.locator("#client-secret")).toHaveCount(0);
  expect(await page.content()).not.toContain(secondSecret);

  // Revoke the first secret; the second stays active.
  const secrets = page.getByRole("region", { name: "Client secrets" });
  const firstHint = firstSecret.slice(-4);
  await secrets.getByText(`Revoke secret …${firstHint}`, { exact: true }).click();
  await expect(secrets.getByText(`Revoke the secret ending in ${firstHint}? It stops working at once.`)).toBeVisible();
  await check(page, testInfo, "client-revoke-confirm");
  await secrets.getByRole("button", { name: `Confirm: Revoke secret …${firstHint}` }).click();
  await expect(page.getByText("The secret was revoked.")).toBeVisible();
  await expect(secrets.getByRole("row", { name: new RegExp(`…${firstHint}`) })).toContainText("revoked");
  await expect(secrets.getByRole("row", { name: new RegExp(`…${secondSecret.slice(-4)}`) })).toContainText("active");

  // A login-method override, and the way back to the default.
  const login = page.getByRole("region", { name: "Login methods" });
  await login.getByLabel("Password", { exact: true }).uncheck();
  await login.getByLabel("Magic link", { exact: true }).uncheck();
  await login.getByRole("button", { name: "Set override" }).click();
  await expect(page.locator("#loginMethods-error")).toBeVisible();
  await login.getByLabel("Magic link", { exact: true }).check();
  await login.getByRole("button", { name: "Set override" }).click();
  await expect(page.getByText("The login-method override was saved.")).toBeVisible();
  await expect(page.getByText("Override for this client: Magic link.")).toBeVisible();
  await check(page, testInfo, "client-override");

  // Two people edit the client: the second save shows the conflict view.
  const bob = await signedInContext(browser);
  await bob.page.goto(clientUrl);
  await page.getByLabel("Client name", { exact: true }).fill("Console Machine (Alice)");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByText("The client was saved.")).toBeVisible();
  await bob.page.getByLabel("Client name", { exact: true }).fill("Console Machine (Bob)");
  await bob.page.getByLabel("Scope").fill("openid email");
  await bob.page.getByRole("button", { name: "Save" }).click();
  const conflict = bob.page.getByRole("region", { name: "Changed by someone else" });
  await expect(conflict).toBeVisible();
  await expect(conflict.getByRole("row", { name: /Client name/ })).toContainText("Console Machine (Alice)");
  await expect(conflict.getByRole("row", { name: /Client name/ })).toContainText("Console Machine (Bob)");
  await check(bob.page, testInfo, "client-conflict");
  await conflict.getByRole("link", { name: "Reload the current version" }).click();
  await expect(bob.page.getByLabel("Client name", { exact: true })).toHaveValue("Console Machine (Alice)");

  // Bad input stays in the browser, next to its field.
  await page.getByLabel("Redirect URIs", { exact: true }).fill("not a url");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.locator("#redirectUris-error")).toHaveText("must be an absolute URL");
  await check(page, testInfo, "client-invalid");

  await expect(page.getByRole("region", { name: "History" })).toContainText("client.secret_revoked");
  await page.setViewportSize({ width: 375, height: 740 });
  await page.goto(clientUrl);
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
  await check(page, testInfo, "client-phone");
  await page.setViewportSize({ width: 1280, height: 720 });

  // Delete the client: back to the list with a notice.
  await page.getByText("Delete client", { exact: true }).click();
  await page.getByRole("button", { name: "Confirm: Delete client" }).click();
  await expect(page.getByText("The client was deleted.")).toBeVisible();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Clients");

  expect(problems).toEqual([]);
  await alice.context.close();
  await bob.context.close();
});

test("a service-admin adds an API resource, describes its scopes, grants a client some of them and deletes it", async ({ page }, testInfo) => {
  const problems = watchForPageErrors(page);
  await signIn(page);
  await createOrganization(page, "Resource Pages GmbH", "e2e-resource-pages");
  const orgUrl = page.url().replace(/\?.*$/, "");

  await page.getByRole("link", { name: "API resources" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("API resources");
  await expect(page.getByText("No API resources yet.")).toBeVisible();
  const form = page.getByRole("form", { name: "Add an API resource" });
  await form.getByLabel("Identifier").fill("/orders");
  await form.getByLabel("Name", { exact: true }).fill("Orders");
  await form.getByRole("button", { name: "Add API resource" }).click();
  await expect(page.locator("#identifier-error")).toHaveText("must be an absolute URI");
  await check(page, testInfo, "api-resources-invalid");
  await form.getByLabel("Identifier").fill("https://api.example.test/orders");
  await form.getByLabel("Scopes", { exact: true }).fill("orders:read orders:write");
  await form.getByRole("button", { name: "Add API resource" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Orders");
  await expect(page.getByText("API resource added.")).toBeVisible();
  await page.getByLabel("Description of orders:read").fill("Read your orders");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByText("Saved.")).toBeVisible();
  await check(page, testInfo, "api-resource-detail");
  const resourceUrl = page.url().replace(/\?.*$/, "");

  // A client granted orders:read on its own page.
  await page.goto(`${orgUrl}/clients`);
  await page.getByLabel("Client name", { exact: true }).fill("Orders Reader");
  await page.getByLabel("Redirect URIs").fill("https://rp.example.test/resource-pages-cb");
  await page.getByRole("button", { name: "Create client" }).click();
  await page.getByRole("link", { name: "Open Orders Reader" }).click();
  const grants = page.getByRole("region", { name: "API resources" });
  await expect(grants.getByText("Not granted.")).toBeVisible();
  await grants.getByLabel("orders:read (Read your orders)").check();
  await grants.getByRole("button", { name: "Grant Orders" }).click();
  await expect(page.getByText("API resource granted.")).toBeVisible();
  await expect(grants.getByText("Granted: orders:read")).toBeVisible();
  await check(page, testInfo, "client-api-resources");

  // Deleted behind a confirmation.
  await page.goto(resourceUrl);
  await page.getByText("Delete", { exact: true }).click();
  await expect(page.getByText("Delete Orders (https://api.example.test/orders)?")).toBeVisible();
  await page.getByRole("button", { name: "Confirm: Delete" }).click();
  await expect(page.getByText("API resource deleted.")).toBeVisible();
  await expect(page.getByText("No API resources yet.")).toBeVisible();

  expect(problems).toEqual([]);
});
