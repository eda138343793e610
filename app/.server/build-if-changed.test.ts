import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BuildError, pendingBuild, sourceHash } from "./build-if-changed";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A project with a few sources and a stand-in build that writes the server file and counts its runs. */
function project(): string {
  const root = mkdtempSync(path.join(tmpdir(), "porta-build-"));
  roots.push(root);
  mkdirSync(path.join(root, "app", "routes"), { recursive: true });
  writeFileSync(path.join(root, "app", "root.tsx"), "export default 1;\n");
  writeFileSync(path.join(root, "app", "routes", "home.tsx"), "export default 2;\n");
  writeFileSync(path.join(root, "package.json"), "{}\n");
  return root;
}
const FAKE_BUILD: [string, ...string[]] = [
  process.execPath,
  "-e",
  `const fs = require("fs"); fs.mkdirSync("build/server", { recursive: true }); fs.writeFileSync("build/server/index.js", "x");
   fs.appendFileSync("runs", "1"); console.log("vite v5 building SSR bundle for production..."); console.warn("Generated an empty chunk");`,
];
const runs = (root: string) => readFileSync(path.join(root, "runs"), "utf8").length;

describe("building only when the sources changed", () => {
  it("builds the first time, not again for the same sources, and again after a source changed", async () => {
    const root = project();
    await pendingBuild({ root, command: FAKE_BUILD })!.run();
    expect(runs(root)).toBe(1);
    expect(pendingBuild({ root, command: FAKE_BUILD })).toBeNull();
    writeFileSync(path.join(root, "app", "routes", "home.tsx"), "export default 3;\n");
    await pendingBuild({ root, command: FAKE_BUILD })!.run();
    expect(runs(root)).toBe(2);
    // The build's chatter went to the log, not to the terminal.
    expect(readFileSync(path.join(root, ".cache", "build.log"), "utf8")).toContain("Generated an empty chunk");
  });

  it("builds again when the output is gone, and ignores tests and caches", async () => {
    const root = project();
    await pendingBuild({ root, command: FAKE_BUILD })!.run();
    const before = sourceHash(root);
    writeFileSync(path.join(root, "app", "routes", "home.test.tsx"), "test\n");
    mkdirSync(path.join(root, "app", ".cache"));
    writeFileSync(path.join(root, "app", ".cache", "x"), "y");
    expect(sourceHash(root)).toBe(before);
    rmSync(path.join(root, "build", "server", "index.js"));
    expect(pendingBuild({ root, command: FAKE_BUILD })).not.toBeNull();
  });

  it("hashes names as well as contents: a renamed file is a change", async () => {
    const root = project();
    const before = sourceHash(root);
    rmSync(path.join(root, "app", "routes", "home.tsx"));
    writeFileSync(path.join(root, "app", "routes", "index.tsx"), "export default 2;\n");
    expect(sourceHash(root)).not.toBe(before);
  });

  it("reports a failed build with the end of its output, and leaves no hash that would skip the next try", async () => {
    const root = project();
    const failing: [string, ...string[]] = [process.execPath, "-e", `console.error("app/root.tsx:1:1: ERROR: Expected \\";\\""); process.exit(1)`];
    const error = await pendingBuild({ root, command: failing })!
      .run()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BuildError);
    expect((error as BuildError).message).toMatch(/the build failed \(exit 1\); its output is in \.cache\/build\.log/);
    expect((error as BuildError).logTail).toContain('ERROR: Expected ";"');
    expect(pendingBuild({ root, command: FAKE_BUILD })).not.toBeNull();
  });
});
