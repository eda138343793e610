import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";

/**
 * The published form of the library: `npm run build` in packages/admin-client emits plain ESM
 * with type declarations that Node loads without any TypeScript loader.
 */
const packageDir = fileURLToPath(new URL("../../packages/admin-client/", import.meta.url));
const outDir = mkdtempSync(path.join(tmpdir(), "porta-client-dist-"));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

it("builds to ESM with .d.ts files that plain Node imports", () => {
  execFileSync(process.execPath, [path.join(packageDir, "../../node_modules/typescript/bin/tsc"), "-p", path.join(packageDir, "tsconfig.build.json"), "--outDir", outDir], { stdio: "pipe" });
  expect(existsSync(path.join(outDir, "index.d.ts"))).toBe(true);
  expect(existsSync(path.join(outDir, "generated/operations.d.ts"))).toBe(true);
  const script = `
    const lib = await import(${JSON.stringify(path.join(outDir, "index.js"))});
    const admin = new lib.PortaAdmin({ baseUrl: "http://127.0.0.1:9", auth: lib.staticToken("t") });
    const error = lib.errorFromResponse(429, { error: { code: "rate_limited", message: "m" } }, new Headers({ "retry-after": "3" }));
    console.log(JSON.stringify({ listAll: typeof admin.organizations.listAll, invite: typeof admin.users.invite, rate: error instanceof lib.PortaError && error.retryAfter }));
  `;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", env: { PATH: process.env.PATH ?? "" } as unknown as NodeJS.ProcessEnv });
  expect(JSON.parse(out)).toEqual({ listAll: "function", invite: "function", rate: 3 });
});
