import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrganization } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { startHttpReceiver, type HttpReceiver } from "../audit-stream/helpers";
import { consoleSignIn, pageWithCsrf, type ConsoleVisit } from "./helpers";

/**
 * The console's Audit streaming page (decision 092): a sink added with its secret never shown
 * again, a test event that arrives, its state, its dead entries listed and replayed; bad input
 * shown beside its field and nothing written. Retries shortened to 1 s, 1 s.
 */
let porta: TestPorta;
let admin: ConsoleVisit;
let receiver: HttpReceiver;

beforeAll(async () => {
  receiver = await startHttpReceiver();
  porta = await startTestPorta({ env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: "true" }, queue: { retrySchedules: { "audit-stream": [1, 1] } }, auditStreamSweepMs: 300 });
  admin = await consoleSignIn(porta);
});
afterAll(async () => {
  await porta?.stop();
  await receiver?.close();
});

const textOf = (html: string) => html.replace(/<script[\s\S]*?<\/script>/g, " ").replace(/<[^>]+>/g, " ").replaceAll("&#x27;", "'").replaceAll("&amp;", "&").replace(/\s+/g, " ");

async function until<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe("console Audit streaming page", () => {
  it("adds a sink, sends a test event, shows dead entries and replays them", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const url = `${porta.baseUrl}/console/organizations/${org.id}/audit-sinks`;
    const orgPage = await (await admin.browser.get(`${porta.baseUrl}/console/organizations/${org.id}`)).text();
    expect(orgPage).toContain(`href="/console/organizations/${org.id}/audit-sinks"`);
    const first = await pageWithCsrf(admin.browser, url);
    expect(first.res.status).toBe(200);
    expect(textOf(first.html)).toContain("No audit sinks yet.");

    receiver.script("/console", [200, 500]);
    const created = await admin.browser.post(url, { csrf: first.csrf, intent: "create", name: "Lake", kind: "jsonl", url: receiver.url("/console"), secret: "console-token-9876", eventFamilies: "role.*" });
    expect(created.status).toBe(302);
    const sink = await porta.services.db.prisma.auditSink.findFirstOrThrow({ where: { organizationId: org.id } });

    const listed = await pageWithCsrf(admin.browser, url);
    expect(textOf(listed.html)).toContain("Lake");
    expect(listed.html).not.toContain("console-token-9876");
    const tested = await admin.browser.post(url, { csrf: listed.csrf, intent: "test", sinkId: sink.id, sinkName: "Lake" });
    expect(textOf(await tested.text())).toContain("Lake took the test event.");
    expect(receiver.received.at(-1)!.headers.authorization).toBe("Bearer console-token-9876");

    // The receiver now answers 500: a role created ends dead after the last retry.
    await porta.services.audit.record({ eventType: "role.created", organizationId: org.id, actorType: "system" });
    await until(() => porta.services.db.prisma.auditSinkEvent.count({ where: { sinkId: sink.id, status: "dead" } }), (n) => n === 1);
    const dead = await pageWithCsrf(admin.browser, url);
    const deadText = textOf(dead.html);
    expect(deadText).toContain("Dead entries of Lake");
    expect(deadText).toContain("role.created");
    expect(deadText).toContain("0 waiting, 1 dead");
    expect(deadText).toContain("Last error: HTTP_500");

    receiver.script("/console", [200]);
    const replayed = await admin.browser.post(url, { csrf: dead.csrf, intent: "replay", sinkId: sink.id });
    expect(replayed.status).toBe(302);
    expect(replayed.headers.get("location")).toBe(`/console/organizations/${org.id}/audit-sinks?done=replay`);
    await until(() => porta.services.db.prisma.auditSinkEvent.count({ where: { sinkId: sink.id } }), (n) => n === 0);
    expect(receiver.received.some((r) => r.path === "/console" && r.body.includes('"type":"role.created"'))).toBe(true);
  }, 60_000);

  it("shows bad input beside its field and writes nothing", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const url = `${porta.baseUrl}/console/organizations/${org.id}/audit-sinks`;
    const page = await pageWithCsrf(admin.browser, url);
    const res = await admin.browser.post(url, { csrf: page.csrf, intent: "create", name: "Bad", kind: "jsonl", url: "https://siem.example.com/x", secret: "a\r\nX-Injected: 1" });
    expect(res.status).toBe(422);
    const html = await res.text();
    expect(html).toMatch(/id="secret-error"[^>]*>[^<]*control characters/);
    const syslog = await admin.browser.post(url, { csrf: page.csrf, intent: "create", name: "Bad", kind: "syslog", url: "tls://siem.example.com" });
    expect(syslog.status).toBe(422);
    expect(await syslog.text()).toMatch(/id="url-error"[^>]*>[^<]*port/);
    expect(await porta.services.db.prisma.auditSink.count({ where: { organizationId: org.id } })).toBe(0);
  });
});
