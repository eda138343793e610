import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test } from "@playwright/test";
import { BASE_URL, E2E_ADMIN } from "./seed";

/**
 * `porta login` as a person runs it: the CLI prints the sign-in URL and listens on a loopback
 * port; the person signs in on the real login page in Chromium, the browser is sent to the
 * CLI's /callback, the CLI receives the code, redeems it and stores the tokens.
 */
const PORTA_BIN = fileURLToPath(new URL("../packages/cli/bin/porta.js", import.meta.url));
const messages = JSON.parse(readFileSync(new URL("../public/locales/en/login.json", import.meta.url), "utf8")) as {
  signIn: { email: string; password: string; submit: string };
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

test("porta login: the CLI's loopback listener receives the code from the browser", async ({ page }, testInfo) => {
  const configDir = mkdtempSync(path.join(tmpdir(), "porta-cli-e2e-"));
  try {
    const login = runCli(["login", "--server", BASE_URL], configDir);
    await expect.poll(() => /LOGIN_URL (\S+)/.exec(login.output().stderr)?.[1], { timeout: 20_000 }).toBeTruthy();
    const loginUrl = /LOGIN_URL (\S+)/.exec(login.output().stderr)![1]!;
    const redirectUri = new URL(loginUrl).searchParams.get("redirect_uri")!;
    expect(redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);

    await page.goto(loginUrl);
    await page.getByLabel(messages.signIn.email, { exact: true }).fill(E2E_ADMIN.email);
    await page.getByLabel(messages.signIn.password, { exact: true }).fill(E2E_ADMIN.password);
    await page.getByRole("button", { name: messages.signIn.submit }).click();

    await expect(page.getByRole("heading", { level: 1 })).toHaveText("You are signed in to the Porta CLI");
    expect(page.url().startsWith(redirectUri)).toBe(true);
    await page.screenshot({ path: testInfo.outputPath("cli-callback.png") });
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
