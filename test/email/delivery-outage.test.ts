import { readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { linkIn, startSmtpPeer, type SmtpPeer } from "../support/smtp";
import { createTenant, eventually, jobRows, openLoginPage, requestMagicLinkOn, requestPasswordResetOn, sleep, uniqueEmail, type Tenant } from "./helpers";

/** The release label /health names, as the project declares it. */
const RELEASE = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

/**
 * The SMTP server goes away for a while and comes back. Mail waits and follows the retry
 * schedule (shortened here to a second between attempts, with more attempts than the old fixed
 * five) and arrives once the server is back; a mail whose link expires during the outage is
 * never sent, and its job ends as expired with an audit entry. /health says "degraded" while
 * the deliveries fail.
 */

let peer: SmtpPeer | undefined;
let porta: TestPorta;
let tenant: Tenant;
let smtpPort: number;

beforeAll(async () => {
  const first = await startSmtpPeer();
  smtpPort = first.port;
  porta = await startTestPorta({ env: first.env, queue: { retrySchedule: Array<number>(40).fill(1) } });
  await first.close();
  tenant = await createTenant(porta);
});
afterAll(async () => {
  await porta?.stop();
  await peer?.close();
});

const prisma = () => porta.services.db.prisma;
async function health() {
  const res = await fetch(`${porta.url}/health`);
  return { status: res.status, body: (await res.json()) as { status: string; checks: Record<string, string> } };
}
async function jobOf(name: "magic-link" | "password-reset", email: string) {
  return (await jobRows(porta, name)).find((j) => (j.data as { email?: string }).email === email);
}

it("the SMTP server is down through more attempts than the old five: the mail arrives once it is back, /health is degraded until then", async () => {
  const user = await createUser(prisma(), tenant.org.id, { email: uniqueEmail("outage") });
  const page = await openLoginPage(tenant);
  expect((await requestPasswordResetOn(page, user.email)).status).toBe(200);

  // Seven failed attempts while nothing listens on the SMTP port; the job is still waiting.
  const failing = await eventually(
    () => jobOf("password-reset", user.email),
    (job) => (job?.retry_count ?? 0) >= 7,
    30_000,
  );
  expect(failing?.retry_count).toBeGreaterThanOrEqual(7);
  expect(failing?.state).not.toBe("failed");
  expect(await porta.services.jobs.count("password-reset", "dead")).toBe(0);
  expect(await health()).toEqual({ status: 200, body: { status: "degraded", release: RELEASE, checks: { database: "ok", cache: "ok", mail: "degraded", keys: "ok" } } });

  peer = await startSmtpPeer({ port: smtpPort });
  const mail = await peer.waitForMail(user.email, { timeoutMs: 10_000 });
  const link = linkIn(mail, "/reset-password?token=");
  expect((await page.browser.get(link)).status).toBe(200);
  expect(peer.mailsTo(user.email)).toHaveLength(1);
  expect(await porta.services.jobs.count("password-reset", "dead")).toBe(0);
  expect(await health()).toEqual({ status: 200, body: { status: "ok", release: RELEASE, checks: { database: "ok", cache: "ok", mail: "ok", keys: "ok" } } });
}, 60_000);

it("a magic link that expires during the outage is never mailed: its job ends as expired and is audited, without the link", async () => {
  await peer?.close();
  peer = undefined;
  const user = await createUser(prisma(), tenant.org.id, { email: uniqueEmail("expiring"), password: null });
  const page = await openLoginPage(tenant);
  expect((await requestMagicLinkOn(page, user.email)).status).toBe(200);

  // The first attempt made the link; it works for four more seconds (as if its lifetime ran out during the outage).
  const job = await eventually(
    () => jobOf("magic-link", user.email),
    (j) => (j?.retry_count ?? 0) >= 1,
    20_000,
  );
  const token = await prisma().magicLinkToken.findUniqueOrThrow({ where: { jobId: job!.id } });
  await prisma().magicLinkToken.update({ where: { id: token.id }, data: { expiresAt: new Date(Date.now() + 4_000) } });

  const entry = await eventually(
    () => prisma().auditEntry.findFirst({ where: { eventType: "mail.expired", targetId: user.id } }),
    (e) => e !== null,
    20_000,
  );
  expect(entry).toMatchObject({ eventType: "mail.expired", organizationId: tenant.org.id, targetType: "user", targetId: user.id, actorType: "system" });
  expect(entry!.data).toMatchObject({ kind: "magic-link" });
  expect((entry!.data as { attempts: number }).attempts).toBeGreaterThanOrEqual(2);
  const derived = porta.services.tokens.derive("magic-link", job!.id);
  expect(JSON.stringify(entry)).not.toContain(derived);
  expect(JSON.stringify(entry)).not.toContain("/magic-link/verify");

  const ended = await eventually(
    () => jobOf("magic-link", user.email),
    (j) => j?.state === "completed",
    10_000,
  );
  expect(ended?.state).toBe("completed");
  expect(await porta.services.jobs.count("magic-link", "dead")).toBe(0);

  // The server comes back: nothing is sent for the expired link.
  peer = await startSmtpPeer({ port: smtpPort });
  await sleep(3_000);
  expect(peer.mailsTo(user.email)).toEqual([]);
  expect(await prisma().auditEntry.count({ where: { eventType: "mail.expired", targetId: user.id } })).toBe(1);
}, 60_000);
