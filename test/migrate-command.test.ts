import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { readMigrations } from "~/.server/db/migrate";
import { createTestDatabase, type TestDatabase } from "./support/database";
import { REPO_ROOT } from "./support/process";

/**
 * `npm run migrate` (docs/operations.md): applies the migrations and exits, for platforms that migrate
 * before a rollout; a second run has nothing to do; a bad configuration is one line, exit 1.
 */
const PORTA_VARIABLES = ["DATABASE_URL", "REDIS_URL", "DATA_DIR", "PORT", "BASE_URL", "ENCRYPTION_KEY"];

function runMigrate(env: Record<string, string>) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !PORTA_VARIABLES.includes(key) && !key.startsWith("VITEST")));
  return spawnSync(process.execPath, ["scripts/migrate.mjs"], { cwd: REPO_ROOT, env: { ...base, ...env } as NodeJS.ProcessEnv, encoding: "utf8", timeout: 120_000 });
}

describe("npm run migrate", () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), "porta-migrate-"));
  let database: TestDatabase | undefined;
  afterAll(async () => {
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("applies every migration to an empty database and exits 0; a second run finds nothing to do", { timeout: 240_000 }, async () => {
    database = await createTestDatabase();
    // With DATABASE_URL (CI) on a fresh PostgreSQL database, else on the embedded one in DATA_DIR.
    const env: Record<string, string> = database.url ? { DATABASE_URL: database.url, DATA_DIR: dataDir } : { DATA_DIR: dataDir };
    const shipped = (await readMigrations()).map((m) => m.name);
    const first = runMigrate(env);
    expect(first.stderr).toBe("");
    expect(first.status).toBe(0);
    expect(first.stdout).toContain(`Applied ${shipped.length} migrations:`);
    expect(first.stdout).toContain(shipped.at(-1));
    if (database.url) {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM "_prisma_migrations" WHERE finished_at IS NOT NULL`);
        expect(rows[0]!.n).toBe(shipped.length);
      } finally {
        await client.end();
      }
    }
    const second = runMigrate(env);
    expect(second.status).toBe(0);
    expect(second.stdout).toContain("The database is up to date.");
  });

  it("refuses a bad configuration with one line and exit 1", () => {
    const result = runMigrate({ DATABASE_URL: "mysql://nope", DATA_DIR: dataDir });
    expect(result.status).toBe(1);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toContain("configuration error: DATABASE_URL");
  });
});
