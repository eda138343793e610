import { createHash } from "node:crypto";
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "~/.server/db/client";
import { applyMigrations, DEFAULT_MIGRATIONS_DIR, MigrationError } from "~/.server/db/migrate";
import { createTestDatabase, usingPostgres, type TestDatabase } from "./support/database";

/** The repository's migrations, as an operator's checkout has them. */
const REAL_MIGRATIONS = readdirSync(DEFAULT_MIGRATIONS_DIR, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();

const sha256OfFile = (dir: string, name: string) =>
  createHash("sha256")
    .update(readFileSync(path.join(dir, name, "migration.sql")))
    .digest("hex");

async function query<Row extends Record<string, unknown>>(db: Database, sql: string, params?: unknown[]): Promise<Row[]> {
  return db.rawTransaction((tx) => tx.query<Row>(sql, params));
}

async function tableExists(db: Database, table: string): Promise<boolean> {
  const [row] = await query<{ exists: boolean }>(db, "SELECT to_regclass($1) IS NOT NULL AS exists", [`"${table}"`]);
  return row!.exists;
}

interface MigrationRow extends Record<string, unknown> {
  migration_name: string;
  checksum: string;
  finished: boolean;
  rolled_back: boolean;
  applied_steps_count: number;
}

async function migrationRows(db: Database): Promise<MigrationRow[]> {
  if (!(await tableExists(db, "_prisma_migrations"))) return [];
  return query<MigrationRow>(
    db,
    `SELECT migration_name, checksum, finished_at IS NOT NULL AS finished, rolled_back_at IS NOT NULL AS rolled_back, applied_steps_count
       FROM "_prisma_migrations" ORDER BY migration_name`,
  );
}

/** A scratch migrations folder: copies of the real ones plus any extra files given. */
function migrationsDir(scratch: string, extra: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(scratch, "migrations-"));
  cpSync(DEFAULT_MIGRATIONS_DIR, dir, { recursive: true });
  for (const [name, sql] of Object.entries(extra)) {
    mkdirSync(path.join(dir, name), { recursive: true });
    writeFileSync(path.join(dir, name, "migration.sql"), sql);
  }
  return dir;
}

async function rejectionOf(promise: Promise<unknown>): Promise<MigrationError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(MigrationError);
    return error as MigrationError;
  }
  throw new Error("applyMigrations succeeded, but it should have failed");
}

const BROKEN = "20991231000000_broken";
const BROKEN_SQL = `CREATE TABLE "BrokenThing" ("id" INTEGER NOT NULL);
SELECT "nope" FROM "table_that_does_not_exist";
`;

