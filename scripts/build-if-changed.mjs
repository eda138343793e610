// @ts-check
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * `npm start` builds only when the sources changed since the last build: a restart costs a
 * second, not a 45-second `remix vite:build`. The sources are hashed by content (not by time: a
 * fresh clone has new times and old contents); the builds' output goes to a log file, and the
 * terminal gets one line, or the end of the log when a build fails.
 *
 * Plain JavaScript, because it runs before anything is compiled (scripts/start.mjs).
 */

/** What the builds read: the pages, the server (server.ts, app/.server) and how both are built. Tests are left out. */
const SOURCE_ROOTS = ["app", "emails", "public"];
const SOURCE_FILES = ["server.ts", "package.json", "package-lock.json", "tsconfig.json", "vite.config.ts", "scripts/compile.mjs"];
const LEFT_OUT = /(^|\/)(node_modules|\.cache)(\/|$)|\.test\.tsx?$/;

export const HASH_FILE = path.join("build", ".source-hash");
export const BUILD_LOG = path.join(".cache", "build.log");
/**
 * The pages (Remix's server build) and the compiled server (scripts/compile.mjs): no build
 * without both counts as current. The server goes outside build/, which Remix's build empties.
 */
export const OUTPUTS = [path.join("build", "server", "index.js"), path.join("dist", "server", "main.js")];

/**
 * @param {string} root
 * @param {string} dir
 * @returns {Generator<string>}
 */
function* filesUnder(root, dir) {
  for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const relative = path.posix.join(dir, entry.name);
    if (LEFT_OUT.test(relative)) continue;
    if (entry.isDirectory()) yield* filesUnder(root, relative);
    else if (entry.isFile()) yield relative;
  }
}

/**
 * A hash of every source the builds read: names and contents, in a stable order.
 * @param {string} root
 */
export function sourceHash(root) {
  const files = [
    ...SOURCE_ROOTS.filter((dir) => existsSync(path.join(root, dir))).flatMap((dir) => [...filesUnder(root, dir)]),
    ...SOURCE_FILES.filter((file) => existsSync(path.join(root, file))),
  ].sort();
  const hash = createHash("sha256");
  for (const file of files) {
    hash.update(file).update("\0").update(readFileSync(path.join(root, file))).update("\0");
  }
  return hash.digest("hex");
}

export class BuildError extends Error {
  /**
   * @param {string} message
   * @param {string} logTail
   */
  constructor(message, logTail) {
    super(message);
    this.name = "BuildError";
    this.logTail = logTail;
  }
}

/**
 * @typedef {[string, ...string[]]} Command
 * @typedef {{ root: string, server?: Command, pages?: Command, outputs?: string[] }} BuildOptions
 * @typedef {{ buildServer(): Promise<void>, buildPages(): Promise<void> }} PendingBuild
 */

/**
 * The build to make, or null when the last one is of these very sources. The server is built
 * first (a second), so that the launcher can check the configuration with it before the pages'
 * build (most of a minute); the hash is written only when both succeeded.
 * @param {BuildOptions} options
 * @returns {PendingBuild | null}
 */
export function pendingBuild(options) {
  const {
    root,
    server = [process.execPath, path.join(root, "scripts", "compile.mjs"), "server"],
    pages = ["npx", "--no-install", "remix", "vite:build"],
    outputs = OUTPUTS,
  } = options;
  const hash = sourceHash(root);
  const hashFile = path.join(root, HASH_FILE);
  const built = outputs.every((output) => existsSync(path.join(root, output)));
  if (built && existsSync(hashFile) && readFileSync(hashFile, "utf8").trim() === hash) return null;
  let logStarted = false;
  /** @param {Command} command */
  const step = async (command) => {
    await run(root, command, logStarted);
    logStarted = true;
  };
  return {
    buildServer: () => step(server),
    async buildPages() {
      await step(pages);
      const missing = outputs.find((output) => !existsSync(path.join(root, output)));
      if (missing) throw new BuildError(`the build left no ${missing}; its output is in ${BUILD_LOG}`, tailOf(root));
      writeFileSync(hashFile, `${hash}\n`);
    },
  };
}

/** @param {string} root */
function tailOf(root) {
  return readFileSync(path.join(root, BUILD_LOG), "utf8").trimEnd().split("\n").slice(-30).join("\n");
}

/**
 * Runs one build command with its output appended to the log (the first step of a build starts it afresh).
 * @param {string} root
 * @param {Command} command
 * @param {boolean} append
 */
async function run(root, command, append) {
  const logFile = path.join(root, BUILD_LOG);
  mkdirSync(path.dirname(logFile), { recursive: true });
  const log = createWriteStream(logFile, { flags: append ? "a" : "w" });
  const code = await new Promise((resolve, reject) => {
    const child = spawn(command[0], command.slice(1), { cwd: root, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NODE_ENV: "production" } });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    child.once("error", reject);
    child.once("close", resolve);
  });
  await new Promise((resolve) => log.end(resolve));
  if (code !== 0) throw new BuildError(`the build failed (exit ${code}); its output is in ${BUILD_LOG}`, tailOf(root));
}
