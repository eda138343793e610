import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";

/**
 * `porta` runs the compiled CLI (packages/cli/dist, built by `npm install` and `npm run build`)
 * with plain Node: no TypeScript loader, no esbuild helper process (decision 027). The tests
 * compile it from the current source first (test/support/global-setup.ts).
 */
const PORTA_BIN = fileURLToPath(new URL("../../packages/cli/bin/porta.js", import.meta.url));
const scratch = mkdtempSync(path.join(tmpdir(), "porta-cli-compiled-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const RECORDER = fileURLToPath(new URL("../support/record-imports.mjs", import.meta.url));
const env = { PATH: process.env.PATH ?? "", HOME: scratch } as unknown as NodeJS.ProcessEnv;

it("answers `porta help` from the compiled bundle without loading tsx or any TypeScript", () => {
  const recorded = path.join(scratch, "imports.txt");
  const run = spawnSync(process.execPath, ["--import", RECORDER, PORTA_BIN, "help"], { env: { ...env, RECORD_IMPORTS_FILE: recorded }, encoding: "utf8" });
  expect(run.status, run.stderr).toBe(0);
  expect(run.stderr).toContain("porta: manage Porta from the command line");
  const loaded = readFileSync(recorded, "utf8").trim().split("\n");
  expect(loaded).toContain(new URL("../../packages/cli/dist/main.js", import.meta.url).href);
  expect(loaded.filter((url) => /\/node_modules\/tsx\/|\.tsx?$/.test(url))).toEqual([]);
});

it("says how to build the CLI when its compiled form is missing", () => {
  // A copy of the bin beside no dist/, as in a checkout where the install's build did not run.
  const bin = path.join(scratch, "cli", "bin", "porta.js");
  mkdirSync(path.dirname(bin), { recursive: true });
  copyFileSync(PORTA_BIN, bin);
  const run = spawnSync(process.execPath, [bin, "whoami"], { env, encoding: "utf8" });
  expect(run.status).toBe(1);
  expect(run.stderr.trim()).toMatch(/^porta: the CLI is not built \(.*dist\/main\.js is missing\): run `npm install` or `npm run build` in Porta's repository\.$/);
});
