import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import pg from "pg";

/**
 * A database of its own for a test file (or for one server of it). With DATABASE_URL set (CI, or a
 * developer with PostgreSQL) it lives on that server; without it, the embedded PGlite runs in
 * memory and vanishes with the process.
 *
 * A migrated database starts as a copy of the run's template (test/support/templates.ts, made once
 * by the global setup with every migration applied), so that no test file pays for the migrations
 * again: `CREATE DATABASE … TEMPLATE` on PostgreSQL, a data directory loaded from the template's
 * dump on PGlite. On PostgreSQL it is then reused: when a file is done with it, its rows are deleted
 * (every table but the migrations' record, and the job queue's schema, which the next server
 * creates as on a new database) and the next file of the same worker takes it, instead of paying
 * for a CREATE DATABASE and a DROP DATABASE (~1 s together) per server. An empty database (the
 * default) is what a new deployment starts from and is never reused.
 */
export interface TestDatabase {
  /** The connection string to hand to Porta, or undefined for the embedded default. */
  url: string | undefined;
  /** For the embedded default: the migrated template's data directory to start from, if any. */
  pgliteSeed?: Blob;
  /** Done with it: dropped, or emptied and kept for the next file (migrated PostgreSQL databases). */
  drop(): Promise<void>;
}

export const usingPostgres = () => Boolean(process.env.DATABASE_URL);

/** Where the global setup left the templates and this run's name (environment, so that every worker sees them). */
export const TEMPLATE_DATABASE_VARIABLE = "PORTA_TEST_TEMPLATE_DATABASE";
export const TEMPLATE_PGLITE_VARIABLE = "PORTA_TEST_TEMPLATE_PGLITE";
export const RUN_VARIABLE = "PORTA_TEST_RUN";

/** Databases of a test run are named `porta_t_<run>_<random>`, so that the run's teardown finds every one. */
export const databasePrefix = (run = process.env[RUN_VARIABLE] ?? "adhoc") => `porta_t_${run}_`;

let pgliteSeed: Blob | undefined;
function migratedPgliteSeed(): Blob | undefined {
  const file = process.env[TEMPLATE_PGLITE_VARIABLE];
  if (!file) return undefined;
  pgliteSeed ??= new Blob([readFileSync(file)]);
  return pgliteSeed;
}

/** Runs `work` on a connection of its own to the server `base` names, closed afterwards. */
export async function onServer<T>(base: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Migrated databases this worker has finished with, emptied, ready for the next file. */
const reusable: string[] = [];

const WIPE_ALL = `DO $$
DECLARE t text;
BEGIN
  SET LOCAL session_replication_role = replica;
  FOR t IN SELECT format('%I.%I', schemaname, tablename) FROM pg_tables WHERE schemaname = 'public' AND tablename <> '_prisma_migrations' LOOP
    EXECUTE 'DELETE FROM ' || t;
  END LOOP;
  DROP SCHEMA IF EXISTS pgboss CASCADE;
END $$`;

/** Deletes every row a file left (no connection may remain: a server still running would be a leak). */
async function wipe(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`);
    await client.query(WIPE_ALL);
  } finally {
    await client.end();
  }
}

function urlOf(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const base = process.env.DATABASE_URL;
  if (!base) {
    const seed = options.migrated ? migratedPgliteSeed() : undefined;
    return { url: undefined, ...(seed ? { pgliteSeed: seed } : {}), drop: async () => {} };
  }
  const template = options.migrated ? process.env[TEMPLATE_DATABASE_VARIABLE] : undefined;
  const drop = (name: string) => () => onServer(base, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined);
  if (!template) {
    const name = `${databasePrefix()}${randomBytes(6).toString("hex")}`;
    await onServer(base, (c) => c.query(`CREATE DATABASE ${name}`));
    return { url: urlOf(base, name), drop: drop(name) };
  }
  let name = reusable.pop();
  if (!name) {
    name = `${databasePrefix()}${randomBytes(6).toString("hex")}`;
    await onServer(base, (c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${template}`));
  }
  const url = urlOf(base, name);
  let done = false;
  return {
    url,
    async drop() {
      if (done) return;
      done = true;
      try {
        await wipe(url);
        reusable.push(name);
      } catch {
        await drop(name)();
      }
    },
  };
}

/** Drops every database of the run `run` (the global teardown; also the leftovers of runs that were killed). */
export async function dropRunDatabases(base: string, run: string): Promise<void> {
  await onServer(base, async (client) => {
    const { rows } = await client.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE starts_with(datname, $1)`, [databasePrefix(run)]);
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
  });
}
