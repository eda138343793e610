#!/usr/bin/env node
// Runs the compiled CLI with plain Node (decision 027): packages/cli/dist/main.js, which
// `npm install` (postinstall) and `npm run build` compile from src/ with the admin client inlined.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const compiled = new URL("../dist/main.js", import.meta.url);
if (!existsSync(fileURLToPath(compiled))) {
  process.stderr.write(`porta: the CLI is not built (${fileURLToPath(compiled)} is missing): run \`npm install\` or \`npm run build\` in Porta's repository.\n`);
  process.exit(1);
}
const { main } = await import(compiled.href);
process.exitCode = await main(process.argv.slice(2));
