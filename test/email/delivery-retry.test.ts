import { afterAll, beforeAll, expect, it } from "vitest";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { linkIn, startSmtpPeer, type SmtpPeer } from "../support/smtp";
import {
  continueToCallback,
  createTenant,
  drainQueue,
  eventually,
  jobRows,
  openLoginPage,
  redeem,
  requestMagicLinkOn,
  requestPasswordResetOn,
  uniqueEmail,
  useMagicLink,
  type Tenant,
} from "./helpers";

/**
 * An SMTP peer that refuses for a while and then accepts: the job fails, is retried by the
 * queue, and finally delivers. A retry reuses the job's token: one row, one active link, and
 * every copy of the message the peer saw (refused ones included) carries the same link.
 */

let peer: SmtpPeer;
let porta: TestPorta;
let tenant: Tenant;

beforeAll(async () => {
  peer = await startSmtpPeer();
  porta = await startTestPorta({ env: peer.env, queue: { retrySchedule: [1, 1, 1, 1] } });
  tenant = await createTenant(porta);
});
afterAll(async () => {
  await porta?.stop();
  await peer?.close();
});

const prisma = () => porta.services.db.prisma;
const to = (address: string) => (m: { envelope: { to: string[] } }) => m.envelope.to.includes(address);

it("magic link: refused twice after the data (partly delivered), then accepted: one token row, the same link every time, and it works", async () => {
  const user = await createUser(prisma(), tenant.org.id, { email: uniqueEmail("retry-ml"), password: null });
  const page = await openLoginPage(tenant);
  peer.mode = "refuse";
  peer.refuseAt = "data";
  try {
    expect((await requestMagicLinkOn(page, user.email)).status).toBe(200);
    await peer.waitUntil(() => peer.refused.filter(to(user.email)).length >= 2, 20_000, "two refused attempts");
  } finally {
    peer.mode = "accept";
  }
  const mail = await peer.waitForMail(user.email, { timeoutMs: 20_000 });
  await drainQueue(porta, "magic-link");

  const [job, ...others] = (await jobRows(porta, "magic-link")).filter((j) => j.data.email === user.email);
  expect(others).toEqual([]);
  expect(job!.state).toBe("completed");
  expect(job!.retry_count).toBeGreaterThanOrEqual(2);
  expect(await porta.services.jobs.count("magic-link", "dead")).toBe(0);

  const rows = await prisma().magicLinkToken.findMany({ where: { userId: user.id } });
  expect(rows).toHaveLength(1);
  expect(rows[0]!.jobId).toBe(job!.id);
  expect(await prisma().magicLinkToken.count({ where: { userId: user.id, consumedAt: null, expiresAt: { gt: new Date() } } })).toBe(1);

  const link = linkIn(mail, "/magic-link/verify");
  const token = new URL(link).searchParams.get("token")!;
  expect(token).toBe(porta.services.tokens.derive("magic-link", job!.id));
  expect(rows[0]!.tokenHash).toBe(porta.services.tokens.hash(token));
  const refusedLinks = peer.refused.filter(to(user.email)).map((m) => linkIn(m, "/magic-link/verify"));
  expect(refusedLinks.length).toBeGreaterThanOrEqual(2);
  expect(new Set([...refusedLinks, link])).toEqual(new Set([link]));
  expect(peer.mailsTo(user.email)).toHaveLength(1);
  const sent = await eventually(
    () => prisma().auditEntry.count({ where: { eventType: "auth.magic_link.sent", targetId: user.id } }),
    (n) => n > 0,
  );
  expect(sent).toBe(1);

  const { post } = await useMagicLink(page.browser, link);
  const { callback } = await continueToCallback(page.browser, post, link);
  expect((await redeem(page, callback)).claims()?.sub).toBe(user.id);
});

it("password reset: refused at RCPT TO, then after the data, then accepted: one token row and the same link", async () => {
  const user = await createUser(prisma(), tenant.org.id, { email: uniqueEmail("retry-reset") });
  const page = await openLoginPage(tenant);
  peer.mode = "refuse";
  peer.refuseAt = "rcpt";
  try {
    expect((await requestPasswordResetOn(page, user.email)).status).toBe(200);
    await peer.waitUntil(() => peer.refusedRecipients.includes(user.email), 20_000, "a refused recipient");
    // The token exists from the first attempt on, though nothing was delivered.
    expect(await prisma().passwordResetToken.count({ where: { userId: user.id } })).toBe(1);
    peer.refuseAt = "data";
    await peer.waitUntil(() => peer.refused.some(to(user.email)), 20_000, "a refused message");
  } finally {
    peer.mode = "accept";
  }
  const mail = await peer.waitForMail(user.email, { timeoutMs: 20_000 });
  await drainQueue(porta, "password-reset");

  const [job, ...others] = (await jobRows(porta, "password-reset")).filter((j) => j.data.email === user.email);
  expect(others).toEqual([]);
  expect(job!.state).toBe("completed");
  expect(job!.retry_count).toBeGreaterThanOrEqual(2);

  const rows = await prisma().passwordResetToken.findMany({ where: { userId: user.id } });
  expect(rows).toHaveLength(1);
  expect(rows[0]!.jobId).toBe(job!.id);
  const link = linkIn(mail, "/reset-password?token=");
  expect(rows[0]!.tokenHash).toBe(porta.services.tokens.hash(new URL(link).searchParams.get("token")!));
  expect(peer.refused.filter(to(user.email)).map((m) => linkIn(m, "/reset-password?token="))).toEqual([link]);
  expect(peer.mailsTo(user.email)).toHaveLength(1);

  // The link opens the reset form in the browser that asked.
  const form = await page.browser.get(link);
  expect(form.status).toBe(200);
});
