import { z } from "zod";
import { AUDIT_EVENT_FAMILIES } from "./audit-events";

/**
 * Audit sinks (decision 092): where the audit trail is streamed as entries commit, shared by the
 * Admin API, its OpenAPI document, the console and the AUDIT_SINKS variable. A sink takes every
 * entry of its organization (a deployment's: of every organization and of the deployment itself),
 * or only the event families it names.
 */
export const AUDIT_SINK_KINDS = ["syslog", "jsonl", "splunk_hec", "datadog", "otlp"] as const;
export type AuditSinkKind = (typeof AUDIT_SINK_KINDS)[number];

/** Control characters (CR and LF above all: a header or a frame could be split by them) are refused everywhere. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;
const noControl = (value: string) => !CONTROL.test(value);

const NameSchema = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(100, "must have at most 100 characters")
  .refine(noControl, "must not contain control characters");

/** The form only; whether it suits the kind, and whether its host may be reached, is `auditSinkUrlIssue`'s. */
const UrlSchema = z
  .string()
  .trim()
  .max(2000, "must have at most 2000 characters")
  .refine(noControl, "must not contain control characters or line breaks");

const SecretSchema = z
  .string()
  .min(1, "must not be empty")
  .max(1000, "must have at most 1000 characters")
  .refine(noControl, "must not contain control characters or line breaks");

/** Headers Porta sets itself on every request and a sink may not carry its secret in. */
const RESERVED_HEADERS = new Set(["host", "content-length", "content-type", "transfer-encoding", "connection", "user-agent", "expect", "te", "upgrade"]);
const HeaderNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/, "must be a header name: letters, digits and dashes, at most 64")
  .refine((name) => !RESERVED_HEADERS.has(name.toLowerCase()), "is a header Porta sets itself");

const CaPemSchema = z
  .string()
  .max(20_000, "must have at most 20000 characters")
  .refine((pem) => /^-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----\s*$/.test(pem.trim()), "must be a PEM certificate (-----BEGIN CERTIFICATE-----)")
  .refine((pem) => !pem.includes("\u0000"), "must not contain NUL");

const EventFamiliesSchema = z
  .array(z.string().refine((family) => AUDIT_EVENT_FAMILIES.includes(family), "is not an audit event family such as auth.* (see docs/audit-events.md)"))
  .max(100, "must have at most 100 entries")
  .refine((a) => new Set(a).size === a.length, "must not repeat a family");

export const AuditSinkCreateSchema = z
  .object({
    name: NameSchema,
    kind: z.enum(AUDIT_SINK_KINDS),
    /** http(s) URL (jsonl, splunk_hec, datadog); tls://host:port or tcp://host:port (syslog); none (otlp). */
    url: UrlSchema.optional(),
    /** The bearer token (jsonl, or the value of `headerName`), HEC token (splunk_hec) or API key (datadog). */
    secret: SecretSchema.optional(),
    headerName: HeaderNameSchema.optional(),
    caPem: CaPemSchema.optional(),
    eventFamilies: EventFamiliesSchema.optional(),
    enabled: z.boolean().optional(),
  })
  .strict();
export type AuditSinkCreate = z.infer<typeof AuditSinkCreateSchema>;

/** A sink's kind stays; `secret: null` and `caPem: null` remove them. */
export const AuditSinkUpdateSchema = z
  .object({
    name: NameSchema.optional(),
    url: UrlSchema.optional(),
    secret: SecretSchema.nullable().optional(),
    headerName: HeaderNameSchema.nullable().optional(),
    caPem: CaPemSchema.nullable().optional(),
    eventFamilies: EventFamiliesSchema.optional(),
    enabled: z.boolean().optional(),
  })
  .strict();
export type AuditSinkUpdate = z.infer<typeof AuditSinkUpdateSchema>;

/**
 * Whether a URL suits a sink's kind: the message for the `url` field, or null. Hosts that are
 * special-use addresses are the service's to refuse (they depend on the operator's setting).
 */
export function auditSinkUrlIssue(kind: AuditSinkKind, value: string | undefined): string | null {
  if (kind === "otlp") return value ? "must be left out: OTLP logs go to the tracing endpoint (OTEL_EXPORTER_OTLP_ENDPOINT)" : null;
  if (!value) return "is required";
  if (!URL.canParse(value)) return "must be an absolute URL with a valid port";
  const url = new URL(value);
  if (url.username || url.password) return "must not contain a user name or password";
  if (value.includes("#")) return "must not contain a fragment";
  if (url.port === "0") return "must not use port 0";
  if (kind === "syslog") {
    if (url.protocol !== "tls:" && url.protocol !== "tcp:") return "must be tls://host:port (or tcp://host:port on a closed network)";
    if (!url.port) return "must name the collector's port, such as tls://siem.example.com:6514";
    if ((url.pathname && url.pathname !== "/") || url.search) return "must be only a host and a port";
    return null;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must be an https URL";
  return null;
}

export const AuditSinkSchema = z.object({
  id: z.uuid(),
  /** Null for a deployment's sink (AUDIT_SINKS), which only the environment changes. */
  organizationId: z.uuid().nullable(),
  name: z.string(),
  kind: z.enum(AUDIT_SINK_KINDS),
  url: z.string(),
  headerName: z.string().nullable(),
  hasSecret: z.boolean(),
  /** The secret's last four characters, to tell which one is set (none for a secret shorter than 12). */
  secretLast4: z.string().nullable(),
  hasCaPem: z.boolean(),
  eventFamilies: z.array(z.string()),
  enabled: z.boolean(),
  /** Entries waiting to be sent (in order), dead ones (the dead letters), and the last outcome. */
  pending: z.number().int(),
  dead: z.number().int(),
  deliveredCount: z.number().int(),
  lastDeliveredAt: z.iso.datetime().nullable(),
  lastError: z.string().nullable(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});
export type AuditSink = z.infer<typeof AuditSinkSchema>;

export const AuditSinkDeadLetterSchema = z.object({
  id: z.uuid(),
  auditEntryId: z.uuid(),
  eventType: z.string(),
  attempts: z.number().int(),
  lastError: z.string().nullable(),
  createdAt: z.iso.datetime(),
});
export type AuditSinkDeadLetter = z.infer<typeof AuditSinkDeadLetterSchema>;

export const AuditSinkReplaySchema = z.object({ replayed: z.number().int().describe("Dead entries put back in line, in their order") });

export const AuditSinkTestResultSchema = z.object({
  delivered: z.boolean(),
  statusCode: z.number().int().nullable(),
  /** A short reason when it was not delivered (a code, never the receiver's words). */
  error: z.string().nullable(),
  durationMs: z.number().int(),
});
export type AuditSinkTestResult = z.infer<typeof AuditSinkTestResultSchema>;

/** What the consoles' Audit streaming page answers a form with (routes and the view share it). */
export type AuditSinksPageOutcome =
  | { kind: "invalid"; values: Record<string, unknown>; errors: Record<string, string> }
  | { kind: "tested"; name: string; delivered: boolean; detail: string | null }
  | { kind: "rowFailed"; message: string };
