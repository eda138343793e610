import { afterAll, beforeAll, expect, it } from "vitest";
import { openDatabase, type Database } from "~/.server/db/client";
import { isDatabaseUnavailable } from "~/.server/db/errors";
import { applyMigrations } from "~/.server/db/migrate";
import { createRateLimits } from "~/.server/rate-limit/limiters";
import { startPrivatePostgres, type PostgresServer } from "../support/process";

/**
 * The counters are written in plain SQL through the driver (decision 026's amendment), not
 * through Prisma: with the database gone, counting an attempt fails with an error the pages and
 * the Admin API answer 503 for (never a refusal or an admission), and once it is back the counts
 * made before go on. A private PostgreSQL that this test kills; the shared one is never touched.
 */
let pg: PostgresServer;
let db: Database;
beforeAll(async () => {
  pg = await startPrivatePostgres();
  db = await openDatabase({ databaseUrl: pg.url, poolSize: 2 });
  await applyMigrations(db);
}, 120_000);
afterAll(async () => {
  await pg?.start().catch(() => undefined);
  await db?.close();
  await pg?.dispose();
}, 60_000);

it("a counter that cannot be written is 'database unavailable', and counting goes on once it is back", { timeout: 120_000 }, async () => {
  const limits = createRateLimits(db, async () => ({ points: 2, durationSeconds: 60 }));
  expect(await limits.consume("passwordLogin", "org:someone@example.com")).toEqual({ allowed: true });

  await pg.kill();
  const failed = await limits.consume("passwordLogin", "org:someone@example.com").then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(failed).toBeDefined();
  expect(isDatabaseUnavailable(failed)).toBe(true);

  await pg.start();
  // The pool's dead connections are replaced on their next use; the first try may meet one.
  let second = await limits.consume("passwordLogin", "org:someone@example.com").catch(() => null);
  second ??= await limits.consume("passwordLogin", "org:someone@example.com");
  expect(second).toEqual({ allowed: true });
  expect((await limits.consume("passwordLogin", "org:someone@example.com")).allowed).toBe(false);
});