describe("applyMigrations", () => {
  const scratch = mkdtempSync(path.join(tmpdir(), "porta-migrations-"));
  const databases: TestDatabase[] = [];
  const connections: Database[] = [];

  async function freshDatabase(): Promise<TestDatabase> {
    const database = await createTestDatabase();
    databases.push(database);
    return database;
  }
  async function connect(database: TestDatabase): Promise<Database> {
    const db = await openDatabase({ databaseUrl: database.url, pgliteDir: "memory://" });
    connections.push(db);
    return db;
  }

  /** A database with the real migrations applied by two appliers at once (shared by later tests). */
  let migrated: Database;
  let concurrentResults: string[][];
  /** An empty database for the failing run. */
  let empty: Database;

  beforeAll(async () => {
    empty = await connect(await freshDatabase());
    const database = await freshDatabase();
    const first = await connect(database);
    // On PostgreSQL two connections race; the embedded PGlite is one process-local database,
    // so two callers share it exactly as two requests of one server would.
    const second = usingPostgres() ? await connect(database) : first;
    concurrentResults = await Promise.all([applyMigrations(first), applyMigrations(second)]);
    migrated = first;
  });

  afterAll(async () => {
    for (const db of connections.reverse()) await db.close();
    for (const database of databases) await database.drop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("lets two appliers on one empty database both succeed, and applies each migration once", async () => {
    expect(REAL_MIGRATIONS.length).toBeGreaterThan(0);
    // One of them applied everything, the other found nothing left to do.
    expect([...concurrentResults].sort((a, b) => a.length - b.length)).toEqual([[], REAL_MIGRATIONS]);
    const tables = await query<{ n: number }>(
      migrated,
      `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'Organization'`,
    );
    expect(tables[0]!.n).toBe(1);
  });

  it("records one finished row per migration in _prisma_migrations with the sha256 of its file", async () => {
    const rows = await migrationRows(migrated);
    expect(rows).toEqual(
      REAL_MIGRATIONS.map((name) => ({
        migration_name: name,
        checksum: sha256OfFile(DEFAULT_MIGRATIONS_DIR, name),
        finished: true,
        rolled_back: false,
        applied_steps_count: 1,
      })),
    );
  });

  it("applies nothing on a second run", async () => {
    const before = await migrationRows(migrated);
    expect(await applyMigrations(migrated)).toEqual([]);
    expect(await migrationRows(migrated)).toEqual(before);
  });

  it("rolls a failing run back and names the migration and the database's error", async () => {
    const db = empty;
    const dir = migrationsDir(scratch, { [BROKEN]: BROKEN_SQL });
    const error = await rejectionOf(applyMigrations(db, dir));
    expect(error.migration).toBe(BROKEN);
    expect(error.message).toContain(BROKEN);
    expect(error.message).toMatch(/relation "table_that_does_not_exist" does not exist/);
    expect(await tableExists(db, "BrokenThing")).toBe(false);
    expect((await migrationRows(db)).map((r) => r.migration_name)).not.toContain(BROKEN);
    // The run is one transaction: nothing of it stays behind, so a fixed file starts clean.
    expect(await tableExists(db, "Organization")).toBe(false);
    expect(await migrationRows(db)).toEqual([]);
  });

  it("keeps earlier migrations when a new one fails, and applies the new one once it is fixed", async () => {
    const dir = migrationsDir(scratch, { [BROKEN]: BROKEN_SQL });
    const before = await migrationRows(migrated);
    const error = await rejectionOf(applyMigrations(migrated, dir));
    expect(error.migration).toBe(BROKEN);
    expect(error.reason).toMatch(/table_that_does_not_exist/);
    expect(await tableExists(migrated, "BrokenThing")).toBe(false);
    expect(await migrationRows(migrated)).toEqual(before);

    writeFileSync(path.join(dir, BROKEN, "migration.sql"), `CREATE TABLE "BrokenThing" ("id" INTEGER NOT NULL);\n`);
    expect(await applyMigrations(migrated, dir)).toEqual([BROKEN]);
    expect(await tableExists(migrated, "BrokenThing")).toBe(true);
    const rows = await migrationRows(migrated);
    expect(rows.find((r) => r.migration_name === BROKEN)).toEqual({
      migration_name: BROKEN,
      checksum: sha256OfFile(dir, BROKEN),
      finished: true,
      rolled_back: false,
      applied_steps_count: 1,
    });
  });

  it("refuses a migration whose file changed after it was applied, and applies nothing after it", async () => {
    const dir = migrationsDir(scratch, { "20991231000001_after_edit": `CREATE TABLE "AfterEdit" ("id" INTEGER);\n` });
    const edited = REAL_MIGRATIONS[0]!;
    appendFileSync(path.join(dir, edited, "migration.sql"), "\n-- edited after it was applied\n");
    const before = await migrationRows(migrated);
    const error = await rejectionOf(applyMigrations(migrated, dir));
    expect(error.migration).toBe(edited);
    expect(error.message).toContain(edited);
    expect(error.message).toMatch(/changed after it was applied/);
    expect(await tableExists(migrated, "AfterEdit")).toBe(false);
    expect(await migrationRows(migrated)).toEqual(before);
  });
});
