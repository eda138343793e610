// @ts-check
/**
 * `npm start`: runs the compiled server (dist/server/, scripts/compile.mjs) with plain Node.
 * When the sources changed since the last build, it compiles the server first (a second), checks
 * the configuration, the port and the data-dir lock with it, and only then builds the pages (most
 * of a minute), printing one line for the build. Decision 027.
 */
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import v8 from "node:v8";
import { BuildError, pendingBuild } from "./build-if-changed.mjs";
import { requireSupportedRuntime } from "./runtime.mjs";

requireSupportedRuntime();

// Before any WebAssembly is compiled: Prisma's query compiler and PGlite stay on V8's baseline
// compiler. Optimizing them cost ~0.5–1.8 CPU-s at every start and left ~30–60 MB of compiler
// memory behind for a few per cent on a query (decision 056).
v8.setFlagsFromString("--liftoff-only");

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
