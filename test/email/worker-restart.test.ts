import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta, type TestPortaOptions } from "../support/porta";
import { linkIn, startSmtpPeer, type SmtpPeer } from "../support/smtp";
import { createTenant, drainQueue, jobRows, openLoginPage, requestMagicLinkOn, uniqueEmail } from "./helpers";

/**
 * A worker stopped while its job is in the middle of delivering (the SMTP peer has the message
 * but never answers), and a second process on the same database taking the job over: the job
 * completes exactly once there, with the token the first attempt created.
 */

let peer: SmtpPeer | undefined;
let database: TestDatabase | undefined;
let dataDir: string | undefined;
const started: TestPorta[] = [];

afterAll(async () => {
  for (const porta of started) await porta.close(1_000).catch(() => undefined);
  await peer?.close();
  await database?.drop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

it("a job interrupted by stopping its worker completes once on the next worker: one mail, one token row", async () => {
  peer = await startSmtpPeer({ mode: "hold" });
  // PostgreSQL: one database for both; embedded: the same on-disk PGlite, reopened. The shared
  // DATA_DIR also gives both processes the same ENCRYPTION_KEY.
  database = await createTestDatabase();
  dataDir = mkdtempSync(path.join(tmpdir(), "porta-restart-"));
  const options: TestPortaOptions = {
    env: peer.env,
    dataDir,
    persistentPglite: true,
    ...(database.url ? { databaseUrl: database.url } : {}),
    queue: { expireInSeconds: 3, maintenanceIntervalSeconds: 1, restartDelaySeconds: 1, retrySchedule: [1, 1, 1] },
  };

  const first = await startTestPorta(options);
  started.push(first);
  const tenant = await createTenant(first);
  const user = await createUser(first.services.db.prisma, tenant.org.id, { email: uniqueEmail("restart"), password: null });
  const page = await openLoginPage(tenant);
  expect((await requestMagicLinkOn(page, user.email)).status).toBe(200);

  // The message reached the peer, which does not answer: the job is running.
  await peer.waitUntil(() => peer!.held === 1, 15_000, "a held delivery");
  const [running] = (await jobRows(first, "magic-link")).filter((j) => j.data.email === user.email);
  expect(running!.state).toBe("active");
  expect(await first.services.db.prisma.magicLinkToken.count({ where: { userId: user.id } })).toBe(1);

  await first.close(1_000);
  peer.mode = "accept";

  const second = await startTestPorta(options);
  started.push(second);
  const mail = await peer.waitForMail(user.email, { timeoutMs: 20_000 });
  await drainQueue(second, "magic-link");
  // The first worker's delivery never completes: the peer refuses it now.
  peer.release("refuse");
  await new Promise((resolve) => setTimeout(resolve, 500));

  const jobs = (await jobRows(second, "magic-link")).filter((j) => j.data.email === user.email);
  expect(jobs).toHaveLength(1);
  expect(jobs[0]!.id).toBe(running!.id);
  expect(jobs[0]!.state).toBe("completed");
  expect(jobs[0]!.retry_count).toBeGreaterThanOrEqual(1);

  expect(peer.mailsTo(user.email)).toHaveLength(1);
  const rows = await second.services.db.prisma.magicLinkToken.findMany({ where: { userId: user.id } });
  expect(rows).toHaveLength(1);
  expect(rows[0]!.jobId).toBe(running!.id);
  const token = new URL(linkIn(mail, "/magic-link/verify")).searchParams.get("token")!;
  expect(rows[0]!.tokenHash).toBe(second.services.tokens.hash(token));
  expect(linkIn(mail, "/magic-link/verify")).toContain(`/interaction/${page.uid}/magic-link/verify?org=${tenant.org.slug}&`);
  // The refused copy from the first worker carried the very same link (the origin is each test
  // server's own BASE_URL, on its own port; path, organization and token are the same).
  const pathOf = (link: string) => link.slice(new URL(link).origin.length);
  expect(peer.refused.map((m) => pathOf(linkIn(m, "/magic-link/verify")))).toEqual([pathOf(linkIn(mail, "/magic-link/verify"))]);
}, 180_000);
