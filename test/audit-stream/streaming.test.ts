import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditRecord } from "~/.server/audit/audit";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createUser } from "../support/factories";
import { freePort, startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, eventually, passwordSignIn, PASSWORD, uniqueEmail, type Tenant } from "../email/helpers";
import { startHttpReceiver, startSyslogCollector, type HttpReceiver, type Received, type SyslogCollector } from "./helpers";

/**
 * The audit trail streamed to SIEMs (decision 092), end to end against receivers in the test: the
 * exact shapes of JSON lines, Splunk HEC, Datadog, OTLP logs and RFC 5424 syslog over TLS; order
 * per sink; a receiver down, answering 500, or too slow, retried on the (shortened: 1 s, 1 s)
 * schedule; the dead letters and their replay; organizations kept apart; the family filter; and
 * hostile input refused with 422 and nothing written.
 */
let porta: TestPorta;
let receiver: HttpReceiver;
let otlp: HttpReceiver;
let syslog: SyslogCollector;
let tenantA: Tenant;
let tenantB: Tenant;
let api: ReturnType<typeof adminApi>;

interface Sink {
  id: string;
  organizationId: string | null;
  name: string;
  kind: string;
  url: string;
  hasSecret: boolean;
  secretLast4: string | null;
  eventFamilies: string[];
  enabled: boolean;
  pending: number;
  dead: number;
  deliveredCount: number;
  lastDeliveredAt: string | null;
  lastError: string | null;
}
interface Event {
  type: string;
  timestamp: string;
  data: { auditEntryId: string; organizationId: string | null; actor: { type: string; id: string | null }; details: Record<string, unknown> };
}
interface ErrorBody {
  error: { code: string; details: Array<{ field: string; message: string }> };
}

