import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Libraries that only some sign-ins use load on first use, not at every start (decision 056):
 * openid-client (OpenID upstreams), node-saml with xml-crypto (SAML connections) and
 * @peculiar/x509 with reflect-metadata (a SAML connection's key pair). Together they would cost
 * every start about 300 ms of CPU and 25 MB. The built server must reach them only through
 * `import()`: a static import at the top of the bundle would load them at start again.
 */
const ROOT = path.resolve(import.meta.dirname, "..");
const LAZY = ["openid-client", "@node-saml/node-saml", "@peculiar/x509", "reflect-metadata"];

function bundles(): Array<{ file: string; text: string }> {
  const dirs = [path.join(ROOT, "build/server"), path.join(ROOT, "build/server/assets"), path.join(ROOT, "dist/server")];
  return dirs.flatMap((dir) =>
    readdirSync(dir)
      .filter((file) => file.endsWith(".js"))
      .map((file) => ({ file: path.relative(ROOT, path.join(dir, file)), text: readFileSync(path.join(dir, file), "utf8") })),
  );
}

const escape = (s: string) => s.replace(/[/.@-]/g, (c) => `\\${c}`);

describe("libraries loaded on first use", () => {
  const files = bundles();

  it.each(LAZY)("%s is never imported statically by the built server", (library) => {
    const statically = new RegExp(`^\\s*import\\s+(?:[^;]*?\\s+from\\s+)?["']${escape(library)}(?:/[^"']*)?["']`, "m");
    expect(files.filter((f) => statically.test(f.text)).map((f) => f.file)).toEqual([]);
  });

  it.each(LAZY)("%s is reached through import()", (library) => {
    const dynamically = new RegExp(`import\\(["']${escape(library)}(?:/[^"']*)?["']\\)`);
    expect(files.some((f) => dynamically.test(f.text))).toBe(true);
  });
});
