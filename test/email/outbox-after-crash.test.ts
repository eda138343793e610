import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { DEFAULT_QUEUE_SETTINGS } from "~/.server/jobs/queue";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { startTestPorta, type TestPorta, type TestPortaOptions } from "../support/porta";
import { jobRows } from "./helpers";

/**
 * A job that committed with its write (the outbox) while the process died before handing it to
 * the queue is not lost, and is not left waiting long: after the restart the embedded database's
 * sole process hands it over at start (its polling safety nets are minutes apart, decision 029); a
 * process on PostgreSQL, which shares the database, within one sweep.
 */
let database: TestDatabase | undefined;
let dataDir: string | undefined;
const started: TestPorta[] = [];

afterAll(async () => {
  for (const porta of started) await porta.close(1_000).catch(() => undefined);
  await database?.drop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

it("hands over what a previous run committed to the outbox but never handed over", async () => {
  database = await createTestDatabase();
  dataDir = mkdtempSync(path.join(tmpdir(), "porta-outbox-"));
  const options: TestPortaOptions = { dataDir, persistentPglite: true, ...(database.url ? { databaseUrl: database.url } : {}) };

  const first = await startTestPorta(options);
  started.push(first);
  // As a write's transaction leaves it when the process dies right after the commit: a row in
  // the outbox, not handed over. (A logout notice for an organization that no longer exists: its job has nothing to send.)
  const id = randomUUID();
  const notice = { organizationId: randomUUID(), clientId: "gone", sub: "nobody", sid: null };
  await first.services.db.prisma.jobOutbox.create({ data: { id, queue: "backchannel-logout", payload: notice, createdAt: new Date(Date.now() - 60_000) } });
  await first.close(1_000);

  const second = await startTestPorta(options);
  started.push(second);
  const embedded = !database.url;
  const limit = embedded ? 10_000 : (DEFAULT_QUEUE_SETTINGS.outboxSweepSeconds + 15) * 1000;
  const deadline = Date.now() + limit;
  let job: { id: string; state: string } | undefined;
  while (Date.now() < deadline) {
    job = (await jobRows(second, "backchannel-logout")).find((row) => row.id === id);
    if (job?.state === "completed") break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  expect(job?.state).toBe("completed");
  expect(await second.services.db.prisma.jobOutbox.count({ where: { id } })).toBe(0);
}, 90_000);
