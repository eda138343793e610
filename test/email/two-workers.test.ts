import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, usingPostgres, type TestDatabase } from "../support/database";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { linkIn, startSmtpPeer, type SmtpPeer } from "../support/smtp";
import { createTenant, drainQueue, jobRows, openLoginPage, requestMagicLinkOn, uniqueEmail } from "./helpers";

/**
 * Two Porta processes working one queue in one PostgreSQL database. (Two processes cannot share
 * one embedded PGlite database, so this runs where PostgreSQL is configured.)
 */
describe.runIf(usingPostgres())("two workers on one queue", () => {
  let peer: SmtpPeer;
  let database: TestDatabase;
  let dataDir: string;
  let a: TestPorta;
  let b: TestPorta;

  beforeAll(async () => {
    peer = await startSmtpPeer();
    // Each delivery takes a moment, so both processes get their share of the work.
    peer.acceptDelayMs = 150;
    database = await createTestDatabase();
    // The same DATA_DIR gives both the same ENCRYPTION_KEY, as a real deployment shares it.
    dataDir = mkdtempSync(path.join(tmpdir(), "porta-two-workers-"));
    const options = { env: peer.env, dataDir, databaseUrl: database.url! };
    a = await startTestPorta(options);
    b = await startTestPorta(options);
  });
  afterAll(async () => {
    await a?.close(1_000);
    await b?.close(1_000);
    await peer?.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("N requests produce exactly N mails, each once, shared between both processes", async () => {
    const N = 24;
    const tenant = await createTenant(a);
    const users = await Promise.all(Array.from({ length: N }, (_, i) => createUser(a.services.db.prisma, tenant.org.id, { email: uniqueEmail(`pair${i}`), password: null })));
    const page = await openLoginPage(tenant);
    for (const user of users) expect((await requestMagicLinkOn(page, user.email)).status).toBe(200);

    const addresses = new Set(users.map((u) => u.email));
    const ours = () => peer.received.filter((m) => m.envelope.to.some((t) => addresses.has(t)));
    await peer.waitUntil(() => ours().length >= N, 30_000, `${N} mails`);
    await drainQueue(a, "magic-link", 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    const mails = ours();
    expect(mails).toHaveLength(N);
    expect(new Set(mails.flatMap((m) => m.envelope.to))).toEqual(addresses);
    const links = mails.map((m) => linkIn(m, "/magic-link/verify"));
    expect(new Set(links).size).toBe(N);

    const jobs = (await jobRows(a, "magic-link")).filter((j) => addresses.has(String(j.data.email)));
    expect(jobs).toHaveLength(N);
    expect(jobs.every((j) => j.state === "completed")).toBe(true);
    const rows = await a.services.db.prisma.magicLinkToken.findMany({ where: { organizationId: tenant.org.id } });
    expect(rows).toHaveLength(N);
    expect(new Set(rows.map((r) => r.userId)).size).toBe(N);
    expect(new Set(rows.map((r) => r.jobId))).toEqual(new Set(jobs.map((j) => j.id)));

    // Both processes delivered: their "mail sent" log lines add up to N.
    const sentBy = (porta: TestPorta) => porta.logs.lines.filter((l) => l.msg === "mail sent").length;
    expect(sentBy(a) + sentBy(b)).toBe(N);
    expect(sentBy(a)).toBeGreaterThan(0);
    expect(sentBy(b)).toBeGreaterThan(0);
  }, 60_000);
});
