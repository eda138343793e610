import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { openDatabase } from "~/.server/db/client";
import { applyMigrations, readMigrations } from "~/.server/db/migrate";
import { TEMPLATE_DATABASE_VARIABLE, TEMPLATE_PGLITE_VARIABLE } from "./database";

/**
 * The run's migrated template, made once before any test file starts (global-setup.ts): on
 * PostgreSQL a database every test database is copied from, on the embedded PGlite a dump of a
 * migrated data directory. Each file then starts in a fraction of a second instead of
 * creating PostgreSQL's catalogue (PGlite: 2–4 s) and applying every migration (0.3 s) again.
 * The migrations themselves are still proved from an empty database by test/migrations.test.ts
 * and every test that starts from `createTestDatabase()` without `migrated`.
 */
export async function makeTemplates(): Promise<() => Promise<void>> {
  const base = process.env.DATABASE_URL;
  const migrations = await readMigrations();
  const fingerprint = createHash("sha256")
    .update(migrations.map((m) => m.checksum).join(","))
    .digest("hex")
    .slice(0, 8);
  if (base) {
    const name = `porta_tpl_${fingerprint}_${randomBytes(3).toString("hex")}`;
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${name}`);
    } finally {
      await admin.end();
    }
    const url = new URL(base);
    url.pathname = `/${name}`;
    const db = await openDatabase({ databaseUrl: url.toString() });
    try {
      await applyMigrations(db);
    } finally {
      await db.close();
    }
    process.env[TEMPLATE_DATABASE_VARIABLE] = name;
    return async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    };
  }
  const dir = mkdtempSync(path.join(tmpdir(), "porta-template-"));
  const db = await openDatabase({ pgliteDir: "memory://" });
  try {
    await applyMigrations(db);
    const dump = await db.dumpDataDir!();
    const file = path.join(dir, `pglite-${fingerprint}.tar`);
    writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
    process.env[TEMPLATE_PGLITE_VARIABLE] = file;
  } finally {
    await db.close();
  }
  return async () => rmSync(dir, { recursive: true, force: true });
}
