import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import pg from "pg";

/**
 * A database of its own for one test file. With DATABASE_URL set (CI, or a developer with
 * PostgreSQL) it creates a fresh database on that server and drops it afterwards; without it,
 * the embedded PGlite runs in memory and vanishes with the process.
 *
 * A migrated database is a copy of the run's template (test/support/templates.ts, made once by
 * the global setup with every migration applied), so that no test file pays for the migrations
 * again: `CREATE DATABASE … TEMPLATE` on PostgreSQL, a data directory loaded from the template's
 * dump on PGlite. An empty one is what a new deployment starts from.
 */
export interface TestDatabase {
  /** The connection string to hand to Porta, or undefined for the embedded default. */
  url: string | undefined;
  /** For the embedded default: the migrated template's data directory to start from, if any. */
  pgliteSeed?: Blob;
  drop(): Promise<void>;
}

export const usingPostgres = () => Boolean(process.env.DATABASE_URL);

/** Where the global setup left the templates (environment, so that every worker sees them). */
export const TEMPLATE_DATABASE_VARIABLE = "PORTA_TEST_TEMPLATE_DATABASE";
export const TEMPLATE_PGLITE_VARIABLE = "PORTA_TEST_TEMPLATE_PGLITE";

let pgliteSeed: Blob | undefined;
function migratedPgliteSeed(): Blob | undefined {
  const file = process.env[TEMPLATE_PGLITE_VARIABLE];
  if (!file) return undefined;
  pgliteSeed ??= new Blob([readFileSync(file)]);
  return pgliteSeed;
}

export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const base = process.env.DATABASE_URL;
  if (!base) {
    const seed = options.migrated ? migratedPgliteSeed() : undefined;
    return { url: undefined, ...(seed ? { pgliteSeed: seed } : {}), drop: async () => {} };
  }
  const template = options.migrated ? process.env[TEMPLATE_DATABASE_VARIABLE] : undefined;
  const name = `porta_t_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
