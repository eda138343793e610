// @ts-check
/**
 * `npm start`: runs the compiled server (dist/server/, scripts/compile.mjs) with plain Node.
 * When the sources changed since the last build, it compiles the server first (a second), checks
 * the configuration, the port and the data-dir lock with it, and only then builds the pages (most
 * of a minute), printing one line for the build. Decision 027.
 */
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { BuildError, pendingBuild } from "./build-if-changed.mjs";
import { requireSupportedRuntime } from "./runtime.mjs";

requireSupportedRuntime();

// The launchers (`npm start`, the Docker image, the Helm chart) run this with `node --liftoff-only`:
// Prisma's query compiler and PGlite stay on V8's baseline compiler, which saves ~1.4 CPU-s per
// start and ~60 MB at idle (decision 056). It must be on the command line: Node 24's V8 ignores it
// when set at run time, and NODE_OPTIONS refuses it.

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** @param {string} message */
function fail(message) {
  process.stderr.write(`porta: ${message}\n`);
  process.exit(1);
}

/** @param {unknown} error */
function failBuild(error) {
  if (error instanceof BuildError) fail(`${error.message}\n${error.logTail}`);
  throw error;
}

const build = pendingBuild({ root: ROOT });
if (build) await build.buildServer().catch(failBuild);

const porta = await import(pathToFileURL(path.join(ROOT, "dist", "server", "main.js")).href);
/** @param {unknown} error */
const failWith = (error) => porta.fail(error instanceof Error ? error.message : String(error));
const checked = await porta.preflight().catch(failWith);

if (build) {
  const started = Date.now();
  process.stdout.write("  Building Porta (its sources changed since the last build)... ");
  await build.buildPages().catch((error) => {
    process.stdout.write("failed.\n");
    failBuild(error);
  });
  process.stdout.write(`done in ${Math.round((Date.now() - started) / 1000)} s.\n`);
}

await porta.serve(checked).catch(failWith);
