import { describe, expect, it } from "vitest";
import { datadogBatch, jsonLines, parseOtlpHeaders, requestUrl, splunkHecBatch, syslogFrames, syslogMessage, type StreamedEntry } from "./formats";

const entry = (over: Partial<StreamedEntry> = {}): StreamedEntry => ({
  id: "0190a0b0-0000-7000-8000-000000000001",
  eventType: "auth.login.failure",
  organizationId: "0190a0b0-0000-7000-8000-0000000000aa",
  actorType: "anonymous",
  actorId: null,
  targetType: null,
  targetId: null,
  requestId: "req-1",
  data: { reason: "bad_password", email: "ann@example.com" },
  createdAt: new Date("2026-12-03T07:00:00.123Z"),
  ...over,
});
const ctx = { hostname: "id.example.com", serviceName: "porta" };

describe("syslog (RFC 5424, RFC 6587 octet counting)", () => {
  it("frames each message with its length in bytes, multibyte text included", () => {
    const e = entry({ data: { name: "Zoë ✓" } });
    const frames = syslogFrames([e, e], ctx);
    const message = syslogMessage(e, ctx);
    expect(frames).toBe(`${Buffer.byteLength(message)} ${message}`.repeat(2));
    expect(Buffer.byteLength(message)).toBeGreaterThan(message.length);
  });

  it("escapes structured data and keeps header fields printable and bounded", () => {
    const message = syslogMessage(entry({ id: 'a"b]c\\d', eventType: "user.recovery codes regenerated and much longer than thirty-two" }), { hostname: "id.example.com", serviceName: "porta" });
    expect(message).toContain('auditEntryId="a\\"b\\]c\\\\d"');
    const msgid = message.split(" ")[5]!;
    expect(msgid).toHaveLength(32);
    expect(msgid).not.toContain(" ");
    expect(message.startsWith("<110>1 2026-12-03T07:00:00.123Z id.example.com porta - ")).toBe(true);
  });

  it("cannot be split by a line break in an entry: the JSON escapes it", () => {
    const message = syslogMessage(entry({ data: { note: "a\nb\r\n<13>1 forged" } }), ctx);
    expect(message).not.toMatch(/[\r\n]/);
  });
});

describe("HTTP shapes", () => {
  it("writes one JSON object per line", () => {
    const lines = jsonLines([entry(), entry({ id: "x" })]).split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe("");
    expect(JSON.parse(lines[1]!)).toMatchObject({ type: "auth.login.failure", data: { auditEntryId: "x", requestId: "req-1" } });
  });

  it("times Splunk events in seconds and tags Datadog logs", () => {
    expect(JSON.parse(splunkHecBatch([entry()], ctx))).toMatchObject({ time: 1796281200.123, host: "id.example.com", source: "porta", sourcetype: "porta:audit" });
    expect(JSON.parse(datadogBatch([entry({ organizationId: null })], ctx))).toEqual([
      expect.objectContaining({ ddsource: "porta", service: "porta", hostname: "id.example.com", status: "warn", ddtags: "event_type:auth.login.failure" }),
    ]);
  });

  it("adds the receiver's usual path when the URL names none", () => {
    expect(requestUrl("splunk_hec", "https://splunk.example.com:8088", undefined)).toBe("https://splunk.example.com:8088/services/collector/event");
    expect(requestUrl("splunk_hec", "https://splunk.example.com:8088/services/collector", undefined)).toBe("https://splunk.example.com:8088/services/collector");
    expect(requestUrl("datadog", "https://http-intake.logs.datadoghq.eu", undefined)).toBe("https://http-intake.logs.datadoghq.eu/api/v2/logs");
    expect(requestUrl("otlp", "", "http://collector:4318/")).toBe("http://collector:4318/v1/logs");
  });

  it("reads OTEL_EXPORTER_OTLP_HEADERS as the specification writes it, dropping what could split a header", () => {
    expect(parseOtlpHeaders("api-key=abc%20def, X-Tenant = t1,broken,=x,bad=%0D%0Ainjected,bad%20name=1")).toEqual({ "api-key": "abc def", "x-tenant": "t1" });
    expect(parseOtlpHeaders(undefined)).toEqual({});
  });
});
