import { afterAll, beforeAll, expect, it } from "vitest";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { startSmtpPeer, type SmtpPeer } from "../support/smtp";
import { createTenant, eventually, openLoginPage, requestPasswordResetOn, uniqueEmail, type Tenant } from "../email/helpers";
import { consoleSignIn, pageWithCsrf, type ConsoleVisit } from "./helpers";

/**
 * The console's undelivered-mail page: the dead-letter queue with a plain-form "Send again" per
 * mail (no JavaScript needed). A mail whose link expired says so instead of being sent.
 */

let peer: SmtpPeer;
let porta: TestPorta;
let tenant: Tenant;
let admin: ConsoleVisit;

beforeAll(async () => {
  peer = await startSmtpPeer({ mode: "refuse", refuseAt: "rcpt" });
  porta = await startTestPorta({ env: peer.env, queue: { retrySchedule: [1] } });
  tenant = await createTenant(porta);
  admin = await consoleSignIn(porta);
}, 120_000);
afterAll(async () => {
  await porta?.stop();
  await peer?.close();
});

it("lists undelivered mail and sends one again with a plain form; an expired link is refused with a message", async () => {
  const prisma = porta.services.db.prisma;
  const live = await createUser(prisma, tenant.org.id, { email: uniqueEmail("console-live") });
  const stale = await createUser(prisma, tenant.org.id, { email: uniqueEmail("console-stale") });
  for (const user of [live, stale]) expect((await requestPasswordResetOn(await openLoginPage(tenant), user.email)).status).toBe(200);
  await eventually(
    () => porta.services.jobs.count("password-reset", "dead"),
    (n) => n >= 2,
    30_000,
  );
  await prisma.passwordResetToken.updateMany({ where: { userId: stale.id }, data: { expiresAt: new Date(Date.now() - 1_000) } });
  peer.mode = "accept";

  const url = `${porta.baseUrl}/console/mail`;
  const { html, csrf } = await pageWithCsrf(admin.browser, url);
  expect(html).toContain("Undelivered mail");
  expect(html).toContain(live.email);
  expect(html).toContain(stale.email);
  expect(html).toContain("smtp_451");
  const ids = [...html.matchAll(/name="mailId" value="([^"]+)"/g)].map((m) => m[1]!);
  // Only the live one offers "Send again"; the expired one says its link expired.
  expect(ids).toHaveLength(1);
  expect(html).toContain("Link expired");

  const sent = await admin.browser.post(url, { csrf, intent: "redrive", mailId: ids[0]! });
  expect(sent.status).toBe(302);
  expect(sent.headers.get("location")).toBe("/console/mail?done=redriven");
  await peer.waitForMail(live.email, { timeoutMs: 20_000 });
  const after = await (await admin.browser.get(`${porta.baseUrl}/console/mail?done=redriven`)).text();
  expect(after).toContain("The mail is queued again; it is sent with the same link.");
  expect(after).not.toContain(live.email);

  // Posting the expired one anyway (a stale page): refused, with the reason, and nothing is sent.
  const { rows } = await porta.services.db.executeSql("SELECT id::text AS id FROM pgboss.job WHERE name = 'password-reset.dead' AND state = 'created'");
  const staleId = (rows as Array<{ id: string }>)[0]!.id;
  const refused = await admin.browser.post(url, { csrf, intent: "redrive", mailId: staleId });
  expect(refused.status).toBe(409);
  expect(await refused.text()).toContain("The link in this mail has expired, so it was not sent again.");
  expect(peer.mailsTo(stale.email)).toEqual([]);
}, 120_000);
