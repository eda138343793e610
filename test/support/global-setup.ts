import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { runtimeProblem } from "../../scripts/runtime.mjs";
import { makeTemplates } from "./templates";

/**
 * Once per test run: the tests prove Porta on the Node it pins (decision 063), so another Node
 * stops the run at once. The CLI's tests run `porta` as people do, in its compiled form
 * (packages/cli/dist), so it is compiled here from the current source (a fraction of a second).
 * The migrated database template every test file starts from is made here (templates.ts).
 */
export default async function setup() {
  const problem = runtimeProblem();
  if (problem) throw new Error(problem);
  execFileSync(process.execPath, [fileURLToPath(new URL("../../scripts/compile.mjs", import.meta.url)), "cli"], { stdio: "inherit" });
  return makeTemplates();
}
