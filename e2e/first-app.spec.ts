import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { freePort, spawnServer, waitForHealth, type ServerProcess } from "../test/support/process";
import { check, watchForPageErrors } from "./console-helpers";

/**
 * The first hour of a newcomer, on a Porta of its own started with no configuration (as `npm
 * start` does): the banner's console address and credentials, the dashboard's checklist, and
 * "Try it" on the new client, until the test page shows an ID token. Each numbered step is one
 * thing the person does; the issue of a first app asks for ten at most.
 */
let server: ServerProcess;
let baseUrl: string;
let dataDir: string;

test.beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), "porta-first-app-"));
  const port = await freePort();
  baseUrl = `http://localhost:${port}`;
  server = spawnServer({ NODE_ENV: "production", PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: "warn" });
  await waitForHealth(baseUrl, server, 120_000);
  await expect.poll(() => server.stdout(), { timeout: 30_000 }).toContain("Console:");
});

test.afterAll(async () => {
  server?.kill("SIGTERM");
  await server?.exited;
  rmSync(dataDir, { recursive: true, force: true });
});

test("from the start banner to a verified ID token in eight steps: the checklist and Try it", async ({ browser }, testInfo) => {
  test.setTimeout(240_000);
  const printed = server.stdout();
  const email = /email:\s+(\S+)/.exec(printed)![1]!;
  const password = /password:\s+(\S+)\s+\(shown only this once\)/.exec(printed)![1]!;
  const consoleUrl = /Console: (\S+)/.exec(printed)![1]!;
  expect(consoleUrl).toBe(`${baseUrl}/console`);

  const context = await browser.newContext({ baseURL: baseUrl });
  const page = await context.newPage();
  const problems = watchForPageErrors(page);

  // 1. Open the console the banner names and sign in as the administrator it printed.
  await page.goto(consoleUrl);
  await page.getByLabel("Email address", { exact: true }).fill(email);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  const checklist = page.getByRole("region", { name: "Your first app" });
  await expect(checklist).toBeVisible();
  await check(page, testInfo, "first-app-checklist");

  // 2. Create an organization.
  await checklist.getByRole("link", { name: "Create an organization" }).click();
  await page.getByLabel("Name", { exact: true }).fill("First App Ltd");
  await page.getByLabel("Slug", { exact: true }).fill("first-app");
  await page.getByRole("button", { name: "Create organization" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("First App Ltd");

  // 3. Add an application (the checklist's next step).
  await page.goto("/console");
  await expect(checklist.locator('li[data-done="true"]')).toHaveCount(1);
  await checklist.getByRole("link", { name: "Add an application" }).click();
  await page.getByLabel("Name", { exact: true }).fill("Web shop");
  await page.getByRole("button", { name: "Create application" }).click();

  // 4. Add a client of it, with the app's redirect URI.
  await page.getByRole("link", { name: "Web shop" }).click();
  await page.getByRole("link", { name: "New client for this application" }).click();
  await page.getByLabel("Client name", { exact: true }).fill("Web shop login");
  await page.getByLabel("Redirect URIs").fill("http://localhost:8080/callback");
  await page.getByRole("button", { name: "Create client" }).click();
  await expect(page.getByText("The client Web shop login was created.")).toBeVisible();

  // 5. Add a user to sign in as.
  await page.goto("/console");
  await checklist.getByRole("link", { name: "Add a user" }).click();
  const create = page.getByRole("form", { name: "Create a user" });
  await create.getByLabel("Email address", { exact: true }).fill("ada@first-app.example");
  await create.getByLabel("Initial password (optional)").fill("a first app password 1");
  await create.getByRole("button", { name: "Create user" }).click();

  // 6. The client's page: its snippet, and Try it (which adds Porta's test page on the way).
  await page.goto("/console");
  await checklist.getByRole("link", { name: "Sign in through your app" }).click();
  await page.getByRole("link", { name: "Web shop login" }).click();
  await expect(page.getByRole("region", { name: "Use this client" }).locator("pre").last()).toContainText("client.discovery");
  await page.getByRole("button", { name: "Add the test page and try it" }).click();

  // 7. The organization's own login page: sign in as the user.
  await page.getByLabel("Email address", { exact: true }).fill("ada@first-app.example");
  await page.getByLabel("Password", { exact: true }).fill("a first app password 1");
  await page.getByRole("button", { name: "Sign in", exact: true }).click();

  // 8. Allow on the consent page; the test page shows the verified ID token.
  await page.getByRole("button", { name: "Allow" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Try it: the result");
  await expect(page.getByText("The ID token's signature (ES256) was verified")).toBeVisible();
  await expect(page.getByRole("table")).toContainText("ada@first-app.example");
  await check(page, testInfo, "first-app-try-it");

  // The checklist is done and gone.
  await page.goto("/console");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Dashboard");
  await expect(checklist).toHaveCount(0);
  expect(problems).toEqual([]);
  await context.close();
});
