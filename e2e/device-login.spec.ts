import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test } from "@playwright/test";
import { checkPage } from "./journey-helpers";
import { BASE_URL, E2E_ADMIN } from "./seed";

/**
 * `porta login --device` as a person runs it on a machine without a browser (RFC 8628,
 * decision 049): the CLI prints an address and a code and polls; the person opens the address in
 * Chromium (another device), enters the code, confirms, signs in; the CLI is then signed in.
 */
const PORTA_BIN = fileURLToPath(new URL("../packages/cli/bin/porta.js", import.meta.url));
const messages = JSON.parse(readFileSync(new URL("../public/locales/en/login.json", import.meta.url), "utf8")) as {
  signIn: { email: string; password: string; submit: string };
  consent: { allow: string };
  providerPages: { deviceCodeLabel: string; deviceContinue: string; deviceConfirmYes: string; deviceDoneHeading: string; deviceWrongCode: string };
};

function runCli(args: string[], configDir: string) {
  const child = spawn(process.execPath, [PORTA_BIN, ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: configDir, PORTA_CONFIG_DIR: configDir, PORTA_NO_BROWSER: "1" } as unknown as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const done = new Promise<number | null>((resolve) => child.on("close", resolve));
  return { child, done, output: () => ({ stdout, stderr }) };
}

test("porta login --device: a person enters the code in a browser while the CLI polls", async ({ page }, testInfo) => {
  test.setTimeout(90_000);
  const configDir = mkdtempSync(path.join(tmpdir(), "porta-device-e2e-"));
  try {
    const login = runCli(["login", "--device", "--server", BASE_URL], configDir);
    await expect.poll(() => /DEVICE_CODE (\S+)/.exec(login.output().stderr)?.[1], { timeout: 20_000 }).toBeTruthy();
    const { stderr } = login.output();
    const verificationUri = /DEVICE_URL (\S+)/.exec(stderr)![1]!;
    const userCode = /DEVICE_CODE (\S+)/.exec(stderr)![1]!;
    expect(stderr).toContain(`open ${verificationUri} in a browser on any device and enter the code ${userCode}`);

    await page.goto(verificationUri);
    await checkPage(page, testInfo, "device-code-entry");
    // A mistyped code first: the page says so next to the field.
    await page.getByLabel(messages.providerPages.deviceCodeLabel).fill("BCDF-GHJK");
    await page.getByRole("button", { name: messages.providerPages.deviceContinue }).click();
    await expect(page.getByRole("alert")).toHaveText(messages.providerPages.deviceWrongCode);
    await checkPage(page, testInfo, "device-code-wrong");

    await page.getByLabel(messages.providerPages.deviceCodeLabel).fill(userCode.toLowerCase());
    await page.getByRole("button", { name: messages.providerPages.deviceContinue }).click();
    await expect(page.locator(".user-code")).toHaveText(userCode);
    await checkPage(page, testInfo, "device-confirm");
    await page.getByRole("button", { name: messages.providerPages.deviceConfirmYes }).click();

    await page.getByLabel(messages.signIn.email, { exact: true }).fill(E2E_ADMIN.email);
    await page.getByLabel(messages.signIn.password, { exact: true }).fill(E2E_ADMIN.password);
    await page.getByRole("button", { name: messages.signIn.submit }).click();
    const allow = page.getByRole("button", { name: messages.consent.allow });
    const done = page.getByRole("heading", { level: 1, name: messages.providerPages.deviceDoneHeading });
    await expect(allow.or(done)).toBeVisible();
    if (await allow.isVisible()) await allow.click();
    await expect(done).toBeVisible();
    await checkPage(page, testInfo, "device-done");

    expect(await login.done).toBe(0);
    expect(login.output().stderr).toContain(`Logged in as ${E2E_ADMIN.email}`);
    const file = path.join(configDir, "credentials.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const whoami = runCli(["whoami", "--json"], configDir);
    expect(await whoami.done).toBe(0);
    expect(JSON.parse(whoami.output().stdout)).toMatchObject({ email: E2E_ADMIN.email, roles: ["service-admin"] });
  } finally {
    rmSync(configDir, { recursive: true, force: true });
  }
});
