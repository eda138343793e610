import { afterAll, beforeAll, expect, it } from "vitest";
import { DEFAULT_QUEUE_SETTINGS } from "~/.server/jobs/queue";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { startSmtpPeer, type SmtpPeer } from "../support/smtp";
import { createTenant, openLoginPage, requestMagicLinkOn, uniqueEmail, type Tenant } from "./helpers";

/**
 * Idle workers poll the queue only every 30 s (decision 029): new work wakes them. A person who
 * asks for a link gets it in seconds, and a burst of requests drains at the workers' pace,
 * not one job per worker per polling interval.
 */

let peer: SmtpPeer;
let porta: TestPorta;
let tenant: Tenant;

beforeAll(async () => {
  peer = await startSmtpPeer();
  porta = await startTestPorta({ env: peer.env });
  tenant = await createTenant(porta);
});
afterAll(async () => {
  await porta?.stop();
  await peer?.close();
});

it("polls rarely by default", () => {
  expect(DEFAULT_QUEUE_SETTINGS.pollingIntervalSeconds).toBeGreaterThanOrEqual(10);
});

it("a burst of magic-link requests on an idle queue is delivered within seconds, well inside one polling interval", async () => {
  // Let the workers finish their first look at the empty queue and fall asleep.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const users = await Promise.all(
    Array.from({ length: 6 }, (_, i) => createUser(porta.services.db.prisma, tenant.org.id, { email: uniqueEmail(`wake-${i}`), password: null })),
  );
  const started = Date.now();
  for (const user of users) {
    const page = await openLoginPage(tenant);
    expect((await requestMagicLinkOn(page, user.email)).status).toBe(200);
  }
  // Two workers and six jobs: without wake-ups this takes three polling intervals.
  await Promise.all(users.map((user) => peer.waitForMail(user.email, { timeoutMs: 8_000 })));
  expect(Date.now() - started).toBeLessThan(DEFAULT_QUEUE_SETTINGS.pollingIntervalSeconds * 1000);
});
