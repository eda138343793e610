import { afterAll, beforeAll, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { linkIn, startSmtpPeer, type SmtpPeer } from "../support/smtp";
import { createTenant, eventually, openLoginPage, requestPasswordResetOn, sleep, uniqueEmail, type Tenant } from "../email/helpers";

/**
 * Mail that used every retry lands in the dead-letter queue: the Admin API lists it (kind,
 * recipient, reason, attempts, when) and re-drives one or all. A re-driven mail carries the same
 * link as before; one whose link has expired meanwhile is refused with 409 and never sent.
 */

interface DeadMail {
  id: string;
  kind: string;
  organizationId: string | null;
  userId: string | null;
  email: string | null;
  reason: string;
  attempts: number | null;
  failedAt: string;
  linkExpiresAt: string | null;
  linkExpired: boolean;
}

let peer: SmtpPeer;
let porta: TestPorta;
let tenant: Tenant;
let api: ReturnType<typeof adminApi>;

beforeAll(async () => {
  peer = await startSmtpPeer({ mode: "refuse", refuseAt: "data" });
  porta = await startTestPorta({ env: peer.env, queue: { retrySchedule: [1] } });
  tenant = await createTenant(porta);
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
}, 120_000);
afterAll(async () => {
  await porta?.stop();
  await peer?.close();
});

const prisma = () => porta.services.db.prisma;
const resetLink = (mail: { text: string }) => linkIn(mail as Parameters<typeof linkIn>[0], "/reset-password?token=");

it("lists dead mail, re-drives one with its link, refuses one whose link expired, and re-drives all", async () => {
  const live = await createUser(prisma(), tenant.org.id, { email: uniqueEmail("dead-live") });
  const stale = await createUser(prisma(), tenant.org.id, { email: uniqueEmail("dead-stale") });
  for (const user of [live, stale]) expect((await requestPasswordResetOn(await openLoginPage(tenant), user.email)).status).toBe(200);

  const listed = await eventually(
    () => api.get<{ data: DeadMail[]; total: number }>("/mail/dead-letters?kind=password-reset"),
    (res) => res.body.total >= 2,
    30_000,
  );
  expect(listed.status).toBe(200);
  const byEmail = (email: string) => listed.body.data.find((d) => d.email === email)!;
  expect(byEmail(live.email)).toMatchObject({
    kind: "password-reset",
    organizationId: tenant.org.id,
    userId: live.id,
    email: live.email,
    reason: "smtp_451",
    attempts: 2,
    linkExpired: false,
  });
  expect(Date.parse(byEmail(live.email).failedAt)).toBeLessThanOrEqual(Date.now());
  expect(Date.parse(byEmail(live.email).linkExpiresAt!)).toBeGreaterThan(Date.now());
  // Nothing in the list is a token or a link.
  expect(JSON.stringify(listed.body)).not.toContain("token");
  expect((await api.get("/mail/dead-letters?kind=nonsense")).status).toBe(422);

  // The stale one's link expires while it sits in the queue.
  await prisma().passwordResetToken.updateMany({ where: { userId: stale.id }, data: { expiresAt: new Date(Date.now() - 1_000) } });
  peer.mode = "accept";

  const refusedStale = await api.post<{ error: { code: string } }>(`/mail/dead-letters/${byEmail(stale.email).id}/redrive`);
  expect(refusedStale.status).toBe(409);
  expect(refusedStale.body.error.code).toBe("link_expired");

  const redriven = await api.post<DeadMail>(`/mail/dead-letters/${byEmail(live.email).id}/redrive`);
  expect(redriven.status).toBe(200);
  expect(redriven.body).toMatchObject({ id: byEmail(live.email).id, email: live.email, kind: "password-reset" });
  const mail = await peer.waitForMail(live.email, { timeoutMs: 20_000 });
  // The same link the refused attempts carried: the token row of the first job still holds.
  const earlier = peer.refused.filter((m) => m.envelope.to.includes(live.email)).map(resetLink);
  expect(earlier.length).toBe(2);
  expect(new Set([...earlier, resetLink(mail)])).toEqual(new Set([resetLink(mail)]));
  expect(await prisma().passwordResetToken.count({ where: { userId: live.id } })).toBe(1);
  expect(await prisma().auditEntry.count({ where: { eventType: "mail.redriven", targetId: live.id } })).toBe(1);
  expect((await api.post(`/mail/dead-letters/${byEmail(live.email).id}/redrive`)).status).toBe(404);

  const all = await api.post<{ redriven: number; linkExpired: number; queueFull: number }>("/mail/dead-letters/redrive");
  expect(all).toMatchObject({ status: 200, body: { redriven: 0, linkExpired: 1, queueFull: 0 } });
  const after = await api.get<{ data: DeadMail[]; total: number }>("/mail/dead-letters");
  expect(after.body.data.map((d) => d.email)).toEqual([stale.email]);
  expect(after.body.data[0]!.linkExpired).toBe(true);
  await sleep(1_500);
  expect(peer.mailsTo(stale.email)).toEqual([]);
}, 120_000);
