import { readFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createUser } from "../support/factories";
import { createTestDatabase, usingPostgres, type TestDatabase } from "../support/database";
import { startTestPorta, type TestPorta } from "../support/porta";
import { startSmtpPeer, type SmtpPeer } from "../support/smtp";
import { createTenant, eventually, jobRows, uniqueEmail } from "../email/helpers";

/**
 * A deployment that ran on pg-boss 10 has its job schema at pg-boss's version 24, and mail may be
 * waiting in it when the new release starts: a password reset never tried, and a magic link
 * waiting for its retry. Whatever pg-boss the release runs, it must take that schema over and
 * deliver both mails. The schema is the one pg-boss 10.4.2 wrote for Porta's queues
 * (fixtures/pgboss-10.sql, made by fixtures/make-pgboss-10-fixture.mjs).
 */

const FIXTURE = readFileSync(path.join(import.meta.dirname, "fixtures/pgboss-10.sql"), "utf8");
const RESET_JOB = "6f1c2a52-5d0e-4d55-9a53-3c4a8e0f0001";
const LINK_JOB = "6f1c2a52-5d0e-4d55-9a53-3c4a8e0f0002";

let peer: SmtpPeer;
let database: TestDatabase | undefined;
const dataDir = mkdtempSync(path.join(tmpdir(), "porta-pgboss10-"));
const running: TestPorta[] = [];

/** On the same database (PostgreSQL) or the same DATA_DIR (embedded) every time. */
async function start(): Promise<TestPorta> {
  const porta = await startTestPorta({
    env: peer.env,
    dataDir,
    ...(database ? { databaseUrl: database.url } : { persistentPglite: true }),
    queue: { pollingIntervalSeconds: 1 },
  });
  running.push(porta);
  return porta;
}

beforeAll(async () => {
  peer = await startSmtpPeer();
  if (usingPostgres()) database = await createTestDatabase({ migrated: true });
}, 60_000);
afterAll(async () => {
  for (const porta of running) await porta.stop().catch(() => undefined);
  await database?.drop();
  await peer?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

it("delivers the mail a pg-boss 10 deployment left waiting", async () => {
  // The release before the upgrade: its organization and user, then its job schema as pg-boss 10
  // left it, in place of the one this release made, with the jobs addressed to that user.
  const before = await start();
  const tenant = await createTenant(before);
  const email = uniqueEmail("upgraded");
  await createUser(before.services.db.prisma, tenant.org.id, { email });
  await before.services.jobs.stop();
  const waiting = FIXTURE.replaceAll("__ORGANIZATION__", tenant.org.id)
    .replaceAll("__EMAIL__", email)
    .replaceAll("__INTERACTION__", "interaction-before-the-upgrade")
    .replaceAll("__QUEUED_AT__", new Date().toISOString());
  await before.services.db.executeSql(`DROP SCHEMA pgboss CASCADE; ${waiting}`);
  // As if queued a moment ago: the retry is due, and nothing is old enough for pg-boss to drop.
  await before.services.db.executeSql(`UPDATE pgboss.job SET start_after = now(), created_on = now(), keep_until = now() + interval '14 days'`);
  expect((await before.services.db.executeSql(`SELECT version FROM pgboss.version`)).rows).toEqual([{ version: 24 }]);
  await before.stop();
  running.splice(running.indexOf(before), 1);

  const after = await start();
  await peer.waitForMail(email, { count: 2, timeoutMs: 30_000 });
  const subjects = peer.mailsTo(email).map((mail) => mail.subject);
  expect(subjects).toHaveLength(2);
  expect(new Set(subjects).size).toBe(2);
  const state = async (queue: "password-reset" | "magic-link", id: string) => (await jobRows(after, queue)).find((job) => job.id === id)?.state;
  expect(await eventually(() => state("password-reset", RESET_JOB), (value) => value === "completed")).toBe("completed");
  expect(await eventually(() => state("magic-link", LINK_JOB), (value) => value === "completed")).toBe("completed");
  // The reset link was made for the job that carried it, not for a new one.
  expect(await after.services.db.prisma.passwordResetToken.count({ where: { jobId: RESET_JOB } })).toBe(1);
}, 120_000);
