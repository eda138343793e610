import { linkSync, openSync, readFileSync, renameSync, rmSync, writeSync, closeSync } from "node:fs";
import path from "node:path";
import { ConfigError } from "./env";

/**
 * The embedded database (PGlite) is single-process: two Porta processes on one DATA_DIR would
 * both run, and writes one of them acknowledged would be lost after a restart. The embedded mode
 * therefore holds `DATA_DIR/porta.lock`, a file naming the PID of its holder.
 *
 * A lock whose PID is gone (the holder crashed or was killed) is stale and taken over; the
 * takeover renames the stale file away first, so of two processes starting together on a stale
 * lock exactly one wins. Beside the PID the file records the process's start time (Linux), so a
 * PID reused by an unrelated process after a crash (PID 1 in every container) is not mistaken
 * for the holder.
 */
export const LOCK_FILE = "porta.lock";

export interface DataDirLock {
  release(): void;
}

interface Holder {
  pid: number;
  startedAt: string | undefined;
}

/** Field 22 of /proc/<pid>/stat (clock ticks after boot), or undefined where there is no /proc. */
function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

function holderOf(file: string): Holder | undefined {
  try {
    const [pidText = "", startedAt] = readFileSync(file, "utf8").trim().split("\n");
    const pid = Number.parseInt(pidText, 10);
    return Number.isSafeInteger(pid) && pid > 0 ? { pid, startedAt: startedAt || undefined } : undefined;
  } catch {
    return undefined;
  }
}

function isRunning(holder: Holder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to someone else; it still holds the directory.
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const now = startTimeOf(holder.pid);
  return holder.startedAt === undefined || now === undefined || now === holder.startedAt;
}

const sameHolder = (a: Holder | undefined, b: Holder | undefined) => a?.pid === b?.pid && a?.startedAt === b?.startedAt;

function inUse(dataDir: string, pid: number): ConfigError {
  return new ConfigError(
    "DATA_DIR",
    `${dataDir} is in use by another Porta process (PID ${pid}); the embedded database allows one process only: stop that one, or give this one another DATA_DIR or a DATABASE_URL`,
  );
}

function tryCreate(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw new ConfigError("DATA_DIR", `cannot write ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  try {
    writeSync(fd, `${process.pid}\n${startTimeOf(process.pid) ?? ""}\n`);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** Takes the lock or throws a ConfigError naming the directory and the PID that holds it. */
export function lockDataDir(dataDir: string): DataDirLock {
  const file = path.join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 5; attempt++) {
    if (tryCreate(file)) {
      return {
        release() {
          if (holderOf(file)?.pid === process.pid) rmSync(file, { force: true });
        },
      };
    }
    const holder = holderOf(file);
    if (holder && isRunning(holder)) throw inUse(dataDir, holder.pid);
    // Stale (or unreadable, e.g. half-written by a crash): move it aside, then check what we moved.
    const aside = `${file}.stale-${process.pid}`;
    try {
      renameSync(file, aside);
    } catch {
      continue; // someone else moved it first
    }
    const moved = holderOf(aside);
    if (moved && !sameHolder(moved, holder) && isRunning(moved)) {
      // A live process took the lock between our read and our rename: give it back.
      try {
        linkSync(aside, file);
      } finally {
        rmSync(aside, { force: true });
      }
      throw inUse(dataDir, moved.pid);
    }
    rmSync(aside, { force: true });
  }
  throw new ConfigError("DATA_DIR", `could not take ${file}: other processes keep changing it`);
}
