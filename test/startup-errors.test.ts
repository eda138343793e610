import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { exitWithin, freePort, spawnServer, type ServerProcess } from "./support/process";

/**
 * An operator who misconfigures Porta gets one line on stderr that says what to fix, and exit
 * code 1, quickly; never a stack trace and never a server that half-starts.
 */
describe("start-up errors of server.ts", () => {
  const scratch = mkdtempSync(path.join(tmpdir(), "porta-startup-"));
  const spawned: ServerProcess[] = [];

  afterAll(() => {
    for (const server of spawned) server.kill("SIGKILL");
    rmSync(scratch, { recursive: true, force: true });
  });

  async function startWith(env: Record<string, string>) {
    const dataDir = mkdtempSync(path.join(scratch, "data-"));
    const server = spawnServer({ NODE_ENV: "production", PORT: String(await freePort()), DATA_DIR: dataDir, ...env });
    spawned.push(server);
    const exit = await exitWithin(server, 15_000);
    return { exit, stderr: server.stderr(), stdout: server.stdout(), dataDir };
  }

  function expectOneLine(stderr: string, mentions: RegExp) {
    const lines = stderr.split("\n").filter((line) => line.trim() !== "");
    expect(lines, stderr).toHaveLength(1);
    expect(stderr.endsWith("\n")).toBe(true);
    expect(lines[0]).toMatch(mentions);
    expect(stderr).not.toContain("    at ");
  }

  const cases: Array<{ name: string; env: (scratch: string) => Record<string, string>; mentions: RegExp }> = [
    {
      name: "a malformed DATABASE_URL",
      env: () => ({ DATABASE_URL: "not-a-url" }),
      mentions: /DATABASE_URL: expected a PostgreSQL URL/,
    },
    {
      name: "a malformed REDIS_URL",
      env: () => ({ REDIS_URL: "http://cache.internal:6379" }),
      mentions: /REDIS_URL: expected a Redis URL/,
    },
    {
      name: "a DATA_DIR below a regular file",
      env: (dir) => {
        const file = path.join(dir, "not-a-directory");
        writeFileSync(file, "");
        return { DATA_DIR: path.join(file, "sub") };
      },
      mentions: /DATA_DIR: expected a directory Porta can read and write, but .*not-a-directory\/sub gives ENOTDIR/,
    },
    {
      name: "an ENCRYPTION_KEY of the wrong length",
      env: () => ({ ENCRYPTION_KEY: randomBytes(16).toString("base64") }),
      mentions: /ENCRYPTION_KEY: expected 32 random bytes in base64/,
    },
    {
      name: "a DATABASE_URL at a closed port",
      env: () => ({ DATABASE_URL: "postgresql://porta:hunter2-secret@127.0.0.1:1/porta" }),
      mentions: /database error: cannot connect to PostgreSQL at 127\.0\.0\.1:1\/porta/,
    },
  ];

  it.each(cases)("exits 1 with one line for $name", async ({ env, mentions }) => {
    const { exit, stderr, stdout } = await startWith(env(scratch));
    expect(exit, `still running; stderr: ${stderr}`).toBeDefined();
    expect(exit!.code).toBe(1);
    // Bounded, not hanging: the connect timeout is 5 s; the rest is starting Node and tsx.
    expect(exit!.afterMs).toBeLessThan(30_000);
    expectOneLine(stderr, mentions);
    expect(stderr.startsWith("porta: ")).toBe(true);
    // The closed-port case carries a password in its URL: the message names the target without it.
    expect(stderr).not.toContain("hunter2-secret");
    // It did not get far enough to print the URL or credentials.
    expect(stdout).not.toContain("Porta is running");
    expect(stdout).not.toContain("password:");
  });

  it("creates nothing in DATA_DIR when the configuration is invalid", async () => {
    const { exit, dataDir } = await startWith({ LOG_LEVEL: "loud" });
    expect(exit?.code).toBe(1);
    expect(existsSync(path.join(dataDir, "encryption.key"))).toBe(false);
    expect(existsSync(path.join(dataDir, "pglite"))).toBe(false);
  });
});

describe("an encryption key that does not open the stored signing keys", () => {
  it("refuses to start with one line that says what to do, and starts again with the right key", { timeout: 180_000 }, async () => {
    const { startTestPorta } = await import("./support/porta");
    const { createTestDatabase } = await import("./support/database");
    const database = await createTestDatabase();
    const dataDir = mkdtempSync(path.join(tmpdir(), "porta-keys-"));
    const rightKey = randomBytes(32).toString("base64");
    const start = (key: string) =>
      startTestPorta({ dataDir, persistentPglite: true, ...(database.url ? { databaseUrl: database.url } : {}), env: { ENCRYPTION_KEY: key } });
    try {
      const first = await start(rightKey);
      await first.stop();
      await expect(start(randomBytes(32).toString("base64"))).rejects.toThrow(
        /^ENCRYPTION_KEY: this key \(or DATA_DIR\/encryption\.key\) cannot decrypt the signing keys stored in the database; start Porta with the key this database was created with$/,
      );
      const again = await start(rightKey);
      await again.stop();
    } finally {
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
