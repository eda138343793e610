import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * `npm start` builds the pages only when their sources changed since the last build: a restart
 * costs seconds, not a 45-second `remix vite:build`. The sources are hashed by content (not by
 * time: a fresh clone has new times and old contents); the build's output goes to a log file, and
 * the terminal gets one line, or the end of the log when the build fails.
 */

/** What the build reads. Tests are left out: they never reach the bundle. */
const SOURCE_ROOTS = ["app", "emails", "public"];
const SOURCE_FILES = ["package.json", "package-lock.json", "tsconfig.json", "vite.config.ts"];
const LEFT_OUT = /(^|\/)(node_modules|\.cache)(\/|$)|\.test\.tsx?$/;

export const HASH_FILE = path.join("build", ".source-hash");
export const BUILD_LOG = path.join(".cache", "build.log");

function* filesUnder(root: string, dir: string): Generator<string> {
  for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const relative = path.posix.join(dir, entry.name);
    if (LEFT_OUT.test(relative)) continue;
    if (entry.isDirectory()) yield* filesUnder(root, relative);
    else if (entry.isFile()) yield relative;
  }
}

/** A hash of every source the build reads: names and contents, in a stable order. */
export function sourceHash(root: string): string {
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
  constructor(
    message: string,
    readonly logTail: string,
  ) {
    super(message);
    this.name = "BuildError";
  }
}

export interface BuildOptions {
  root: string;
  /** The build command; `npm run build` unless a test gives another. */
  command?: [string, ...string[]];
  /** The file the server loads; no build without it counts as current. */
  output?: string;
}

const DEFAULT_OUTPUT = path.join("build", "server", "index.js");

/** The build to make, or null when the last one is of these very sources. */
export function pendingBuild(options: BuildOptions): { run(): Promise<void> } | null {
  const { root, command = ["npm", "run", "build"], output = DEFAULT_OUTPUT } = options;
  const hash = sourceHash(root);
  const hashFile = path.join(root, HASH_FILE);
  if (existsSync(path.join(root, output)) && existsSync(hashFile) && readFileSync(hashFile, "utf8").trim() === hash) return null;
  return { run: () => build(root, command, output, hash) };
}

async function build(root: string, command: [string, ...string[]], output: string, hash: string): Promise<void> {
  const logFile = path.join(root, BUILD_LOG);
  mkdirSync(path.dirname(logFile), { recursive: true });
  const log = createWriteStream(logFile);
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(command[0], command.slice(1), { cwd: root, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NODE_ENV: "production" } });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    child.once("error", reject);
    child.once("close", resolve);
  });
  await new Promise<void>((resolve) => log.end(resolve));
  if (code !== 0 || !existsSync(path.join(root, output))) {
    const tail = readFileSync(logFile, "utf8").trimEnd().split("\n").slice(-30).join("\n");
    throw new BuildError(`the build failed (exit ${code}); its output is in ${BUILD_LOG}`, tail);
  }
  writeFileSync(path.join(root, HASH_FILE), `${hash}\n`);
}
