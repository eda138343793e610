import { openDatabase, type Database } from "~/.server/db/client";
import { applyMigrations } from "~/.server/db/migrate";
import { createTestDatabase, type TestDatabase } from "./database";

export interface MigratedDatabase {
  db: Database;
  testDatabase: TestDatabase;
  /** Closes the connection and drops the database. */
  dispose(): Promise<void>;
}

/**
 * A fresh database of this test file's own (PostgreSQL when DATABASE_URL is set, in-memory
 * PGlite otherwise) with every migration applied, as Porta's start-up leaves it (a copy of the
 * run's template; applying the migrations again finds nothing to do).
 */
export async function openMigratedDatabase(): Promise<MigratedDatabase> {
  const testDatabase = await createTestDatabase({ migrated: true });
  const db = await openDatabase({ databaseUrl: testDatabase.url, pgliteDir: "memory://", pgliteSeed: testDatabase.pgliteSeed });
  try {
    await applyMigrations(db);
  } catch (error) {
    await db.close();
    await testDatabase.drop();
    throw error;
  }
  return {
    db,
    testDatabase,
    async dispose() {
      await db.close();
      await testDatabase.drop();
    },
  };
}
