import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";

/**
 * The published form of @porta/resource-server: its tsc build emits plain ESM with type
 * declarations that Node loads without a TypeScript loader, importing nothing but jose.
 * Built inside the package, so that jose resolves from the repository's node_modules.
 */
const packageDir = fileURLToPath(new URL("../../packages/resource-server/", import.meta.url));
const outDir = mkdtempSync(path.join(packageDir, ".dist-test-"));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

it("builds to ESM with .d.ts files that plain Node imports", () => {
  execFileSync(process.execPath, [path.join(packageDir, "../../node_modules/typescript/bin/tsc"), "-p", path.join(packageDir, "tsconfig.build.json"), "--outDir", outDir], { stdio: "pipe" });
  expect(existsSync(path.join(outDir, "index.d.ts"))).toBe(true);
  expect(existsSync(path.join(outDir, "verify.test.js"))).toBe(false);
  const script = `
    const lib = await import(${JSON.stringify(path.join(outDir, "index.js"))});
    // Nothing listens there; a token that does not parse is refused without asking.
    const verifier = lib.createVerifier({ issuer: "http://127.0.0.1:9/acme", resource: "https://mcp.example.com/mcp" });
    const refused = await verifier.verify("not-a-jwt").catch((e) => e);
    console.log(JSON.stringify({
      path: lib.protectedResourceMetadataPath("https://mcp.example.com/mcp"),
      middleware: typeof lib.requireBearerAuth({ verifier }),
      refusal: refused instanceof lib.BearerError && refused.status,
    }));
  `;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", env: { PATH: process.env.PATH ?? "" } as unknown as NodeJS.ProcessEnv });
  expect(JSON.parse(out)).toEqual({ path: "/.well-known/oauth-protected-resource/mcp", middleware: "function", refusal: 401 });
});
