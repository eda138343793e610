import { defineConfig, devices } from "@playwright/test";
import { BASE_URL, E2E_PORT, SEED_FILE } from "./e2e/seed";

/**
 * End-to-end tests in Debian's Chromium (/usr/bin/chromium; never `playwright install`, which
 * downloads browsers of its own). The server is e2e/server.ts: the production build on the
 * embedded default, seeded per run.
 * Run `npx remix vite:build` first, then `npx playwright test`.
 */
export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results",
  // Two browsers on the two cores: every spec signs in as a person of its own (seed.ts), so
  // files run side by side against the one server (the suite: 6.3 min at load 10 against ~16
  // at one worker); the tests of one file stay in order.
  workers: 2,
  fullyParallel: false,
  forbidOnly: Boolean(process.env.CI),
  // Console journeys with an axe check per page take 30–60 s on a busy 2-core machine.
  timeout: 120_000,
  expect: { timeout: 10_000 },
  reporter: [["list"]],
  use: {
    baseURL: BASE_URL,
    screenshot: "on",
    trace: "retain-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
  projects: [{ name: "chromium", use: { ...devices["Desktop Chrome"] } }],
  webServer: {
    command: "node --import tsx e2e/server.ts",
    url: `${BASE_URL}/health`,
    env: { E2E_PORT: String(E2E_PORT), E2E_SEED_FILE: SEED_FILE },
    timeout: 120_000,
    reuseExistingServer: false,
    stdout: "pipe",
    stderr: "pipe",
    gracefulShutdown: { signal: "SIGTERM", timeout: 10_000 },
  },
});
