import { createHash, randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { PROJECT_ROOT } from "../root";
import type { Database } from "./client";

/** The advisory lock key Prisma's own migrate uses, so that both never run at once. */
const MIGRATION_LOCK_KEY = 72707369;

export const DEFAULT_MIGRATIONS_DIR = path.join(PROJECT_ROOT, "prisma", "migrations");

export class MigrationError extends Error {
  constructor(
    readonly migration: string,
    readonly reason: string,
  ) {
    super(`migration ${migration} failed: ${reason}`);
    this.name = "MigrationError";
  }
}

export interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

export async function readMigrations(dir = DEFAULT_MIGRATIONS_DIR): Promise<MigrationFile[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory() && /^\d{14}_[a-z0-9_]+$/.test(e.name))
    .map((e) => e.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name, "migration.sql"), "utf8");
      // The same checksum Prisma's engine records: sha256 hex of the file's bytes.
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    }),
  );
}

/**
 * Applies every migration not yet recorded in `_prisma_migrations`, all in one transaction held
 * under an advisory lock: a second server starting at the same moment waits, then finds nothing
 * left to do; a failing file rolls the whole run back and names itself.
 */
export async function applyMigrations(db: Database, dir = DEFAULT_MIGRATIONS_DIR): Promise<string[]> {
  const migrations = await readMigrations(dir);
  return db.rawTransaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_KEY]);
    await tx.exec(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" VARCHAR(36) PRIMARY KEY NOT NULL,
      "checksum" VARCHAR(64) NOT NULL,
      "finished_at" TIMESTAMPTZ,
      "migration_name" VARCHAR(255) NOT NULL,
      "logs" TEXT,
      "rolled_back_at" TIMESTAMPTZ,
      "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
      "applied_steps_count" INTEGER NOT NULL DEFAULT 0
    )`);
    const rows = await tx.query<{ migration_name: string; checksum: string }>(
      `SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    );
    const applied = new Map(rows.map((r) => [r.migration_name, r.checksum]));
    const done: string[] = [];
    for (const migration of migrations) {
      const recorded = applied.get(migration.name);
      if (recorded !== undefined) {
        if (recorded !== migration.checksum) {
          throw new MigrationError(migration.name, "the file changed after it was applied; add a new migration instead");
        }
        continue;
      }
      const id = randomUUID();
      await tx.query(`INSERT INTO "_prisma_migrations" (id, checksum, migration_name) VALUES ($1, $2, $3)`, [
        id,
        migration.checksum,
        migration.name,
      ]);
      try {
        await tx.exec(migration.sql);
      } catch (error) {
        throw new MigrationError(migration.name, error instanceof Error ? error.message : String(error));
      }
      await tx.query(`UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1`, [id]);
      done.push(migration.name);
    }
    return done;
  });
}
