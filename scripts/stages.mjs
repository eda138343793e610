// @ts-check
/**
 * Runs commands as named stages and says what each cost: `npm test` (the typecheck and the lint
 * side by side on the two cores, then the build, then every vitest suite) and the stages of
 * `.ci/run`. Each stage's wall time is printed when it ends and, with STAGE_LOG set, appended
 * to that file (one `seconds<TAB>name` line), so that `.ci/run` can print the whole run's table.
 * A vitest stage also writes its JSON report and prints its ten slowest files.
 *
 *   node scripts/stages.mjs test                  what `npm test` runs
 *   node scripts/stages.mjs run <name> -- <cmd…>  one command as a stage
 *   node scripts/stages.mjs vitest <name> [args…] one vitest run as a stage, with its slowest files
 *   node scripts/stages.mjs report                the table of STAGE_LOG
 */
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const log = process.env.STAGE_LOG;

/** @param {number} ms */
const seconds = (ms) => `${(ms / 1000).toFixed(0)} s`;

/**
 * @param {string[]} command
 * @returns {Promise<number>}
 */
function run(command) {
  return new Promise((resolve) => {
    const child = spawn(command[0], command.slice(1), { stdio: "inherit" });
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/**
 * @param {string} name
 * @param {() => Promise<number>} work
 */
async function stage(name, work) {
  const started = Date.now();
  const code = await work();
  const took = Date.now() - started;
  process.stdout.write(`\n[stage] ${name}: ${seconds(took)}${code === 0 ? "" : ` (failed, exit ${code})`}\n`);
  if (log) appendFileSync(log, `${(took / 1000).toFixed(1)}\t${name}\n`);
  if (code !== 0) process.exit(code);
}

/** @param {string} file */
function slowestFiles(file) {
  if (!existsSync(file)) return;
  /** @type {{ testResults: Array<{ name: string; startTime: number; endTime: number; assertionResults: unknown[] }> }} */
  const report = JSON.parse(readFileSync(file, "utf8"));
  const files = report.testResults
    .map((t) => ({ name: path.relative(process.cwd(), t.name), ms: t.endTime - t.startTime, tests: t.assertionResults.length }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 10);
  process.stdout.write("\n[stage] the ten slowest files:\n");
  for (const f of files) process.stdout.write(`  ${seconds(f.ms).padStart(6)}  ${String(f.tests).padStart(3)} tests  ${f.name}\n`);
}

/**
 * @param {string} name
 * @param {string[]} args
 */
async function vitest(name, args) {
  const dir = mkdtempSync(path.join(tmpdir(), "porta-vitest-"));
  const report = path.join(dir, "report.json");
  try {
    await stage(name, async () => {
      const code = await run(["vitest", "run", "--reporter=default", "--reporter=json", `--outputFile.json=${report}`, ...args]);
      slowestFiles(report);
      return code;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === "test") {
  await stage("typecheck and lint (side by side)", async () => {
    const [typecheck, lint] = await Promise.all([run(["tsc", "--noEmit"]), run(["eslint", ".", "--max-warnings", "0"])]);
    return typecheck || lint;
  });
  await stage("build", () => run(["npm", "run", "build", "--silent"]));
  await vitest("vitest", []);
} else if (mode === "run") {
  const at = rest.indexOf("--");
  await stage(rest.slice(0, at).join(" "), () => run(rest.slice(at + 1)));
} else if (mode === "vitest") {
  await vitest(rest[0] ?? "vitest", rest.slice(1));
} else if (mode === "report") {
  if (!log || !existsSync(log)) process.exit(0);
  const rows = readFileSync(log, "utf8").trim().split("\n").map((line) => line.split("\t"));
  const total = rows.reduce((sum, [s]) => sum + Number(s), 0);
  process.stdout.write("\n==> stage times\n");
  for (const [s, name] of rows) process.stdout.write(`  ${`${Number(s).toFixed(0)} s`.padStart(7)}  ${name}\n`);
  process.stdout.write(`  ${`${total.toFixed(0)} s`.padStart(7)}  in all (${(total / 60).toFixed(1)} min)\n`);
} else {
  process.stderr.write("usage: node scripts/stages.mjs test | run <name> -- <command…> | vitest <name> [args…] | report\n");
  process.exit(2);
}
