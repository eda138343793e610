import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { openDatabase } from "~/.server/db/client";
import { applyMigrations, readMigrations } from "~/.server/db/migrate";
import { dropRunDatabases, onServer, RUN_VARIABLE, TEMPLATE_DATABASE_VARIABLE, TEMPLATE_PGLITE_VARIABLE } from "./database";

/**
 * The run's migrated template, made once before any test file starts (global-setup.ts): on
 * PostgreSQL a database every migrated test database is copied from, on the embedded PGlite a dump
 * of a migrated data directory. Each file then starts in a fraction of a second instead of creating
 * PostgreSQL's catalogue (PGlite: 2–4 s) and applying every migration (0.3 s) again. The migrations
 * themselves are still proved from an empty database by test/migrations.test.ts and every test that
 * starts from `createTestDatabase()` without `migrated`.
 *
 * Every database of the run is named after it (`porta_t_<run>_…`, the template `porta_tpl_<run>`),
 * so the teardown drops them all, and a later run drops those of a run that was killed.
 */
export async function makeTemplates(): Promise<() => Promise<void>> {
  const base = process.env.DATABASE_URL;
  const run = `${process.pid}x${Date.now().toString(36)}`;
  process.env[RUN_VARIABLE] = run;
  const migrations = await readMigrations();
  const fingerprint = createHash("sha256")
    .update(migrations.map((m) => m.checksum).join(","))
    .digest("hex")
    .slice(0, 8);
  if (base) {
    await dropDeadRuns(base);
    const name = `porta_tpl_${run}`;
    await onServer(base, (c) => c.query(`CREATE DATABASE ${name}`));
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
      await dropRunDatabases(base, run);
      await onServer(base, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
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


/** Drops the databases of earlier runs whose process is gone (killed before its teardown). */
async function dropDeadRuns(base: string): Promise<void> {
  const names = await onServer(base, async (c) => (await c.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname ~ '^porta_(t|tpl)_[0-9]+x'`)).rows);
  const runs = new Set(names.map(({ datname }) => /^porta_(?:t|tpl)_([0-9]+x[0-9a-z]+)/.exec(datname)?.[1]).filter((run): run is string => Boolean(run)));
  for (const run of runs) {
    const pid = Number(run.split("x")[0]);
    if (alive(pid)) continue;
    await dropRunDatabases(base, run);
    await onServer(base, (c) => c.query(`DROP DATABASE IF EXISTS porta_tpl_${run} WITH (FORCE)`));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
