import type { AuditSinkKind } from "~/schemas/audit-sink";
import type { WrittenAuditEntry } from "../audit/audit";
import { payloadOf } from "../webhooks/outbox";

/**
 * What each kind of sink receives for a batch of entries, in their order (decision 092). Every
 * event is the webhook's body (webhooks/outbox.ts): the entry's type, time, id, organization,
 * actor, target and details, which never hold a secret (audit/diff.ts). The entry's id is in each
 * event, so a receiver can drop the copy an at-least-once delivery may repeat.
 */
export type StreamedEntry = Pick<WrittenAuditEntry, "id" | "organizationId" | "actorId" | "targetType" | "targetId" | "requestId" | "createdAt"> & {
  /** As stored: a type written by an older version may no longer be in the catalogue. */
  eventType: string;
  actorType: string;
  data: unknown;
};

export interface SinkRequest {
  body: string;
  contentType: string;
  headers: Record<string, string>;
}

/** Where the request goes: the configured URL, with the receiver's usual path when it names none. */
export function requestUrl(kind: AuditSinkKind, url: string, otlpEndpoint: string | undefined): string {
  if (kind === "otlp") return `${(otlpEndpoint ?? "").replace(/\/+$/, "")}/v1/logs`;
  const parsed = new URL(url);
  if (parsed.pathname === "/" || parsed.pathname === "") {
    if (kind === "splunk_hec") parsed.pathname = "/services/collector/event";
    if (kind === "datadog") parsed.pathname = "/api/v2/logs";
  }
  return parsed.toString();
}

const bodyOf = (entry: StreamedEntry) => payloadOf(entry as unknown as WrittenAuditEntry);

/** Failures are worth a look; everything else is information. */
export function severityOf(eventType: string): "WARN" | "INFO" {
  return /fail|locked|disabled|refused/.test(eventType) ? "WARN" : "INFO";
}

export interface FormatContext {
  /** BASE_URL's host: who sent it (Splunk `host`, Datadog `hostname`, syslog HOSTNAME). */
  hostname: string;
  /** OTEL_SERVICE_NAME (OTLP's `service.name`). */
  serviceName: string;
}

export function jsonLines(entries: readonly StreamedEntry[]): string {
  return entries.map((entry) => `${bodyOf(entry)}\n`).join("");
}

/** Splunk's HTTP Event Collector takes a batch as event objects one after another. */
export function splunkHecBatch(entries: readonly StreamedEntry[], ctx: FormatContext): string {
  return entries
    .map((entry) =>
      JSON.stringify({
        time: entry.createdAt.getTime() / 1000,
        host: ctx.hostname,
        source: "porta",
        sourcetype: "porta:audit",
        event: JSON.parse(bodyOf(entry)) as unknown,
      }),
    )
    .join("\n");
}

/** Datadog's logs intake takes a JSON array; tags are `key:value` pairs separated by commas. */
export function datadogBatch(entries: readonly StreamedEntry[], ctx: FormatContext): string {
  return JSON.stringify(
    entries.map((entry) => ({
      ddsource: "porta",
      service: "porta",
      hostname: ctx.hostname,
      status: severityOf(entry.eventType) === "WARN" ? "warn" : "info",
      message: bodyOf(entry),
      ddtags: [`event_type:${entry.eventType}`, ...(entry.organizationId ? [`organization_id:${entry.organizationId}`] : [])].join(","),
    })),
  );
}

const stringAttribute = (key: string, value: string) => ({ key, value: { stringValue: value } });

/** OTLP/HTTP JSON (opentelemetry-proto's logs service): one resource, one scope, a record per entry. */
export function otlpLogs(entries: readonly StreamedEntry[], ctx: FormatContext): string {
  const nanos = (at: Date) => `${BigInt(at.getTime()) * 1_000_000n}`;
  const observed = nanos(new Date());
  return JSON.stringify({
    resourceLogs: [
      {
        resource: { attributes: [stringAttribute("service.name", ctx.serviceName), stringAttribute("host.name", ctx.hostname)] },
        scopeLogs: [
          {
            scope: { name: "porta.audit" },
            logRecords: entries.map((entry) => {
              const severity = severityOf(entry.eventType);
              return {
                timeUnixNano: nanos(entry.createdAt),
                observedTimeUnixNano: observed,
                severityNumber: severity === "WARN" ? 13 : 9,
                severityText: severity,
                body: { stringValue: bodyOf(entry) },
                attributes: [
                  stringAttribute("event.name", entry.eventType),
                  stringAttribute("porta.audit_entry_id", entry.id),
                  ...(entry.organizationId ? [stringAttribute("porta.organization_id", entry.organizationId)] : []),
                ],
              };
            }),
          },
        ],
      },
    ],
  });
}

