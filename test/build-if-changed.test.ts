import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BuildError, pendingBuild, sourceHash, type Command } from "../scripts/build-if-changed.mjs";

/**
 * `npm start` (scripts/start.mjs) builds only when the sources changed: the server first, then
 * the pages, and records the sources' hash only when both succeeded.
 */
const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A project with a few sources of the pages and of the server. */
function project(): string {
  const root = mkdtempSync(path.join(tmpdir(), "porta-build-"));
  roots.push(root);
  mkdirSync(path.join(root, "app", "routes"), { recursive: true });
  mkdirSync(path.join(root, "app", ".server", "config"), { recursive: true });
  writeFileSync(path.join(root, "app", "root.tsx"), "export default 1;\n");
  writeFileSync(path.join(root, "app", "routes", "home.tsx"), "export default 2;\n");
  writeFileSync(path.join(root, "app", ".server", "config", "env.ts"), "export const port = 3000;\n");
  writeFileSync(path.join(root, "server.ts"), "import './app/.server/main';\n");
  writeFileSync(path.join(root, "package.json"), "{}\n");
  return root;
}

/** Stand-in builds that write their output, note their run in `runs`, and chatter like the real ones. */
const step = (output: string, mark: string, chatter: string): Command => [
  process.execPath,
  "-e",
  `const fs = require("fs"), path = require("path"); fs.mkdirSync(path.dirname(${JSON.stringify(output)}), { recursive: true });
   fs.writeFileSync(${JSON.stringify(output)}, "x"); fs.appendFileSync("runs", ${JSON.stringify(mark)}); console.warn(${JSON.stringify(chatter)});`,
];
const FAKE = {
  server: step("dist/server/main.js", "s", "esbuild: compiled"),
  pages: step("build/server/index.js", "p", "Generated an empty chunk"),
};
const runs = (root: string) => readFileSync(path.join(root, "runs"), "utf8");

async function buildAll(root: string) {
  const build = pendingBuild({ root, ...FAKE });
  if (!build) throw new Error("expected a build");
  await build.buildServer();
  await build.buildPages();
}

describe("building only when the sources changed", () => {
  it("builds the first time, not again for the same sources, and again after a source changed", async () => {
    const root = project();
    await buildAll(root);
    expect(runs(root)).toBe("sp");
    expect(pendingBuild({ root, ...FAKE })).toBeNull();
    writeFileSync(path.join(root, "app", "routes", "home.tsx"), "export default 3;\n");
    await buildAll(root);
    expect(runs(root)).toBe("spsp");
    // Both builds' chatter went to the log, not to the terminal.
    const log = readFileSync(path.join(root, ".cache", "build.log"), "utf8");
    expect(log).toContain("esbuild: compiled");
    expect(log).toContain("Generated an empty chunk");
  });

  it("builds again when a source of the server changes: app/.server, server.ts, or how it is compiled", async () => {
    const root = project();
    const changes = [
      () => writeFileSync(path.join(root, "app", ".server", "config", "env.ts"), "export const port = 3001;\n"),
      () => writeFileSync(path.join(root, "server.ts"), "import './app/.server/main'; // changed\n"),
      () => (mkdirSync(path.join(root, "scripts")), writeFileSync(path.join(root, "scripts", "compile.mjs"), "// new options\n")),
    ];
    for (const change of changes) {
      await buildAll(root);
      expect(pendingBuild({ root, ...FAKE })).toBeNull();
      change();
      expect(pendingBuild({ root, ...FAKE })).not.toBeNull();
    }
  });

  it("builds again when either output is gone, and ignores tests and caches", async () => {
    const root = project();
    await buildAll(root);
    const before = sourceHash(root);
    writeFileSync(path.join(root, "app", "routes", "home.test.tsx"), "test\n");
    mkdirSync(path.join(root, "app", ".cache"));
    writeFileSync(path.join(root, "app", ".cache", "x"), "y");
    expect(sourceHash(root)).toBe(before);
    for (const output of ["build/server/index.js", "dist/server/main.js"]) {
      rmSync(path.join(root, output));
      expect(pendingBuild({ root, ...FAKE }), output).not.toBeNull();
      await buildAll(root);
    }
  });

  it("hashes names as well as contents: a renamed file is a change", async () => {
    const root = project();
    const before = sourceHash(root);
    rmSync(path.join(root, "app", "routes", "home.tsx"));
    writeFileSync(path.join(root, "app", "routes", "index.tsx"), "export default 2;\n");
    expect(sourceHash(root)).not.toBe(before);
  });

  it("records nothing until the pages are built too: a start stopped after the server's build builds again", async () => {
    const root = project();
    await pendingBuild({ root, ...FAKE })!.buildServer();
    expect(runs(root)).toBe("s");
    expect(pendingBuild({ root, ...FAKE })).not.toBeNull();
  });

  it("reports a failed build with the end of its output, and leaves no hash that would skip the next try", async () => {
    const root = project();
    const failing: Command = [process.execPath, "-e", `console.error("app/root.tsx:1:1: ERROR: Expected \\";\\""); process.exit(1)`];
    for (const broken of [{ server: failing }, { pages: failing }]) {
      const build = pendingBuild({ root, ...FAKE, ...broken })!;
      const error = await build
        .buildServer()
        .then(() => build.buildPages())
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BuildError);
      expect((error as BuildError).message).toMatch(/the build failed \(exit 1\); its output is in \.cache\/build\.log/);
      expect((error as BuildError).logTail).toContain('ERROR: Expected ";"');
      expect(pendingBuild({ root, ...FAKE })).not.toBeNull();
    }
  });
});
