import { expect, test, type Browser, type Page } from "@playwright/test";
import * as oidc from "openid-client";
import { check, signInToConsole, signOutOfConsole, watchForPageErrors } from "./console-helpers";
import { readMailbox } from "./mail-peer";
import { readSeed, type Seed } from "./seed";

/**
 * The admin console as a person uses it in Chromium: sign in through the super-admin
 * organization's login page, look at the dashboard, create an organization (live slug check),
 * rotate the signing key, find both in the audit log, sign out; and two people editing the same
 * organization, where the second save shows the conflict view instead of overwriting. Every
 * page is screenshotted as a test artifact and checked with axe (no serious or critical findings).
 */
let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

async function createOrganization(page: Page, name: string, slug: string) {
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Organizations" }).click();
  await page.getByRole("link", { name: "New organization" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("New organization");
  await page.getByLabel("Name", { exact: true }).fill(name);
  await page.getByLabel("Slug", { exact: true }).fill(slug);
  await expect(page.getByText("This slug is available.")).toBeVisible();
  await page.getByRole("button", { name: "Create organization" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(name);
  await expect(page.getByText("The organization was created.")).toBeVisible();
}

async function signedInContext(browser: Browser) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signInToConsole(page, seed);
  return { context, page };
}

test("a service-admin signs in, creates an organization, rotates the key, reads the audit log and signs out", async ({ page }, testInfo) => {
  const problems = watchForPageErrors(page);
  await signInToConsole(page, seed);
  await expect(page.getByRole("table", { name: "Last 24 hours" })).toBeVisible();
  await check(page, testInfo, "dashboard");

  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Organizations" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Organizations");
  await expect(page.getByRole("link", { name: "Both Methods Inc" })).toBeVisible();
  await check(page, testInfo, "organizations");

  await page.getByRole("link", { name: "New organization" }).click();
  await page.getByLabel("Slug", { exact: true }).fill("e2e-both");
  await expect(page.getByText("This slug is already taken.")).toBeVisible();
  // The same zod schema checks the form in the browser: the error sits next to its field.
  await page.getByLabel("Slug", { exact: true }).fill("Not A Slug");
  await page.getByRole("button", { name: "Create organization" }).click();
  await expect(page.locator("#slug-error")).toHaveText("may contain lower-case letters, digits and inner dashes only");
  await expect(page.locator("#name-error")).toHaveText("must not be empty");
  await check(page, testInfo, "organization-new");

  await createOrganization(page, "Console Created GmbH", "e2e-console-created");
  await check(page, testInfo, "organization");
  const createdUrl = page.url().replace(/\?.*$/, "");
  await page.getByRole("link", { name: "Applications" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Applications");
  await page.getByLabel("Name", { exact: true }).fill("E2E Portal");
  await page.getByRole("button", { name: "Create application" }).click();
  await expect(page.getByText("The application was created.")).toBeVisible();
  await check(page, testInfo, "applications");
  await page.getByRole("link", { name: "E2E Portal" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("E2E Portal");
  await check(page, testInfo, "application");
  await page.goto(`${createdUrl}/roles`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Roles and permissions");
  await check(page, testInfo, "roles");
  await page.goto(`${createdUrl}/branding`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Branding");
  // The preview follows the form as the person types.
  await page.getByLabel("Display name").fill("Preview Brand");
  await page.getByLabel("Primary colour").fill("#aa3300");
  const preview = page.getByRole("figure", { name: "Live preview of the login page" });
  await expect(preview).toContainText("Sign in to Preview Brand");
  await expect(preview.locator(".button")).toHaveCSS("background-color", "rgb(170, 51, 0)");
  await check(page, testInfo, "branding");
  // Bulk operations from a CSV file, with a result per row.
  await page.goto(`${createdUrl}/bulk`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Bulk operations");
  await page.getByLabel("Operations (CSV)").setInputFiles({
    name: "people.csv",
    mimeType: "text/csv",
    buffer: Buffer.from("op,email,givenName\ncreate,bulk.one@e2e.example.test,One\ncreate,bulk.two@e2e.example.test,Two\n"),
  });
  await page.getByRole("button", { name: "Run the operations" }).click();
  await expect(page.getByRole("heading", { name: "2 succeeded, 0 failed" })).toBeVisible();
  await expect(page.getByRole("table", { name: "Result per row" })).toContainText("bulk.two@e2e.example.test");
  await check(page, testInfo, "bulk");
  await page.goto(createdUrl);
  await page.goto(createdUrl);

  // Destructive actions ask first.
  await page.getByText("Suspend", { exact: true }).click();
  await expect(page.getByText("Suspend Console Created GmbH? Its users can no longer sign in.")).toBeVisible();
  await page.getByRole("button", { name: "Confirm: Suspend" }).click();
  await expect(page.getByText("The organization was suspended.")).toBeVisible();

  // Every organization's keys on one page; one organization's keys rotate on its own page
  // (whose menu, named after "Console Created GmbH", has a "Signing keys" link too).
  await page.getByRole("navigation", { name: "Console", exact: true }).getByRole("link", { name: "Signing keys" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Signing keys");
  await check(page, testInfo, "keys");
  await page.goto(createdUrl);
  await page.getByRole("navigation", { name: "Console Created GmbH" }).getByRole("link", { name: "Signing keys" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Signing keys");
  await page.getByText("Rotate signing key", { exact: true }).click();
  await page.getByRole("button", { name: "Confirm: Rotate signing key" }).click();
  await expect(page.getByText(/The signing key was rotated/)).toBeVisible();
  await check(page, testInfo, "organization-keys");

  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Sessions" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Sessions");
  await check(page, testInfo, "sessions");
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Imports" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Imports");
  await check(page, testInfo, "imports");
  // Export the organization made above and import it as a copy: the change list first, then apply.
  const exported = await page.request.get(`${createdUrl}/export`);
  expect(exported.ok()).toBe(true);
  await page.getByLabel("Export package (JSON)").setInputFiles({ name: "export.json", mimeType: "application/json", buffer: await exported.body() });
  await page.getByLabel("Import as slug (optional)").fill("e2e-console-copy");
  await page.getByRole("button", { name: "Preview the changes" }).click();
  await expect(page.getByRole("heading", { name: "Changes to apply" })).toBeVisible();
  await expect(page.getByText("Organization e2e-console-copy: create.")).toBeVisible();
  await check(page, testInfo, "import-preview");
  await page.getByRole("button", { name: "Apply these changes" }).click();
  await expect(page.getByRole("heading", { name: "The import was applied" })).toBeVisible();
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Configuration" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Configuration");
  await check(page, testInfo, "config");

  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Audit log" }).click();
  const rows = page.getByRole("table").getByRole("row");
  await expect(rows.filter({ hasText: "organization.created" }).first()).toBeVisible();
  await expect(rows.filter({ hasText: "organization.suspended" }).first()).toBeVisible();
  await expect(rows.filter({ hasText: "key.rotated" }).first()).toBeVisible();
  await page.getByLabel("Event type (e.g. organization.* )").fill("key.*");
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(rows.filter({ hasText: "key.rotated" }).first()).toBeVisible();
  await expect(rows.filter({ hasText: "organization.created" })).toHaveCount(0);
  await check(page, testInfo, "audit");

  // Down to a phone.
  await page.setViewportSize({ width: 375, height: 740 });
  await page.goto("/console");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Dashboard");
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
  await check(page, testInfo, "dashboard-phone");
  await page.setViewportSize({ width: 1280, height: 720 });

  await signOutOfConsole(page);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Signed out");
  await check(page, testInfo, "signed-out");
  // Back to the console means the password again.
  await page.getByRole("link", { name: "Sign in again" }).click();
  await expect(page).toHaveURL(/\/interaction\//);

  await page.goto("/console/refused?reason=failed");
  await check(page, testInfo, "refused");
  expect(problems).toEqual([]);
});

test("two people edit the same organization: the second save shows the conflict, not an overwrite", async ({ browser }, testInfo) => {
  const alice = await signedInContext(browser);
  const bob = await signedInContext(browser);
  await createOrganization(alice.page, "Shared Edit AG", "e2e-shared-edit");
  const url = alice.page.url().replace(/\?.*$/, "");
  await bob.page.goto(url);
  await expect(bob.page.getByRole("heading", { level: 1 })).toHaveText("Shared Edit AG");

  await alice.page.getByLabel("Name", { exact: true }).fill("Shared Edit AG (Alice)");
  await alice.page.getByRole("button", { name: "Save" }).click();
  await expect(alice.page.getByText("Saved.")).toBeVisible();

  await bob.page.getByLabel("Name", { exact: true }).fill("Shared Edit AG (Bob)");
  await bob.page.getByLabel("Two-factor policy").selectOption("required_totp");
  await bob.page.getByRole("button", { name: "Save" }).click();
  const conflict = bob.page.getByRole("region", { name: "Changed by someone else" });
  await expect(conflict).toBeVisible();
  await expect(conflict.getByRole("row", { name: /Name/ })).toContainText("Shared Edit AG (Alice)");
  await expect(conflict.getByRole("row", { name: /Name/ })).toContainText("Shared Edit AG (Bob)");
  await check(bob.page, testInfo, "organization-conflict");

  await conflict.getByRole("link", { name: "Reload the current version" }).click();
  await expect(bob.page.getByLabel("Name", { exact: true })).toHaveValue("Shared Edit AG (Alice)");
  await expect(bob.page.getByRole("heading", { level: 1 })).toHaveText("Shared Edit AG (Alice)");

  await alice.context.close();
  await bob.context.close();
});

test("the console speaks German to a German browser", async ({ browser }, testInfo) => {
  const context = await browser.newContext({ locale: "de-DE" });
  const page = await context.newPage();
  await page.goto("/console");
  await page.getByLabel("E-Mail-Adresse", { exact: true }).fill(seed.admin.email);
  await page.getByLabel("Passwort", { exact: true }).fill(seed.admin.password);
  await page.getByRole("button", { name: "Anmelden", exact: true }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Übersicht");
  await expect(page.getByRole("navigation", { name: "Konsole" }).getByRole("link", { name: "Organisationen" })).toBeVisible();
  await check(page, testInfo, "dashboard-de");
  await context.close();
});

/** The relying party of the client created in the console: its callback is answered here. */
const RP_CALLBACK = "https://rp.example.test/console-cb";

async function authorizationUrl(issuer: string, clientId: string, clientSecret: string) {
  const config = await oidc.discovery(new URL(issuer), clientId, undefined, oidc.ClientSecretBasic(clientSecret), { execute: [oidc.allowInsecureRequests] });
  const verifier = oidc.randomPKCECodeVerifier();
  return oidc.buildAuthorizationUrl(config, {
    redirect_uri: RP_CALLBACK,
    scope: "openid profile email",
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state: oidc.randomState(),
  }).href;
}

async function waitForMail(to: string): Promise<string> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const message = readMailbox(seed.mailbox!).find((m) => m.to.includes(to));
    if (message) return message.text;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`no mail to ${to}`);
}

test("the walkthrough: organization, confidential client, invitation accepted from the mail, 2FA policy and magic link on the login page, all in the audit log", async ({ page, browser }, testInfo) => {
  test.setTimeout(180_000);
  const problems = watchForPageErrors(page);
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
  await signInToConsole(page, seed);
  await createOrganization(page, "Walkthrough KG", "e2e-walkthrough");
  const orgUrl = page.url().replace(/\?.*$/, "");

  // A confidential client: the secret is shown once, with a copy button.
  await page.getByRole("link", { name: "Clients" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Clients");
  await check(page, testInfo, "clients");
  await page.getByLabel("Client name").fill("Walkthrough Web");
  await page.getByLabel("Client type").selectOption("confidential");
  await page.getByLabel("Redirect URIs").fill(RP_CALLBACK);
  await page.getByRole("button", { name: "Create client" }).click();
  await expect(page.getByRole("heading", { name: "Client secret — shown only once" })).toBeVisible();
  const secret = await page.getByRole("textbox", { name: "Client secret", exact: true }).inputValue();
  const clientId = (await page.getByRole("status").locator("code").innerText()).trim();
  await page.getByRole("button", { name: "Copy secret" }).click();
  await expect(page.getByText("Copied to the clipboard.")).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
  await expect(page.getByRole("cell", { name: "Inherits organization default (Password, Magic link)" })).toBeVisible();
  await check(page, testInfo, "client-secret");
  await page.reload();
  expect(await page.content()).not.toContain(secret);

  // Invite a person: preview first, then send; they accept from the mail the SMTP peer received.
  await page.goto(`${orgUrl}/users`);
  await check(page, testInfo, "users");
  const email = "walker@walkthrough.example.test";
  // The page also has the "Create a user" form with the same fields.
  const invite = page.getByRole("form", { name: "Invite a user" });
  await invite.getByLabel("Email address").fill(email);
  await invite.getByLabel("Given name").fill("Wanda");
  await page.getByRole("button", { name: "Preview the invitation" }).click();
  await expect(page.getByRole("heading", { name: "Invitation preview" })).toBeVisible();
  await check(page, testInfo, "invitation-preview");
  await page.getByRole("button", { name: "Send invitation" }).click();
  await expect(page.getByText(`An invitation was sent to ${email}.`)).toBeVisible();
  const link = /https?:\/\/\S+\/invitation\?token=[\w-]+/.exec(await waitForMail(email))![0];

  const person = await browser.newContext();
  const personPage = await person.newPage();
  await personPage.route("https://rp.example.test/**", (route) => route.fulfill({ status: 200, contentType: "text/html", body: "<!doctype html><title>RP</title><h1>Back at the relying party</h1>" }));
  await personPage.goto(link);
  await personPage.getByLabel("Last name").fill("Walker");
  await personPage.getByLabel("Choose a password").fill("a long walkthrough password 3");
  await personPage.getByRole("button", { name: "Create my account" }).click();
  await expect(personPage.getByText("Your account is ready.")).toBeVisible();

  // The new user appears in the console.
  await page.goto(`${orgUrl}/users`);
  await page.getByRole("link", { name: email }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(email);
  await check(page, testInfo, "user");

  // 2FA policy required_totp: the person's next sign-in enrolls an authenticator app.
  await page.goto(orgUrl);
  await page.getByLabel("Two-factor policy").selectOption("required_totp");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByText("Saved.")).toBeVisible();
  const issuer = `${seed.baseUrl}/e2e-walkthrough`;
  await personPage.goto(await authorizationUrl(issuer, clientId, secret));
  await personPage.getByLabel("Email address", { exact: true }).fill(email);
  await personPage.getByLabel("Password", { exact: true }).fill("a long walkthrough password 3");
  await personPage.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(personPage).toHaveURL(/\/two-factor\/setup$/);
  await expect(personPage.getByRole("heading", { level: 1 })).toHaveText("Set up your authenticator app");

  // Magic link only: the login page offers no password any more.
  await page.goto(orgUrl);
  await page.getByLabel("Password", { exact: true }).uncheck();
  await page.getByLabel("Magic link", { exact: true }).check();
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByText("Saved.")).toBeVisible();
  const fresh = await browser.newContext();
  const freshPage = await fresh.newPage();
  await freshPage.goto(await authorizationUrl(issuer, clientId, secret));
  await expect(freshPage.getByRole("button", { name: "Email me a sign-in link" })).toBeVisible();
  await expect(freshPage.getByLabel("Password", { exact: true })).toHaveCount(0);

  // Rotate the organization's key; the audit log has it all.
  await page.goto(`${orgUrl}/keys`);
  await page.getByText("Rotate signing key", { exact: true }).click();
  await page.getByRole("button", { name: "Confirm: Rotate signing key" }).click();
  await expect(page.getByText(/The signing key was rotated/)).toBeVisible();
  await page.goto("/console/audit");
  const rows = page.getByRole("table").getByRole("row");
  for (const event of ["organization.created", "client.created", "user.invited", "organization.updated", "key.rotated"]) {
    await expect(rows.filter({ hasText: event }).first(), event).toBeVisible();
  }
  await signOutOfConsole(page);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Signed out");
  await person.close();
  await fresh.close();
  expect(problems).toEqual([]);
});