beforeAll(async () => {
  receiver = await startHttpReceiver();
  otlp = await startHttpReceiver();
  syslog = await startSyslogCollector();
  porta = await startTestPorta({
    env: {
      OUTBOUND_ALLOW_PRIVATE_NETWORKS: "true",
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${otlp.port}`,
      OTEL_EXPORTER_OTLP_HEADERS: "x-collector-key=abc%20def",
      AUDIT_SINKS: JSON.stringify([
        { name: "everything", kind: "jsonl", url: receiver.url("/deployment") },
        { name: "otlp", kind: "otlp", eventFamilies: ["user.*"] },
      ]),
    },
    queue: { retrySchedules: { "audit-stream": [1, 1] } },
    auditStreamSweepMs: 300,
  });
  tenantA = await createTenant(porta);
  tenantB = await createTenant(porta);
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
}, 120_000);
afterAll(async () => {
  await porta?.stop();
  await receiver?.close();
  await otlp?.close();
  await syslog?.close();
});

const sinksOf = (tenant: Tenant) => `/organizations/${tenant.org.id}/audit-sinks`;

async function addSink(tenant: Tenant, body: Record<string, unknown>): Promise<Sink> {
  const res = await api.post<Sink>(sinksOf(tenant), body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** Entries written as a service writes them, each in its own transaction, handed to the queue after commit. */
async function record(tenant: Tenant | null, eventType: AuditRecord["eventType"], count = 1): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const jobs = await porta.services.audit.record({ eventType, organizationId: tenant?.org.id ?? null, actorType: "system", targetType: "user", targetId: `n${i}`, data: { n: i } });
    await porta.services.jobs.handOver(jobs);
    const entry = await porta.services.db.prisma.auditEntry.findFirstOrThrow({ where: { eventType, organizationId: tenant?.org.id ?? null, targetId: `n${i}` }, orderBy: { id: "desc" } });
    ids.push(entry.id);
  }
  return ids;
}

const at = (r: HttpReceiver, path: string) => r.received.filter((x) => x.path === path);
const linesOf = (requests: Received[]) => requests.flatMap((r) => r.body.split("\n").filter(Boolean).map((line) => JSON.parse(line) as Event));
const entryIdsAt = (path: string) => linesOf(at(receiver, path)).map((e) => e.data.auditEntryId);

async function sink(tenant: Tenant, id: string): Promise<Sink> {
  const res = await api.get<Sink>(`${sinksOf(tenant)}/${id}`);
  expect(res.status).toBe(200);
  return res.body;
}

describe("bad input", () => {
  it("refuses hostile sinks with 422 and field details, and writes nothing", async () => {
    const huge = "a".repeat(5000);
    const cases: Array<[Record<string, unknown>, string, boolean?]> = [
      [{ name: "x", kind: "jsonl", url: "http://10.1.2.3/collect" }, "url", true],
      [{ name: "x", kind: "jsonl", url: "http://127.0.0.1:8080/collect" }, "url", true],
      [{ name: "x", kind: "syslog", url: "tls://[::1]:6514" }, "url", true],
      [{ name: "x", kind: "jsonl", url: "http://localhost/collect" }, "url", true],
      [{ name: "x", kind: "jsonl", url: "https://siem.example.com:99999/collect" }, "url"],
      [{ name: "x", kind: "jsonl", url: "https://siem.example.com:0/collect" }, "url"],
      [{ name: "x", kind: "jsonl", url: "https://siem.example.com/\r\nX-Injected: 1" }, "url"],
      [{ name: "x", kind: "jsonl", url: `https://siem.example.com/${huge}` }, "url"],
      [{ name: "x", kind: "jsonl", url: "ftp://siem.example.com/" }, "url"],
      [{ name: "x", kind: "jsonl" }, "url"],
      [{ name: "x", kind: "jsonl", url: "https://siem.example.com/", secret: "token\r\nX-Injected: 1" }, "secret"],
      [{ name: "x", kind: "jsonl", url: "https://siem.example.com/", secret: "tok\u0000en" }, "secret"],
      [{ name: "x", kind: "jsonl", url: "https://siem.example.com/", secret: huge }, "secret"],
      [{ name: "x", kind: "jsonl", url: "https://siem.example.com/", headerName: "X-Key\r\nX-Injected", secret: "t" }, "headerName"],
      [{ name: "x", kind: "jsonl", url: "https://siem.example.com/", headerName: "Host", secret: "t" }, "headerName"],
      [{ name: "x", kind: "splunk_hec", url: "https://siem.example.com/", headerName: "X-Key", secret: "t" }, "headerName"],
      [{ name: "bad\u0000name", kind: "jsonl", url: "https://siem.example.com/" }, "name"],
      [{ name: huge, kind: "jsonl", url: "https://siem.example.com/" }, "name"],
      [{ name: "x", kind: "smtp", url: "https://siem.example.com/" }, "kind"],
      [{ name: "x", kind: "syslog", url: "https://siem.example.com/" }, "url"],
      [{ name: "x", kind: "syslog", url: "tls://siem.example.com" }, "url"],
      [{ name: "x", kind: "syslog", url: "tls://siem.example.com:6514", caPem: "not a certificate" }, "caPem"],
      [{ name: "x", kind: "syslog", url: "tls://siem.example.com:6514", caPem: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----" }, "caPem"],
      [{ name: "x", kind: "otlp", url: "https://siem.example.com/" }, "url"],
      [{ name: "x", kind: "jsonl", url: "https://siem.example.com/", eventFamilies: ["nope.*"] }, "eventFamilies.0"],
      [{ name: "x", kind: "jsonl", url: "https://siem.example.com/", organizationId: tenantB.org.id }, ""],
    ];
    const before = await porta.services.db.prisma.auditEntry.count({ where: { eventType: { startsWith: "audit_sink." } } });
    const config = porta.services.config as { outboundAllowPrivateNetworks: boolean };
    for (const [body, field, privateRule] of cases) {
      // The private-address rule is the operator's: these cases run with it on, as in production.
      config.outboundAllowPrivateNetworks = !privateRule;
      try {
        const res = await api.post<ErrorBody>(sinksOf(tenantA), body);
        expect(res.status, JSON.stringify(body).slice(0, 200)).toBe(422);
        expect(res.body.error.code).toBe("validation_failed");
        if (field) expect(res.body.error.details.map((d) => d.field), JSON.stringify(body).slice(0, 200)).toContain(field);
      } finally {
        config.outboundAllowPrivateNetworks = true;
      }
    }
    expect(await porta.services.db.prisma.auditSink.count({ where: { organizationId: { not: null } } })).toBe(0);
    expect(await porta.services.db.prisma.auditEntry.count({ where: { eventType: { startsWith: "audit_sink." } } })).toBe(before);
  });
});

describe("shapes", () => {
  it("sends JSON lines in order with the bearer secret, which the API never answers and the audit log never holds", async () => {
    const created = await addSink(tenantA, { name: "lines", kind: "jsonl", url: receiver.url("/lines"), secret: "line-token-1234", eventFamilies: ["user.*"] });
    expect(created).toMatchObject({ hasSecret: true, secretLast4: "1234", kind: "jsonl", eventFamilies: ["user.*"] });
    expect(JSON.stringify(created)).not.toContain("line-token");
    const audited = await porta.services.db.prisma.auditEntry.findFirstOrThrow({ where: { eventType: "audit_sink.created", targetId: created.id } });
    expect(JSON.stringify(audited.data)).not.toContain("line-token");

    const ids = await record(tenantA, "user.created", 5);
    await eventually(async () => entryIdsAt("/lines"), (got) => got.length >= 5, 15_000);
    expect(entryIdsAt("/lines")).toEqual(ids);
    const request = at(receiver, "/lines")[0]!;
    expect(request.headers.authorization).toBe("Bearer line-token-1234");
    expect(request.headers["content-type"]).toBe("application/x-ndjson");
    const event = linesOf([request])[0]!;
    expect(event).toMatchObject({ type: "user.created", data: { organizationId: tenantA.org.id, actor: { type: "system" }, details: { n: 0 } } });
    const state = await eventually(() => sink(tenantA, created.id), (s) => s.deliveredCount === 5);
    expect(state).toMatchObject({ pending: 0, dead: 0, deliveredCount: 5, lastError: null });
    expect(state.lastDeliveredAt).not.toBeNull();
  }, 30_000);

  it("sends Splunk HEC events and a Datadog array with their headers", async () => {
    const splunk = await addSink(tenantA, { name: "splunk", kind: "splunk_hec", url: `http://127.0.0.1:${receiver.port}`, secret: "hec-token", eventFamilies: ["key.*"] });
    const datadog = await addSink(tenantA, { name: "datadog", kind: "datadog", url: `http://127.0.0.1:${receiver.port}`, secret: "dd-key", eventFamilies: ["key.*"] });
    const ids = await record(tenantA, "key.generated", 2);
    type HecEvent = { time: number; host: string; source: string; sourcetype: string; event: Event };
    type DatadogLog = { ddsource: string; service: string; hostname: string; message: string; ddtags: string };
    // A batch is what was waiting when the drain looked: the two entries may come in one request or two.
    const hecEvents = () => at(receiver, "/services/collector/event").flatMap((r) => r.body.split("\n").map((line) => JSON.parse(line) as HecEvent));
    const datadogLogs = () => at(receiver, "/api/v2/logs").flatMap((r) => JSON.parse(r.body) as DatadogLog[]);
    await eventually(async () => hecEvents().length + datadogLogs().length, (n) => n >= 4, 15_000);

    expect(at(receiver, "/services/collector/event")[0]!.headers.authorization).toBe("Splunk hec-token");
    const events = hecEvents();
    expect(events.map((e) => e.event.data.auditEntryId)).toEqual(ids);
    expect(events[0]).toMatchObject({ host: "localhost", source: "porta", sourcetype: "porta:audit", event: { type: "key.generated" } });
    expect(typeof events[0]!.time).toBe("number");

    expect(at(receiver, "/api/v2/logs")[0]!.headers["dd-api-key"]).toBe("dd-key");
    const logs = datadogLogs();
    expect(logs.map((l) => (JSON.parse(l.message) as Event).data.auditEntryId)).toEqual(ids);
    expect(logs[0]).toMatchObject({ ddsource: "porta", service: "porta", hostname: "localhost", ddtags: `event_type:key.generated,organization_id:${tenantA.org.id}` });
    await api.delete(`${sinksOf(tenantA)}/${splunk.id}`);
    await api.delete(`${sinksOf(tenantA)}/${datadog.id}`);
  }, 30_000);

  it("sends OTLP logs to the tracing endpoint with its headers (a deployment sink)", async () => {
    const [id] = await record(tenantB, "user.updated");
    const request = await eventually(
      async () => at(otlp, "/v1/logs").find((r) => r.body.includes(id!)),
      (r) => r !== undefined,
      15_000,
    );
    expect(request!.headers["x-collector-key"]).toBe("abc def");
    const body = JSON.parse(request!.body) as {
      resourceLogs: Array<{ resource: { attributes: Array<{ key: string; value: { stringValue: string } }> }; scopeLogs: Array<{ scope: { name: string }; logRecords: Array<Record<string, unknown>> }> }>;
    };
    const resource = body.resourceLogs[0]!;
    expect(resource.resource.attributes).toContainEqual({ key: "service.name", value: { stringValue: "porta" } });
    const log = resource.scopeLogs[0]!.logRecords.find((r) => JSON.stringify(r).includes(id!))!;
    expect(log).toMatchObject({ severityText: "INFO", severityNumber: 9 });
    expect(log.timeUnixNano).toMatch(/^\d{19}$/);
    expect(JSON.parse((log.body as { stringValue: string }).stringValue)).toMatchObject({ type: "user.updated", data: { auditEntryId: id } });
    expect(log.attributes).toContainEqual({ key: "porta.audit_entry_id", value: { stringValue: id } });
  }, 30_000);

  it("sends RFC 5424 messages framed by octet counting over TLS, checked against the collector's CA", async () => {
    const created = await addSink(tenantA, { name: "syslog", kind: "syslog", url: `tls://127.0.0.1:${syslog.port}`, caPem: syslog.caPem, eventFamilies: ["session.*", "auth.*"] });
    expect(created).toMatchObject({ hasCaPem: true, hasSecret: false });
    const ids = [...(await record(tenantA, "session.revoked", 2)), ...(await record(tenantA, "auth.login.failure"))];
    await eventually(async () => syslog.messages.length, (n) => n >= 3, 15_000);
    const [first, , failure] = syslog.messages;
    // <PRI>VERSION TIMESTAMP HOSTNAME APP-NAME PROCID MSGID [SD] BOM MSG
    const pattern = /^<(\d+)>1 (\S+) localhost porta - (\S+) \[porta@32473 auditEntryId="([0-9a-f-]{36})" organizationId="([0-9a-f-]{36})"\] \uFEFF(\{.*\})$/s;
    const match = pattern.exec(first!)!;
    expect(match, first).not.toBeNull();
    expect(match[1]).toBe("110");
    expect(match[3]).toBe("session.revoked");
    expect(match[4]).toBe(ids[0]);
    expect(match[5]).toBe(tenantA.org.id);
    expect((JSON.parse(match[6]!) as Event).data.auditEntryId).toBe(ids[0]);
    expect(pattern.exec(failure!)![1]).toBe("108");
    expect(syslog.messages.map((m) => pattern.exec(m)![4])).toEqual(ids);

    // A collector whose certificate is not the one named is not trusted.
    const untrusted = await addSink(tenantA, { name: "syslog-untrusted", kind: "syslog", url: `tls://127.0.0.1:${syslog.port}`, eventFamilies: ["security.*"] });
    await record(tenantA, "security.login_method_disabled");
    const state = await eventually(() => sink(tenantA, untrusted.id), (s) => s.lastError !== null, 15_000);
    expect(state.lastError).toMatch(/SELF_SIGNED|CERT|UNABLE/);
    expect(syslog.messages).toHaveLength(3);
    await api.delete(`${sinksOf(tenantA)}/${untrusted.id}`);
  }, 30_000);
});

describe("who receives what", () => {
  it("keeps organizations apart, gives the deployment's sink everything, and filters by family", async () => {
    const onlyB = await addSink(tenantB, { name: "b", kind: "jsonl", url: receiver.url("/b") });
    const [a] = await record(tenantA, "role.created");
    const [b] = await record(tenantB, "role.created");
    const [none] = await record(null, "config.updated");
    await eventually(async () => entryIdsAt("/deployment"), (got) => [a, b, none].every((id) => got.includes(id!)), 15_000);
    await eventually(async () => entryIdsAt("/b"), (got) => got.includes(b!), 15_000);
    // B's sink has B's entries only (its own audit_sink.created among them), never A's or the deployment's.
    expect(linesOf(at(receiver, "/b")).every((e) => e.data.organizationId === tenantB.org.id)).toBe(true);
    // A's family-filtered sinks took none of these.
    expect(entryIdsAt("/lines")).not.toContain(a);
    // Another organization's sink is one that does not exist.
    expect((await api.get(`${sinksOf(tenantA)}/${onlyB.id}`)).status).toBe(404);
    expect((await api.delete(`${sinksOf(tenantA)}/${onlyB.id}`)).status).toBe(404);
    expect((await api.post(`${sinksOf(tenantA)}/${onlyB.id}/dead-letters/replay`)).status).toBe(404);
    // The deployment's sinks are not an organization's to see.
    const deployment = await porta.services.db.prisma.auditSink.findFirstOrThrow({ where: { configName: "everything" } });
    expect((await api.get(`${sinksOf(tenantA)}/${deployment.id}`)).status).toBe(404);
    expect((await api.get<{ data: Sink[] }>(sinksOf(tenantB))).body.data.map((s) => s.id)).toEqual([onlyB.id]);
  }, 30_000);

  it("streams a real sign-in without waiting for a sink that is down", async () => {
    const port = await freePort();
    const down = await addSink(tenantB, { name: "down", kind: "jsonl", url: `http://127.0.0.1:${port}/down`, eventFamilies: ["auth.*"] });
    const email = uniqueEmail("signin");
    await createUser(porta.services.db.prisma, tenantB.org.id, { email, password: PASSWORD });
    const started = Date.now();
    const signIn = await passwordSignIn(tenantB, email, PASSWORD);
    expect(signIn.tokens).toBeTruthy();
    // Nothing in the sign-in waits on the sink: it answered long before a connection attempt could time out.
    expect(Date.now() - started).toBeLessThan(5_000);
    const entry = await porta.services.db.prisma.auditEntry.findFirstOrThrow({ where: { eventType: "auth.login.success", organizationId: tenantB.org.id } });
    await eventually(async () => entryIdsAt("/deployment"), (got) => got.includes(entry.id), 15_000);
    const state = await eventually(() => sink(tenantB, down.id), (s) => s.lastError === "ECONNREFUSED", 15_000);
    expect(state.pending).toBeGreaterThan(0);
    await api.delete(`${sinksOf(tenantB)}/${down.id}`);
  }, 30_000);
});

describe("faults", () => {
  it("retries a receiver that is down and delivers in order once it is back", async () => {
    const port = await freePort();
    const created = await addSink(tenantA, { name: "comes-back", kind: "jsonl", url: `http://127.0.0.1:${port}/back`, eventFamilies: ["custom_claim.*"] });
    const ids = await record(tenantA, "custom_claim.created", 3);
    await eventually(() => sink(tenantA, created.id), (s) => s.lastError === "ECONNREFUSED", 15_000);
    const back = await startHttpReceiver(port);
    try {
      await eventually(async () => at(back, "/back").length, (n) => n >= 1, 15_000);
      expect(linesOf(at(back, "/back")).map((e) => e.data.auditEntryId)).toEqual(ids);
      expect(await sink(tenantA, created.id)).toMatchObject({ pending: 0, dead: 0, deliveredCount: 3, lastError: null });
    } finally {
      await back.close();
    }
  }, 30_000);

  it("retries a 500 with backoff, entries behind it waiting their turn", async () => {
    receiver.script("/flaky", [500, 200]);
    const created = await addSink(tenantA, { name: "flaky", kind: "jsonl", url: receiver.url("/flaky"), eventFamilies: ["permission.*"] });
    const first = await record(tenantA, "permission.created", 2);
    await eventually(() => sink(tenantA, created.id), (s) => s.lastError === "HTTP_500" || s.deliveredCount > 0, 15_000);
    const later = await record(tenantA, "permission.deleted", 1);
    await eventually(async () => entryIdsAt("/flaky"), (got) => got.length >= 3, 15_000);
    expect(entryIdsAt("/flaky")).toEqual([...first, ...later]);
  }, 30_000);

  it("retries a receiver too slow to answer", async () => {
    receiver.script("/slow", [0, 200]);
    const created = await addSink(tenantA, { name: "slow", kind: "jsonl", url: receiver.url("/slow"), eventFamilies: ["api_resource.*"] });
    const ids = await record(tenantA, "api_resource.created");
    await eventually(() => sink(tenantA, created.id), (s) => s.lastError === "TIMEOUT", 20_000);
    await eventually(async () => entryIdsAt("/slow"), (got) => got.length >= 1, 15_000);
    expect(entryIdsAt("/slow")).toEqual(ids);
  }, 45_000);

  it("leaves a batch dead after the last attempt, moves on, and replays it in place", async () => {
    receiver.script("/dead", [500, 500, 500, 200]);
    const created = await addSink(tenantA, { name: "dead", kind: "jsonl", url: receiver.url("/dead"), eventFamilies: ["bulk.*"] });
    const ids = await record(tenantA, "bulk.executed", 2);
    const state = await eventually(() => sink(tenantA, created.id), (s) => s.dead === 2, 20_000);
    expect(state).toMatchObject({ pending: 0, dead: 2, lastError: "HTTP_500" });
    const letters = await api.get<{ data: Array<{ auditEntryId: string; eventType: string; attempts: number; lastError: string }> }>(`${sinksOf(tenantA)}/${created.id}/dead-letters`);
    expect(letters.body.data.map((l) => l.auditEntryId)).toEqual(ids);
    expect(letters.body.data[0]).toMatchObject({ eventType: "bulk.executed", attempts: 3, lastError: "HTTP_500" });
    expect(entryIdsAt("/dead")).toEqual([]);

    const replay = await api.post<{ replayed: number }>(`${sinksOf(tenantA)}/${created.id}/dead-letters/replay`);
    expect(replay.body.replayed).toBe(2);
    await eventually(async () => entryIdsAt("/dead"), (got) => got.length >= 2, 15_000);
    expect(entryIdsAt("/dead")).toEqual(ids);
    expect(await sink(tenantA, created.id)).toMatchObject({ pending: 0, dead: 0, deliveredCount: 2 });
    expect(await porta.services.db.prisma.auditEntry.count({ where: { eventType: "audit_sink.dead_letters_replayed", targetId: created.id } })).toBe(1);
  }, 45_000);

  it("sends a test event on request and says how it went", async () => {
    const created = await addSink(tenantA, { name: "probe", kind: "jsonl", url: receiver.url("/probe"), eventFamilies: ["mail.*"] });
    const ok = await api.post<{ delivered: boolean; statusCode: number | null; error: string | null }>(`${sinksOf(tenantA)}/${created.id}/test`);
    expect(ok.body).toMatchObject({ delivered: true, statusCode: 200, error: null });
    expect(linesOf(at(receiver, "/probe"))[0]).toMatchObject({ type: "audit_sink.test" });
    receiver.script("/probe", [503]);
    const refused = await api.post<{ delivered: boolean; statusCode: number | null; error: string | null }>(`${sinksOf(tenantA)}/${created.id}/test`);
    expect(refused.body).toMatchObject({ delivered: false, statusCode: 503, error: "HTTP_503" });
  });
});
