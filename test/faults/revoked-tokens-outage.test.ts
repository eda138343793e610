import { afterAll, beforeAll, expect, it } from "vitest";
import { createPostgresStore } from "~/.server/cache/postgres-store";
import type { KeyValueStore } from "~/.server/cache/store";
import { openDatabase, type Database } from "~/.server/db/client";
import { isDatabaseUnavailable } from "~/.server/db/errors";
import { applyMigrations } from "~/.server/db/migrate";
import { testLogger } from "../support/logs";
import { createRevokedTokens } from "~/.server/oidc/storage/revoked-tokens";
import { startPrivatePostgres, type PostgresServer } from "../support/process";

/**
 * Each process answers "is this client_credentials token revoked?" from memory while its
 * listening connection provably hears every new marker (oidc/storage/revoked-tokens.ts). Here that
 * connection goes away for real: a private PostgreSQL (never the shared one) is killed and
 * started again, and a token revoked by one process right after must be refused by the other at
 * the first ask, whether or not its listener is back yet.
 */
let pg: PostgresServer;
const databases: Database[] = [];
const stores: KeyValueStore[] = [];
const { logger: quiet } = testLogger();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  pg = await startPrivatePostgres();
  for (let i = 0; i < 2; i++) databases.push(await openDatabase({ databaseUrl: pg.url, poolSize: 2 }));
  await applyMigrations(databases[0]!);
}, 120_000);
afterAll(async () => {
  await pg?.start().catch(() => undefined);
  for (const store of stores) await store.close();
  for (const db of databases) await db.close();
  await pg?.dispose();
}, 60_000);

function processOn(db: Database) {
  let reads = 0;
  const store = createPostgresStore(db, quiet);
  stores.push(store);
  const counting: KeyValueStore = {
    ...store,
    get: async (key) => {
      reads += 1;
      return store.get(key);
    },
  };
  return { revoked: createRevokedTokens(db, counting), reads: () => reads };
}

async function untilFromMemory(proc: ReturnType<typeof processOn>) {
  for (let i = 0; i < 300; i++) {
    const before = proc.reads();
    await proc.revoked.isRevoked("org", "never-revoked").catch(() => undefined);
    if (proc.reads() === before) return;
    await sleep(20);
  }
  throw new Error("the mirror never answered from memory");
}

it("a token revoked while the database was away is refused by every process at the first ask, and memory serves again after", { timeout: 120_000 }, async () => {
  const one = processOn(databases[0]!);
  const two = processOn(databases[1]!);
  await untilFromMemory(two);

  await pg.kill();
  // No heartbeat comes back: past the freshness bound, the check reads the store and says the database is away.
  await sleep(2_500);
  const failed = await two.revoked.isRevoked("org", "another").then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(isDatabaseUnavailable(failed)).toBe(true);

  await pg.start();
  const exp = Math.floor(Date.now() / 1000) + 3600;
  // The pool's dead connections are replaced on their next use; the first try may meet one.
  await one.revoked.revoke("org", "revoked-after-restart", exp).catch(() => one.revoked.revoke("org", "revoked-after-restart", exp));
  let first = await two.revoked.isRevoked("org", "revoked-after-restart").catch(() => null);
  first ??= await two.revoked.isRevoked("org", "revoked-after-restart");
  expect(first).toBe(true);

  await untilFromMemory(two);
  const reads = two.reads();
  expect(await two.revoked.isRevoked("org", "revoked-after-restart")).toBe(true);
  expect(await two.revoked.isRevoked("org", "not-revoked")).toBe(false);
  expect(two.reads()).toBe(reads);
  await one.revoked.close();
  await two.revoked.close();
});
