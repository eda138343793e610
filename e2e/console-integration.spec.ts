import { expect, test, type Page, type TestInfo } from "@playwright/test";
import { check, signInToConsole, watchForPageErrors } from "./console-helpers";
import { CONSOLE_ADMINS, readSeed, type Seed } from "./seed";

/**
 * Integrating an application, as an operator and an app developer meet them: the organization page's
 * addresses, each copied with its button; an application whose page lists its clients and
 * makes a new one for itself; that client's page with its id, redirect URIs and a quick start
 * that names them; and the client settings operators set per client (CORS origins,
 * skip-consent, token lifetimes). axe and a screenshot at 1280 and 390 px for each state.
 */
let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };

/** axe and a screenshot at 1280 px, then at 390 px, where nothing may scroll sideways. */
async function checkBothWidths(page: Page, testInfo: TestInfo, name: string) {
  await check(page, testInfo, `${name}-1280`);
  await page.setViewportSize(PHONE);
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${name} fits 390 px`).toBe(true);
  await check(page, testInfo, `${name}-390`);
  await page.setViewportSize(DESKTOP);
}

test("an operator copies the endpoints, makes a client for an application and sets its policy", async ({ browser }, testInfo) => {
  const context = await browser.newContext({ viewport: DESKTOP, permissions: ["clipboard-read", "clipboard-write"] });
  const page = await context.newPage();
  const problems = watchForPageErrors(page);
  await signInToConsole(page, seed, CONSOLE_ADMINS.integration);

  // A new organization: its page shows every address an app developer needs.
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Organizations" }).click();
  await page.getByRole("link", { name: "New organization" }).click();
  await page.getByLabel("Name", { exact: true }).fill("Integration Shop AG");
  await page.getByLabel("Slug", { exact: true }).fill("e2e-integration");
  await expect(page.getByText("This slug is available.")).toBeVisible();
  await page.getByRole("button", { name: "Create organization" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Integration Shop AG");
  const orgUrl = page.url().replace(/\?.*$/, "");

  const connect = page.getByRole("region", { name: "Connect an app" });
  const issuer = `${seed.baseUrl}/e2e-integration`;
  const expected: Record<string, string> = {
    Issuer: issuer,
    "Discovery URL": `${issuer}/.well-known/openid-configuration`,
    "JWKS (public keys)": `${issuer}/.well-known/jwks`,
    "Authorization endpoint": `${issuer}/auth/authorize`,
    "Token endpoint": `${issuer}/auth/token`,
    "Userinfo endpoint": `${issuer}/me`,
    "End-session (logout) endpoint": `${issuer}/session/end`,
  };
  for (const [label, url] of Object.entries(expected)) {
    await expect(connect.getByRole("definition").filter({ has: page.getByText(url, { exact: true }) })).toBeVisible();
    await connect.getByRole("button", { name: `Copy ${label}` }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText()), label).toBe(url);
  }
  await expect(connect.getByText("Copied to the clipboard.").first()).toBeVisible();
  // What the page shows is what the organization's discovery document says.
  const discovery = (await (await page.request.get(expected["Discovery URL"]!)).json()) as Record<string, string>;
  expect(discovery.token_endpoint).toBe(expected["Token endpoint"]);
  expect(discovery.end_session_endpoint).toBe(expected["End-session (logout) endpoint"]);
  await checkBothWidths(page, testInfo, "integration-org");

  // An application: what it is, its (no) clients, and the way to one.
  await page.goto(`${orgUrl}/applications`);
  await expect(page.getByText("a client is one way of signing in to it")).toBeVisible();
  await page.getByLabel("Name", { exact: true }).fill("Storefront");
  await page.getByRole("button", { name: "Create application" }).click();
  await page.getByRole("link", { name: "Storefront" }).click();
  const appClients = page.getByRole("region", { name: "Clients of this application" });
  await expect(appClients).toContainText("No client belongs to this application yet");
  await checkBothWidths(page, testInfo, "integration-app-empty");
  await appClients.getByRole("link", { name: "New client for this application" }).click();

  // The form has the application chosen already.
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Clients");
  await expect(page.getByLabel("Application", { exact: true })).toHaveText(/Storefront/);
  expect(await page.getByLabel("Application", { exact: true }).evaluate((el: HTMLSelectElement) => el.selectedOptions[0]?.textContent)).toBe("Storefront");
  await page.getByLabel("Client name", { exact: true }).fill("Storefront SPA");
  await page.getByLabel("Client type", { exact: true }).selectOption("public");
  await page.getByLabel("Redirect URIs").fill("https://shop.example.test/callback");
  await check(page, testInfo, "integration-new-client");
  await page.getByRole("button", { name: "Create client" }).click();
  await expect(page.getByText("The client Storefront SPA was created.")).toBeVisible();
  await expect(page.getByRole("link", { name: "Open Storefront SPA" })).toBeVisible();

  // The application page lists it; its page says how to use it.
  await page.goto(`${orgUrl}/applications`);
  await page.getByRole("link", { name: "Storefront" }).click();
  await expect(page.getByRole("region", { name: "Clients of this application" }).getByRole("link", { name: "Storefront SPA" })).toBeVisible();
  await checkBothWidths(page, testInfo, "integration-app-clients");
  await page.getByRole("region", { name: "Clients of this application" }).getByRole("link", { name: "Storefront SPA" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Storefront SPA");

  const use = page.getByRole("region", { name: "Use this client" });
  await expect(use).toContainText("A public client (single-page or native app): authorization code flow with PKCE, without a secret.");
  await expect(use).toContainText("https://shop.example.test/callback");
  await expect(use).toContainText("Public (browser or native app, PKCE) · Web (browser or server)");
  const clientId = (await use.getByRole("definition").first().locator("code").textContent())!;
  await use.getByRole("button", { name: "Copy Client ID" }).click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(clientId);
  const quickStart = (await use.locator("pre.quick-start:not(.connect-snippet)").textContent())!;
  expect(quickStart).toContain(`client_id=${clientId}`);
  expect(quickStart).toContain("code_challenge_method=S256");
  expect(quickStart).toContain(`${issuer}/auth/token`);
  expect(quickStart).not.toContain("CLIENT_SECRET");
  await use.getByRole("button", { name: "Copy Quick start" }).click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(quickStart);
  await checkBothWidths(page, testInfo, "integration-client");

  // The client's policy: a bad lifetime stays next to its field; then everything is saved.
  const edit = page.getByRole("form", { name: "Edit client" });
  await edit.getByLabel("Allowed CORS origins").fill("https://shop.example.test\nhttp://localhost:5173");
  await edit.getByLabel("First-party client: skip the consent page").check();
  await edit.getByLabel("Access token lifetime (seconds)").fill("30");
  await edit.getByRole("button", { name: "Save" }).click();
  await expect(page.locator("#accessTokenTtlSeconds-error")).toHaveText("must be at least 60 seconds");
  await checkBothWidths(page, testInfo, "integration-client-invalid");
  await edit.getByLabel("Access token lifetime (seconds)").fill("900");
  await edit.getByLabel("Refresh token lifetime (seconds)").fill("86400");
  await edit.getByRole("button", { name: "Save" }).click();
  await expect(page.getByText("The client was saved.")).toBeVisible();
  await expect(edit.getByLabel("Allowed CORS origins")).toHaveValue("https://shop.example.test\nhttp://localhost:5173");
  await expect(edit.getByLabel("First-party client: skip the consent page")).toBeChecked();
  await expect(edit.getByLabel("Access token lifetime (seconds)")).toHaveValue("900");
  await expect(edit.getByLabel("Refresh token lifetime (seconds)")).toHaveValue("86400");
  await expect(page.getByRole("region", { name: "History" })).toContainText("client.updated");
  await checkBothWidths(page, testInfo, "integration-client-saved");

  expect(problems).toEqual([]);
  await context.close();
});
