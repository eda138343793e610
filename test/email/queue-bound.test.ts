import v8 from "node:v8";
import vm from "node:vm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { systemActor } from "~/.server/auth/actors";
import { readContext } from "~/.server/context";
import { requestMagicLink } from "~/.server/sign-in/magic-link-request";
import { csrfOf } from "../support/browser";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, openLoginPage, uniqueEmail, type LoginPage, type Tenant } from "./helpers";

/**
 * The bounds in front of the mail worker: the per-address rate limit stops a burst at the HTTP
 * endpoint, and a full queue refuses work instead of growing, while requests stay fast and the
 * process does not accumulate memory. This process runs no workers of its own (concurrency 0,
 * as a web node whose workers are elsewhere, or stuck), so what is queued stays queued and the
 * counts are exact.
 */

const MAX_LENGTH = 100;
const BURST = 1_000;

let porta: TestPorta;
let tenant: Tenant;

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;
function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

beforeAll(async () => {
  porta = await startTestPorta({ queue: { maxLength: MAX_LENGTH, concurrency: 0 } });
  // Every request here comes from 127.0.0.1: the per-address limit (test/login/brute-force.test.ts)
  // is raised out of the way, so that what is measured is the per-email limit and the queue bound.
  await porta.services.settings.set("rateLimits.magicLink.perIp", { points: 100_000, windowMinutes: 15 }, "test");
  tenant = await createTenant(porta);
});
afterAll(async () => {
  await porta?.stop();
});

function p95(samples: number[]): number {
  const sorted = [...samples].sort((x, y) => x - y);
  return sorted[Math.ceil(sorted.length * 0.95) - 1]!;
}

/** POSTs the magic-link form for each email, a few at a time, and times every request. */
async function postAll(page: LoginPage, emails: string[], parallel = 2) {
  const csrf = csrfOf(page.html);
  const results: Array<{ status: number; ms: number; retryAfter: string | null }> = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < emails.length) {
        const email = emails[next++]!;
        const started = performance.now();
        const post = () => page.browser.post(`${page.interactionUrl}/magic-link`, { csrf, email });
        // A kept-alive connection the server closed while idle (between phases) is reset before
        // the request reaches it; a browser retries then, and so does this client, once.
        const res = await post().catch((error: unknown) => {
          if ((error as { cause?: { code?: string } }).cause?.code === "ECONNRESET") return post();
          throw error;
        });
        await res.arrayBuffer();
        results.push({ status: res.status, ms: performance.now() - started, retryAfter: res.headers.get("retry-after") });
      }
    }),
  );
  return results;
}

it("a burst for one address is rate-limited; a full queue refuses jobs; latency stays flat and memory bounded", async () => {
  const user = await createUser(porta.services.db.prisma, tenant.org.id, { email: uniqueEmail("burst"), password: null });
  const page = await openLoginPage(tenant);

  // 1. The HTTP burst: the per-address limit (5 per 15 minutes) admits five requests. The heap
  // is measured once the server is warm (pages rendered, code compiled), after the first tenth.
  const warmUp = await postAll(page, Array.from({ length: BURST / 10 }, () => user.email));
  const heapBefore = heapUsed();
  const burst = [...warmUp, ...(await postAll(page, Array.from({ length: BURST - BURST / 10 }, () => user.email)))];
  const statuses = burst.reduce<Record<number, number>>((acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }), {});
  expect(statuses).toEqual({ 200: 5, 429: BURST - 5 });
  expect(burst.filter((r) => r.status === 429).every((r) => Number(r.retryAfter) > 0)).toBe(true);
  expect(p95(burst.map((r) => r.ms))).toBeLessThan(1_000);

  // Exactly the five admitted requests were queued.
  const waitingBefore = await porta.services.jobs.count("magic-link", "waiting");
  expect(waitingBefore).toBe(5);

  // 2. Direct enqueues past the bound: refused with null once the queue holds MAX_LENGTH jobs.
  const enqueueTimes: number[] = [];
  const ids: Array<string | null> = [];
  for (let i = 0; i < BURST; i++) {
    const started = performance.now();
    ids.push(
      await porta.services.jobs.enqueue("magic-link", {
        organizationId: tenant.org.id,
        email: `bound-${i}@example.com`,
        interactionUid: page.uid,
        clientId: tenant.client.id,
        language: "en",
        ip: null,
      }),
    );
    enqueueTimes.push(performance.now() - started);
  }
  const accepted = ids.filter((id) => id !== null);
  expect(accepted).toHaveLength(MAX_LENGTH - waitingBefore);
  expect(ids.slice(accepted.length).every((id) => id === null)).toBe(true);
  expect(await porta.services.jobs.count("magic-link", "waiting")).toBe(MAX_LENGTH);
  expect(p95(enqueueTimes)).toBeLessThan(1_000);

  // 3. With the queue full, requests still get the generic answer at the same speed; the
  // dropped work is logged, never queued.
  const dropsBefore = porta.logs.lines.filter((l) => l.msg === "magic link request dropped: queue full").length;
  const more = await postAll(
    page,
    Array.from({ length: 50 }, (_, i) => `late-${i}@example.com`),
  );
  expect(more.every((r) => r.status === 200)).toBe(true);
  expect(p95(more.map((r) => r.ms))).toBeLessThan(1_000);
  for (let i = 0; i < 20; i++) {
    const outcome = await requestMagicLink({ ...readContext(porta.services, systemActor(null)), jobs: porta.services.jobs }, {
      organizationId: tenant.org.id,
      email: `direct-${i}@example.com`,
      interactionUid: page.uid,
      clientId: tenant.client.id,
      language: "en",
      ip: null,
    });
    expect(outcome).toEqual({ status: "accepted", pairingCode: expect.stringMatching(/^\d{2}$/) });
  }
  const drops = porta.logs.lines.filter((l) => l.msg === "magic link request dropped: queue full").length - dropsBefore;
  expect(drops).toBe(70);
  expect(await porta.services.jobs.count("magic-link", "waiting")).toBe(MAX_LENGTH);

  const growth = heapUsed() - heapBefore;
  expect(growth).toBeLessThan(64 * 1024 * 1024);
}, 180_000);
