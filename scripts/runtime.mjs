// @ts-check
/**
 * Porta runs on the Node.js major that package.json's `engines` names (decision 063). `npm install`
 * puts that Node at node_modules/.bin/node, where every npm script finds it first; a script run
 * with another Node (`node scripts/start.mjs` on a machine whose own Node is older) stops here
 * with one line, before a native module built for the pinned Node is loaded.
 */
import { readFileSync } from "node:fs";

const PACKAGE = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
/** The major of `engines.node` (">=24.11.0 <25" → 24). */
export const REQUIRED_MAJOR = Number(/\d+/.exec(PACKAGE.engines.node)?.[0]);

/** Why this Node cannot run Porta, or undefined when it can. */
export function runtimeProblem(version = process.versions.node, execPath = process.execPath) {
  const major = Number(version.split(".")[0]);
  if (major === REQUIRED_MAJOR) return undefined;
  return (
    `Porta runs on Node.js ${REQUIRED_MAJOR}; this is Node.js ${version} (${execPath}). ` +
    `\`npm install\` puts Node.js ${REQUIRED_MAJOR} in node_modules/.bin and \`npm start\` uses it; ` +
    `or run this with Node.js ${REQUIRED_MAJOR} (package.json "engines").`
  );
}

/** Ends the process with that line when this Node cannot run Porta. */
export function requireSupportedRuntime() {
  const problem = runtimeProblem();
  if (!problem) return;
  process.stderr.write(`porta: ${problem}\n`);
  process.exit(1);
}
