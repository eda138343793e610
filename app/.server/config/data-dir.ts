import { randomBytes } from "node:crypto";
import { accessSync, constants, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ConfigError } from "./env";

/** Creates DATA_DIR when missing and proves Porta can write to it, or names the problem. */
export function ensureDataDir(dir: string): string {
  const absolute = path.resolve(dir);
  try {
    mkdirSync(absolute, { recursive: true, mode: 0o700 });
    accessSync(absolute, constants.R_OK | constants.W_OK | constants.X_OK);
    const probe = path.join(absolute, `.write-probe-${process.pid}`);
    writeFileSync(probe, "", { mode: 0o600 });
    rmSync(probe, { force: true });
    return absolute;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    throw new ConfigError("DATA_DIR", `expected a directory Porta can read and write, but ${absolute} gives ${code}`);
  }
}

/** Where the embedded database (PGlite) keeps its files inside DATA_DIR. */
export const embeddedDatabaseDir = (dataDir: string) => path.join(dataDir, "pglite");

const KEY_FILE = "encryption.key";

/**
 * The key for AES-256-GCM when ENCRYPTION_KEY is unset: generated once into DATA_DIR with mode
 * 0600 and read back on every later start. `wx` makes two processes starting together agree.
 */
export function loadOrCreateEncryptionKey(dataDir: string): { key: Buffer; created: boolean } {
  const file = path.join(dataDir, KEY_FILE);
  try {
    writeFileSync(file, randomBytes(32).toString("base64") + "\n", { mode: 0o600, flag: "wx" });
    return { key: readKey(file), created: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
      throw new ConfigError("DATA_DIR", `cannot write ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
    }
    return { key: readKey(file), created: false };
  }
}

function readKey(file: string): Buffer {
  const key = Buffer.from(readFileSync(file, "utf8").trim(), "base64");
  if (key.length !== 32) throw new ConfigError("ENCRYPTION_KEY", `${file} does not hold 32 bytes in base64; restore it from a backup`);
  return key;
}
