import { afterAll, beforeAll, expect, it } from "vitest";
import { openDatabase, type Database } from "~/.server/db/client";
import { startPrivatePostgres, type PostgresServer } from "../support/process";

/**
 * Processes tell each other of changes through PostgreSQL's notifications (provider and cache
 * invalidations, revoked tokens). When the database is away for longer than one reconnection
 * attempt, the listening connection must still come back, and say "*" so that every handler
 * knows it may have missed messages. A private PostgreSQL that this test kills.
 */
let pg: PostgresServer;
let listener: Database;
let sender: Database;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  pg = await startPrivatePostgres();
  listener = await openDatabase({ databaseUrl: pg.url, poolSize: 1 });
  sender = await openDatabase({ databaseUrl: pg.url, poolSize: 1 });
}, 120_000);
afterAll(async () => {
  await pg?.start().catch(() => undefined);
  await listener?.close();
  await sender?.close();
  await pg?.dispose();
}, 60_000);

async function until(condition: () => boolean, ms: number) {
  const end = Date.now() + ms;
  while (!condition() && Date.now() < end) await sleep(25);
  return condition();
}

it("comes back after an outage of several reconnection attempts, says '*', and hears new messages", { timeout: 120_000 }, async () => {
  const heard: string[] = [];
  await listener.listen("porta_test_channel", (message) => heard.push(message));
  await sender.notify("porta_test_channel", "before");
  expect(await until(() => heard.includes("before"), 5_000)).toBe(true);

  await pg.kill();
  // Several attempts fail meanwhile (they are 250 ms apart at first, then up to 2 s).
  await sleep(4_000);
  await pg.start();

  expect(await until(() => heard.includes("*"), 10_000)).toBe(true);
  const sent = async () => sender.notify("porta_test_channel", "after").catch(() => sender.notify("porta_test_channel", "after"));
  await sent();
  expect(await until(() => heard.includes("after"), 5_000)).toBe(true);
});
