import { hostname } from "node:os";
import { expect, test } from "@playwright/test";
import { check, signInToConsole, watchForPageErrors } from "./console-helpers";
import { CONSOLE_ADMINS, readSeed, type Seed } from "./seed";

/**
 * The console's webhooks pages in Chromium (decision 047): an organization's endpoints, the
 * secret shown once, field errors for a bad URL, and the delivery log with each attempt. The e2e
 * server allows private networks (for the federation spec), so an endpoint on this machine's own name is tried
 * when the delivery connects, and the log says so (ECONNREFUSED: nobody listens on port 9).
 */
let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

test("a service-admin adds a webhook endpoint, sees its delivery log, turns it off and deletes it", async ({ page }, testInfo) => {
  const problems = watchForPageErrors(page);
  await signInToConsole(page, seed, CONSOLE_ADMINS.webhooks);
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Organizations" }).click();
  await page.getByRole("link", { name: "New organization" }).click();
  await page.getByLabel("Name", { exact: true }).fill("Hooked AG");
  await page.getByLabel("Slug", { exact: true }).fill("e2e-hooked");
  await expect(page.getByText("This slug is available.")).toBeVisible();
  await page.getByRole("button", { name: "Create organization" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Hooked AG");

  await page.getByRole("link", { name: "Webhooks", exact: true }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Webhooks");
  await expect(page.getByText("No webhook endpoints yet.")).toBeVisible();
  await check(page, testInfo, "webhooks-empty");

  // Nothing filled in: the errors stand next to their fields.
  const form = page.getByRole("form", { name: "Add an endpoint" });
  await form.getByRole("button", { name: "Add endpoint" }).click();
  await expect(page.locator("#url-error")).toHaveText("must be an absolute URL");
  await expect(page.locator("#eventFamilies-error")).toHaveText("must name at least one event type");

  // The e2e server allows private networks (the federation spec's upstream is on this machine), so
  // the guard's refusals are proved by test/webhooks/ssrf.test.ts, where they are not allowed.

  // A name: accepted; its own webhook.created event is its first delivery.
  const url = `https://${hostname()}:9/hook`;
  await form.getByLabel("URL").fill(url);
  await form.getByRole("checkbox", { name: "webhook.*" }).check();
  await form.getByRole("checkbox", { name: "organization.*" }).check();
  await form.getByRole("button", { name: "Add endpoint" }).click();
  await expect(page.getByRole("heading", { name: "Endpoint added: its signing secret" })).toBeVisible();
  await expect(page.getByRole("textbox", { name: "Signing secret" })).toHaveValue(/^whsec_/);
  await check(page, testInfo, "webhooks-created");

  await page.getByRole("link", { name: url }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(`Deliveries to ${url}`);
  // The attempt was made and found nobody listening on port 9; the page shows it once it happened.
  await expect(async () => {
    await page.reload();
    await page.getByRole("link", { name: "webhook.created" }).click();
    await expect(page.getByRole("cell", { name: "ECONNREFUSED" }).first()).toBeVisible({ timeout: 1_000 });
  }).toPass({ timeout: 20_000 });
  await expect(page.getByRole("heading", { name: "Delivery of webhook.created" })).toBeVisible();
  await check(page, testInfo, "webhook-deliveries");

  await page.getByRole("link", { name: "Webhooks", exact: true }).click();
  const row = page.getByRole("row", { name: new RegExp(url.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")) });
  await row.getByText("Actions").click();
  await row.getByText("Turn off", { exact: true }).click();
  await page.getByRole("button", { name: "Confirm: Turn off" }).click();
  await expect(page.getByText("The endpoint is off.")).toBeVisible();
  await expect(row).toContainText("Off");
  await row.getByText("Actions").click();
  await row.getByText("Delete", { exact: true }).click();
  await page.getByRole("button", { name: "Confirm: Delete" }).click();
  await expect(page.getByText("The endpoint was deleted.")).toBeVisible();
  await expect(page.getByText("No webhook endpoints yet.")).toBeVisible();
  expect(problems).toEqual([]);
});
