import { expect, test, type Page } from "@playwright/test";
import { check, signInToConsole, watchForPageErrors } from "./console-helpers";
import { CONSOLE_ADMINS, readSeed, type Seed } from "./seed";

/**
 * Registered clients in Chromium, as an operator and a person meet it: an organization turns client
 * registration on (decision 054) and issues an initial access token, shown once; an agent
 * registers with it and its client appears in the console, marked as registered dynamically.
 * An administrator acts as a person for a stated reason (decision 053), and the person, on
 * another device, sees who did it and why on their account page.
 */
let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

async function newOrganization(page: Page, name: string, slug: string) {
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Organizations" }).click();
  await page.getByRole("link", { name: "New organization" }).click();
  await page.getByLabel("Name", { exact: true }).fill(name);
  await page.getByLabel("Slug", { exact: true }).fill(slug);
  await expect(page.getByText("This slug is available.")).toBeVisible();
  await page.getByRole("button", { name: "Create organization" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(name);
}

test("an operator turns client registration on and issues a token; an agent registers and its client is listed", async ({ page }, testInfo) => {
  const problems = watchForPageErrors(page);
  await signInToConsole(page, seed, CONSOLE_ADMINS.agents);
  const slug = `e2e-agents-${Date.now().toString(36)}`;
  await newOrganization(page, "Agents AG", slug);
  const orgUrl = page.url().replace(/\?.*$/, "");

  // Off by default: discovery does not name the endpoint, and the endpoint is not there.
  const discovery = async () => (await (await fetch(`${seed.baseUrl}/${slug}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
  expect((await discovery()).registration_endpoint).toBeUndefined();

  await page.getByRole("link", { name: "Client registration" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Client registration");
  await expect(page.getByText("No initial access tokens yet.")).toBeVisible();
  await check(page, testInfo, "registration-off");

  await page.getByLabel("Registration is on (discovery names the endpoint)").check();
  await page.getByRole("button", { name: "Save policy" }).click();
  await expect(page.getByText("The registration policy was saved.")).toBeVisible();
  await expect.poll(async () => (await discovery()).registration_endpoint).toBe(`${seed.baseUrl}/${slug}/register`);

  await page.getByLabel("Label").fill("MCP agent");
  await page.getByRole("button", { name: "Issue token" }).click();
  await expect(page.getByRole("heading", { name: "Initial access token — shown only once" })).toBeVisible();
  const token = await page.getByRole("textbox", { name: "Initial access token" }).inputValue();
  expect(token.length).toBeGreaterThan(20);
  await check(page, testInfo, "registration-token");

  // The agent: RFC 7591 registration with the token, as an MCP client does it.
  const registered = await fetch(`${seed.baseUrl}/${slug}/register`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ client_name: "Travel agent", redirect_uris: ["http://127.0.0.1:8765/callback"], token_endpoint_auth_method: "none" }),
  });
  expect(registered.status).toBe(201);
  const client = (await registered.json()) as { client_id: string; registration_access_token: string };
  expect(client.registration_access_token).toBeTruthy();

  await page.goto(`${orgUrl}/clients`);
  await expect(page.getByRole("link", { name: "Travel agent" })).toBeVisible();
  await expect(page.getByText("(registered dynamically)")).toBeVisible();
  await check(page, testInfo, "clients-registered");
  expect(problems).toEqual([]);
});

test("an administrator acts as a person for a reason; the person sees it on their account page on another device", async ({ page, browser }, testInfo) => {
  const problems = watchForPageErrors(page);
  await signInToConsole(page, seed, CONSOLE_ADMINS.agents);
  const org = seed.organizations.find((o) => o.methods.includes("password"))!;
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Organizations" }).click();
  await page.getByRole("link", { name: org.name }).click();
  await page.getByRole("link", { name: "Users", exact: true }).click();
  const email = `acted-for.${Date.now()}@e2e.example.test`;
  const password = "a person's own long password 4";
  await page.locator("#newEmail").fill(email);
  await page.locator("#newPassword").fill(password);
  await page.getByRole("button", { name: "Create user" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(email);

  // Nothing given as the reason: the error stands next to the field, and no token is made.
  const panel = page.getByRole("region", { name: "Act as this user" });
  await panel.getByRole("button", { name: "Get a token" }).click();
  await expect(panel.getByLabel("Reason")).toBeFocused();
  await panel.getByLabel("Reason").fill("Ticket 4711: the invoice page fails for this person");
  await panel.getByLabel("Valid for").selectOption({ label: "5 minutes" });
  await panel.getByRole("button", { name: "Get a token" }).click();
  await expect(panel.getByRole("status")).toContainText("It is shown only now: Porta keeps no copy");
  await expect(panel.getByRole("status").locator("time")).toContainText("UTC");
  expect((await panel.getByRole("textbox", { name: "Access token" }).inputValue()).split(".")).toHaveLength(3);
  await check(page, testInfo, "impersonation-issued");

  const phone = await browser.newContext({ locale: "en-US" });
  try {
    const own = await phone.newPage();
    await own.goto(`${seed.baseUrl}/${org.slug}/account`);
    await expect(own).toHaveURL(/\/interaction\//);
    await own.getByLabel("Email address", { exact: true }).fill(email);
    await own.getByLabel("Password", { exact: true }).fill(password);
    await own.getByRole("button", { name: "Sign in", exact: true }).click();
    await expect(own).toHaveURL(new RegExp(`/${org.slug}/account$`));
    await expect(own.getByText("An administrator acted as you for a limited time")).toBeVisible();
    await expect(own.getByText(`by the administrator ${CONSOLE_ADMINS.agents.email}`)).toBeVisible();
    await expect(own.getByText("Reason given: Ticket 4711: the invoice page fails for this person")).toBeVisible();
  } finally {
    await phone.close();
  }
  expect(problems).toEqual([]);
});