/** RFC 5424 §6.3.3: inside a parameter value, `"`, `\` and `]` are escaped. */
const sdValue = (value: string) => value.replace(/["\\\]]/g, (c) => `\\${c}`);
/** RFC 5424's header fields take printable US-ASCII only, each up to a length. */
const printable = (value: string, max: number) => value.replace(/[^\x21-\x7e]/g, "_").slice(0, max) || "-";

/**
 * One RFC 5424 message: facility 13 (log audit), the entry's time, Porta's host, app "porta", the
 * event type as MSGID, the entry's id and organization as structured data (under the documentation
 * enterprise number 32473, RFC 5612), and the JSON event as a UTF-8 MSG (with its BOM).
 */
export function syslogMessage(entry: StreamedEntry, ctx: FormatContext): string {
  const pri = 13 * 8 + (severityOf(entry.eventType) === "WARN" ? 4 : 6);
  const sd = `[porta@32473 auditEntryId="${sdValue(entry.id)}"${entry.organizationId ? ` organizationId="${sdValue(entry.organizationId)}"` : ""}]`;
  return `<${pri}>1 ${entry.createdAt.toISOString()} ${printable(ctx.hostname, 255)} porta - ${printable(entry.eventType, 32)} ${sd} \uFEFF${bodyOf(entry)}`;
}

/** RFC 6587 §3.4.1 octet counting: each message preceded by its length in bytes and a space. */
export function syslogFrames(entries: readonly StreamedEntry[], ctx: FormatContext): string {
  return entries
    .map((entry) => {
      const message = syslogMessage(entry, ctx);
      return `${Buffer.byteLength(message, "utf8")} ${message}`;
    })
    .join("");
}

export interface SinkSecrets {
  secret: string | null;
  headerName: string | null;
  /** OTEL_EXPORTER_OTLP_HEADERS, for OTLP. */
  otlpHeaders: Record<string, string>;
}

/** The body and headers of one HTTP request carrying a batch (every kind but syslog). */
export function httpRequestOf(kind: Exclude<AuditSinkKind, "syslog">, entries: readonly StreamedEntry[], ctx: FormatContext, secrets: SinkSecrets): SinkRequest {
  switch (kind) {
    case "jsonl":
      return {
        body: jsonLines(entries),
        contentType: "application/x-ndjson",
        headers: secrets.secret ? (secrets.headerName ? { [secrets.headerName]: secrets.secret } : { authorization: `Bearer ${secrets.secret}` }) : {},
      };
    case "splunk_hec":
      return { body: splunkHecBatch(entries, ctx), contentType: "application/json", headers: secrets.secret ? { authorization: `Splunk ${secrets.secret}` } : {} };
    case "datadog":
      return { body: datadogBatch(entries, ctx), contentType: "application/json", headers: secrets.secret ? { "dd-api-key": secrets.secret } : {} };
    case "otlp":
      return { body: otlpLogs(entries, ctx), contentType: "application/json", headers: secrets.otlpHeaders };
  }
}

/** OTEL_EXPORTER_OTLP_HEADERS as the OpenTelemetry specification writes it: `key=value` pairs, comma-separated, values URL-encoded. */
export function parseOtlpHeaders(value: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (value ?? "").split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    const key = pair.slice(0, at).trim();
    const raw = pair.slice(at + 1).trim();
    let decoded: string;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      continue;
    }
    // eslint-disable-next-line no-control-regex -- a control character (CR, LF) would split the header
    if (/^[A-Za-z0-9-]+$/.test(key) && !/[\u0000-\u001f\u007f]/.test(decoded)) headers[key.toLowerCase()] = decoded;
  }
  return headers;
}
