import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The repository root, where build/ and prisma/ are. Every home of this module sits two folders
 * below it: the source (app/.server/), the compiled server (dist/server/, where
 * scripts/compile.mjs puts every chunk flat) and Remix's server build (build/server/index.js),
 * so one relative URL serves all three.
 */
export const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Porta's version, from its package.json (read once). */
let version: string | undefined;
export function readPackageVersion(): string {
  version ??= (JSON.parse(readFileSync(path.join(PROJECT_ROOT, "package.json"), "utf8")) as { version: string }).version;
  return version;
}
