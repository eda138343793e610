// @ts-check
/**
 * `npm run migrate`: applies Porta's database migrations and exits (docs/operations.md), for platforms that
 * migrate before they roll out new nodes. Runs the compiled server (dist/server/), compiling it
 * first when the sources changed; the pages are not needed and not built.
 */
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { BuildError, pendingBuild } from "./build-if-changed.mjs";
import { requireSupportedRuntime } from "./runtime.mjs";

requireSupportedRuntime();

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const build = pendingBuild({ root: ROOT });
if (build) {
  await build.buildServer().catch((/** @type {unknown} */ error) => {
    if (!(error instanceof BuildError)) throw error;
    process.stderr.write(`porta: ${error.message}\n${error.logTail}\n`);
    process.exit(1);
  });
}
const porta = await import(pathToFileURL(path.join(ROOT, "dist", "server", "main.js")).href);
await porta.migrate().catch((/** @type {unknown} */ error) => porta.fail(error instanceof Error ? error.message : String(error)));
