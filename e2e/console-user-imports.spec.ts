import { expect, test } from "@playwright/test";
import { check, signInToConsole, watchForPageErrors } from "./console-helpers";
import { CONSOLE_ADMINS, readSeed, type Seed } from "./seed";

/**
 * The console's Import users page in Debian Chromium: an operator picks the format and a Keycloak
 * realm export, reads what would happen, applies it, and sees the new secret of the realm's
 * client once; the imported person is listed among the organization's users.
 */
let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

test("an operator previews and applies a Keycloak realm export, and sees an imported client's new secret once", async ({ page }, testInfo) => {
  const problems = watchForPageErrors(page);
  await signInToConsole(page, seed, CONSOLE_ADMINS.integration);
  const slug = `e2e-import-${Date.now().toString(36)}`;
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Organizations" }).click();
  await page.getByRole("link", { name: "New organization" }).click();
  await page.getByLabel("Name", { exact: true }).fill("Imported Co");
  await page.getByLabel("Slug", { exact: true }).fill(slug);
  await expect(page.getByText("This slug is available.")).toBeVisible();
  await page.getByRole("button", { name: "Create organization" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Imported Co");

  await page.getByRole("link", { name: "Import users" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Import users");
  await check(page, testInfo, "user-imports-upload");
  const realm = {
    realm: "acme",
    users: [
      { username: "ivy", email: `ivy@${slug}.example.test`, emailVerified: true, firstName: "Ivy", realmRoles: ["staff"] },
      { username: "service-account-web" },
    ],
    clients: [{ clientId: "web", name: "Acme web", publicClient: false, standardFlowEnabled: true, redirectUris: ["https://web.example.test/cb", "https://web.example.test/*"] }],
  };
  await page.getByLabel("Format").selectOption("keycloak");
  await page.getByLabel("File", { exact: true }).setInputFiles({ name: "acme-realm.json", mimeType: "application/json", buffer: Buffer.from(JSON.stringify(realm)) });
  await page.getByRole("button", { name: "Preview the import" }).click();

  await expect(page.getByRole("heading", { name: "What the import would do" })).toBeVisible();
  await expect(page.getByText("1 to create, 0 to update, 0 unchanged, 1 skipped.")).toBeVisible();
  await expect(page.getByRole("cell", { name: "no email address" })).toBeVisible();
  await expect(page.getByRole("cell", { name: /to create \(redirect URIs Porta cannot compare exactly were left out: https:\/\/web\.example\.test\/\*\)/ })).toBeVisible();
  await check(page, testInfo, "user-imports-preview");
  await page.getByRole("button", { name: "Apply this import" }).click();

  await expect(page.getByRole("heading", { name: "The import was applied" })).toBeVisible();
  const secret = await page.getByTestId("imported-client-secret").textContent();
  expect(secret?.length).toBeGreaterThan(20);
  await expect(page.getByText("These client secrets are shown only now.")).toBeVisible();
  await check(page, testInfo, "user-imports-applied");

  // Reloading the page does not show the secret again; the person is one of the organization's users.
  await page.goto(page.url());
  await expect(page.getByText(secret!)).toHaveCount(0);
  await page.getByRole("link", { name: "Imported Co" }).click();
  await page.getByRole("link", { name: "Users", exact: true }).click();
  await expect(page.getByRole("link", { name: `ivy@${slug}.example.test` })).toBeVisible();
  expect(problems).toEqual([]);
});
