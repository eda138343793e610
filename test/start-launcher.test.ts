import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";
import { REPO_ROOT } from "./support/process";

/**
 * `npm start` runs scripts/start.mjs, which runs the compiled server with plain Node. A
 * configuration mistake is reported by the compiled server's own checks, with the same one line
 * as from source, before the pages are built (decision 027): it never waits for a minute-long
 * build. Whether the sources are current or not, the pages' build must not run.
 */
const scratch = mkdtempSync(path.join(tmpdir(), "porta-launcher-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** What the pages' build leaves: unchanged if it did not run. */
function pagesBuildState() {
  const at = (file: string) => path.join(REPO_ROOT, file);
  return {
    pages: existsSync(at("build/server/index.js")) ? statSync(at("build/server/index.js")).mtimeMs : null,
    hash: existsSync(at("build/.source-hash")) ? readFileSync(at("build/.source-hash"), "utf8") : null,
  };
}

const RECORDER = fileURLToPath(new URL("./support/record-imports.mjs", import.meta.url));

it("refuses a bad configuration with one line, before building the pages, running compiled code only", () => {
  const before = pagesBuildState();
  const recorded = path.join(scratch, "imports.txt");
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: scratch,
    NODE_ENV: "production",
    PORT: "3000",
    DATA_DIR: path.join(scratch, "data"),
    REDIS_URL: "http://cache.internal:6379",
    RECORD_IMPORTS_FILE: recorded,
  };
  const run = spawnSync(process.execPath, ["--import", RECORDER, path.join(REPO_ROOT, "scripts", "start.mjs")], {
    cwd: REPO_ROOT,
    env: env as unknown as NodeJS.ProcessEnv,
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(run.status, run.stderr).toBe(1);
  expect(run.stderr).toMatch(/^porta: configuration error: REDIS_URL: expected a Redis URL[^\n]*\n$/);
  expect(run.stdout).not.toContain("Building");
  expect(pagesBuildState()).toEqual(before);
  // The compiled server is what checked it; no TypeScript loader and no TypeScript source was loaded.
  const loaded = readFileSync(recorded, "utf8").trim().split("\n");
  expect(loaded).toContain(new URL("../dist/server/main.js", import.meta.url).href);
  expect(loaded.filter((url) => /\/node_modules\/tsx\/|\.tsx?$/.test(url))).toEqual([]);
});
