import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * Once per test run: the CLI's tests run `porta` as people do, in its compiled form
 * (packages/cli/dist), so it is compiled here from the current source (a fraction of a second).
 */
export default function setup() {
  execFileSync(process.execPath, [fileURLToPath(new URL("../../scripts/compile.mjs", import.meta.url)), "cli"], { stdio: "inherit" });
}
