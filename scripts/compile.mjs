// @ts-check
/**
 * Compiles Porta's own TypeScript to plain JavaScript, so that production and the CLI run
 * without a TypeScript loader (decision 027):
 *
 *   node scripts/compile.mjs server    app/.server (from app/.server/main.ts) → dist/server/
 *   node scripts/compile.mjs cli       packages/cli with the admin client inlined → packages/cli/dist/main.js
 *   node scripts/compile.mjs client    the admin client library → packages/admin-client/dist (tsc, with .d.ts)
 *   node scripts/compile.mjs resource-server  the resource server library → packages/resource-server/dist (tsc, with .d.ts)
 *
 * Several targets may be named at once. Only our own code is bundled: every package stays an
 * import that Node resolves from node_modules at run time.
 */
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const at = (/** @type {string} */ relative) => path.join(ROOT, relative);

/**
 * Bare specifiers stay imports, except the `~/` alias for app/ (tsconfig paths), which is ours.
 * (esbuild 0.17's own `packages: "external"` would treat `~/…` as a package too.)
 * @type {import("esbuild").Plugin}
 */
const externalPackages = {
  name: "external-packages",
  setup(on) {
    on.onResolve({ filter: /^[^./]/ }, (args) => (args.kind === "entry-point" || args.path.startsWith("~/") ? undefined : { path: args.path, external: true }));
  },
};

/** @type {import("esbuild").BuildOptions} */
const NODE = { bundle: true, format: "esm", platform: "node", target: "node24", logLevel: "warning", sourcemap: "linked", legalComments: "none" };

const TARGETS = {
  /**
   * The server: the entry's dynamic imports become chunks of their own, so that the
   * configuration checks load without the rest of the server (a bad variable fails at once).
   * The chunks sit flat in dist/server/, two folders below the root like app/.server/, which
   * app/.server/root.ts relies on.
   */
  async server() {
    rmSync(at("dist/server"), { recursive: true, force: true });
    await build({
      ...NODE,
      entryPoints: { main: at("app/.server/main.ts") },
      outdir: at("dist/server"),
      splitting: true,
      chunkNames: "[name]-[hash]",
      tsconfig: at("tsconfig.json"),
      plugins: [externalPackages],
    });
  },
  /** The CLI needs nothing installed: the admin client's source (packages/cli/tsconfig.json maps it), zod and yaml are inlined. */
  async cli() {
    rmSync(at("packages/cli/dist"), { recursive: true, force: true });
    await build({
      ...NODE,
      entryPoints: { main: at("packages/cli/src/main.ts") },
      outdir: at("packages/cli/dist"),
      tsconfig: at("packages/cli/tsconfig.json"),
      // `porta plan|apply|export` is a chunk of its own, loaded when one of them runs.
      splitting: true,
      chunkNames: "[name]-[hash]",
      // The inlined `yaml` is CommonJS that requires Node's built-ins: an ES module has no `require` of its own.
      banner: { js: 'import { createRequire as __cliCreateRequire } from "node:module"; const require = __cliCreateRequire(import.meta.url);' },
    });
  },
  /** The library as published: ESM with type declarations, by its own tsc build. */
  async client() {
    const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
    execFileSync(process.execPath, [tsc, "-p", at("packages/admin-client/tsconfig.build.json")], { stdio: "inherit" });
  },
  /** The library APIs and MCP servers verify Porta's access tokens with, built the same way. */
  async "resource-server"() {
    const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
    rmSync(at("packages/resource-server/dist"), { recursive: true, force: true });
    execFileSync(process.execPath, [tsc, "-p", at("packages/resource-server/tsconfig.build.json")], { stdio: "inherit" });
  },
};

const names = process.argv.slice(2);
const unknown = names.filter((name) => !(name in TARGETS));
if (names.length === 0 || unknown.length > 0) {
  process.stderr.write(`usage: node scripts/compile.mjs ${Object.keys(TARGETS).join("|")} [...]\n`);
  process.exit(2);
}
for (const name of names) await TARGETS[/** @type {keyof typeof TARGETS} */ (name)]();
