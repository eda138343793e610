import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    alias: { "~": fileURLToPath(new URL("./app", import.meta.url)) },
  },
  test: {
    include: ["app/**/*.test.ts", "app/.server/**/*.test.ts", "test/**/*.test.ts", "packages/*/src/**/*.test.ts"],
    environment: "node",
    pool: "forks",
    // Two cores: more workers only queue behind Argon2id and PGlite start-up.
    maxWorkers: 2,
    // Test files share their worker's modules: the server's ~1,000 modules load once per worker,
    // not once per file (a fifth of the run's time). Each file still starts its own servers and
    // databases; test/support/setup.ts forgets the log captures of the files before.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 90_000,
    setupFiles: ["test/support/setup.ts"],
    globalSetup: ["test/support/global-setup.ts"],
  },
});
