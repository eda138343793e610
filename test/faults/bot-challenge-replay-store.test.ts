import { randomBytes } from "node:crypto";
import { solveChallenge } from "altcha-lib/v1";
import { pino } from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createBotChallenges, type BotChallenges } from "~/.server/bot-challenge/challenges";
import { createPostgresStore } from "~/.server/cache/postgres-store";
import { openDatabase, type Database } from "~/.server/db/client";
import { applyMigrations } from "~/.server/db/migrate";
import type { BotChallenge } from "~/schemas/bot-challenge";
import { startPrivatePostgres, type PostgresServer } from "../support/process";

/**
 * The store that makes each proof-of-work solution single-use (decision 091) is the ephemeral
 * store in PostgreSQL. Two instances over one database stand for two processes: a solution
 * verified by one is refused by the other. With that database gone the check refuses within its
 * time bound ("unavailable": fail closed, never an admission and never an unhandled error), and
 * once it is back solutions verify again, each once. A private PostgreSQL that this test kills;
 * the shared one is never touched.
 */
let pg: PostgresServer;
let db: Database;
const ORG = { id: "0190a3b4-0000-7000-8000-0000000000aa", botChallengeCost: 2_000 };
const key = randomBytes(32);

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

async function solved(challenges: BotChallenges): Promise<string> {
  const challenge: BotChallenge = await challenges.issue(ORG, "password");
  const solution = await solveChallenge(challenge.challenge, challenge.salt, challenge.algorithm, challenge.maxnumber).promise;
  return Buffer.from(JSON.stringify({ ...challenge, number: solution!.number })).toString("base64");
}

it("uses each solution once across processes, refuses within its bound while the store is down, and verifies again once it is back", { timeout: 120_000 }, async () => {
  const logger = pino({ level: "silent" });
  const store = createPostgresStore(db, logger);
  const one = createBotChallenges({ encryptionKey: key, store });
  const otherStore = createPostgresStore(db, logger);
  const other = createBotChallenges({ encryptionKey: key, store: otherStore });

  const first = await solved(one);
  expect(await other.verify(ORG.id, "password", first)).toEqual({ ok: true });
  expect(await one.verify(ORG.id, "password", first)).toEqual({ ok: false, reason: "replayed" });

  const during = await solved(one);
  await pg.kill();
  const started = Date.now();
  expect(await one.verify(ORG.id, "password", during)).toEqual({ ok: false, reason: "unavailable" });
  // The replay store's bound (2 s) and a margin: a sign-in form is not held for the pool's timeouts.
  expect(Date.now() - started).toBeLessThan(5_000);

  await pg.start();
  // The pool's dead connections are replaced on their next use; the first try may meet one.
  let after = await one.verify(ORG.id, "password", during);
  if (!after.ok && after.reason === "unavailable") after = await one.verify(ORG.id, "password", during);
  expect(after).toEqual({ ok: true });
  expect(await other.verify(ORG.id, "password", during)).toEqual({ ok: false, reason: "replayed" });
  await store.close();
  await otherStore.close();
});
