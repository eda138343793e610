import { randomBytes } from "node:crypto";
import pg from "pg";

/**
 * A database of its own for one test file. With DATABASE_URL set (CI, or a developer with
 * PostgreSQL) it creates a fresh database on that server and drops it afterwards; without it,
 * the embedded PGlite runs in memory and vanishes with the process.
 */
export interface TestDatabase {
  /** The connection string to hand to Porta, or undefined for the embedded default. */
  url: string | undefined;
  drop(): Promise<void>;
}

export const usingPostgres = () => Boolean(process.env.DATABASE_URL);

export async function createTestDatabase(): Promise<TestDatabase> {
  const base = process.env.DATABASE_URL;
  if (!base) return { url: undefined, drop: async () => {} };
  const name = `porta_t_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
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
