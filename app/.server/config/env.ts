import { isIP } from "node:net";
import { SLUG_PATTERN } from "~/schemas/slug";
import { z } from "zod";
import { emailSchema } from "~/schemas/email";
import { AuditSinkCreateSchema, auditSinkUrlIssue, type AuditSinkCreate } from "~/schemas/audit-sink";

/**
 * The one place that reads Porta's environment. Every variable Porta reads is parsed here;
 * a bad value becomes a ConfigError whose message names the variable and the expected form.
 */

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = "ConfigError";
  }
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

const optionalString = z
  .string()
  .transform((v) => v.trim())
  .transform((v) => (v === "" ? undefined : v))
  .optional();

function urlWithProtocols(protocols: string[], expected: string) {
  return z.string().refine(
    (value) => {
      try {
        const url = new URL(value);
        return protocols.includes(url.protocol) && url.hostname !== "";
      } catch {
        return false;
      }
    },
    { message: `expected ${expected}` },
  );
}

/** Express's names for address ranges (proxy-addr), usable in TRUST_PROXY beside addresses and CIDRs. */
const NAMED_RANGES = new Set(["loopback", "linklocal", "uniquelocal"]);
const TRUST_PROXY_FORM = "a hop count (0 or none: trust no proxy) or a comma-separated list of proxy addresses, CIDR ranges and loopback/linklocal/uniquelocal";

function isAddressOrRange(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true;
  const [address = "", prefix, ...rest] = entry.split("/");
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  const bits = /^\d{1,3}$/.test(prefix) ? Number(prefix) : -1;
  return bits >= 0 && bits <= (family === 4 ? 32 : 128);
}

/**
 * Which peers may tell Porta the client's address through X-Forwarded-For: a hop count, or the
 * proxies' addresses. `true` (trust anyone) is refused: any client could then choose its address.
 */
const TrustProxySchema = z
  .string()
  .trim()
  .transform((value, ctx): number | string[] => {
    if (value === "none") return 0;
    if (/^\d+$/.test(value)) return Number(value);
    const entries = value.split(",").map((entry) => entry.trim()).filter(Boolean);
    if (entries.length === 0 || value === "true" || value === "false" || /^-/.test(value)) {
      ctx.addIssue({ code: "custom", message: `expected ${TRUST_PROXY_FORM}` });
      return z.NEVER;
    }
    const bad = entries.find((entry) => !isAddressOrRange(entry));
    if (bad !== undefined) {
      ctx.addIssue({ code: "custom", message: `${bad} is not an IP address, CIDR range or one of loopback, linklocal, uniquelocal; expected ${TRUST_PROXY_FORM}` });
      return z.NEVER;
    }
    return entries;
  });

/** An empty or blank variable means "unset" (z.coerce would turn it into 0). */
const blankAsUnset = (value: unknown) => (typeof value === "string" && value.trim() === "" ? undefined : value);

/** A TCP port another party listens on, or a second port of Porta's (1–65535). */
const portNumber = z.coerce
  .number({ message: "expected a port number" })
  .int("expected a port number")
  .min(1, "expected a port number")
  .max(65535, "expected a port number");

/** Every environment variable Porta reads (the deployment files are checked against it: test/deploy.test.ts). */
export const EnvSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  PORT: z.preprocess(
    blankAsUnset,
    z.coerce
      .number({ message: "expected a port number between 0 and 65535" })
      .int("expected a port number between 0 and 65535")
      .min(0, "expected a port number between 0 and 65535")
      .max(65535, "expected a port number between 0 and 65535")
      .default(3000),
  ),
  BASE_URL: optionalString.pipe(
    urlWithProtocols(["http:", "https:"], "an absolute http(s) URL without a trailing path, such as https://id.example.com")
      .refine((v) => !/[?#]/.test(v), { message: "expected a URL without query or fragment" })
      .optional(),
  ),
  DATABASE_URL: optionalString.pipe(
    urlWithProtocols(["postgres:", "postgresql:"], "a PostgreSQL URL such as postgresql://user:pass@host:5432/db").optional(),
  ),
  REDIS_URL: optionalString.pipe(
    urlWithProtocols(["redis:", "rediss:"], "a Redis URL such as redis://127.0.0.1:6379").optional(),
  ),
  DATA_DIR: z.string().trim().min(1, "expected a directory path").default("./.data"),
  SUPER_ADMIN_SLUG: z
    .string()
    .trim()
    .toLowerCase()
    .regex(SLUG_PATTERN, "expected a slug: lower-case letters, digits and inner dashes, 1 to 63 characters")
    .default("porta-admin"),
  ADMIN_BOOTSTRAP_EMAIL: optionalString.pipe(emailSchema("expected an email address such as admin@example.com").optional()),
  ADMIN_BOOTSTRAP_PASSWORD: optionalString.pipe(z.string().min(8, "expected at least 8 characters").optional()),
  ENCRYPTION_KEY: optionalString.pipe(
    z
      .string()
      .refine((v) => /^[A-Za-z0-9+/_-]+={0,2}$/.test(v) && Buffer.from(v, "base64").length === 32, {
        message: "expected 32 random bytes in base64 (44 characters), for example from `openssl rand -base64 32`",
      })
      .optional(),
  ),
  SMTP_HOST: optionalString,
  SMTP_PORT: z.preprocess(blankAsUnset, portNumber.default(587)),
  SMTP_USER: optionalString,
  SMTP_PASS: optionalString,
  SMTP_FROM: optionalString,
  LOG_LEVEL: z.enum(LOG_LEVELS, { message: `expected one of ${LOG_LEVELS.join(", ")}` }).default("info"),
  TRUST_PROXY: optionalString.pipe(TrustProxySchema.optional()),
  OUTBOUND_ALLOW_PRIVATE_NETWORKS: z.preprocess(
    blankAsUnset,
    z.enum(["true", "false"], { message: "expected true or false" }).default("false"),
  ),
  SHUTDOWN_DELAY_SECONDS: z.preprocess(
    blankAsUnset,
    z.coerce
      .number({ message: "expected a number of seconds between 0 and 120" })
      .min(0, "expected a number of seconds between 0 and 120")
      .max(120, "expected a number of seconds between 0 and 120")
      .default(0),
  ),
  OIDC_PROVIDER_POOL_MB: z.preprocess(
    blankAsUnset,
    z.coerce
      .number({ message: "expected a number of megabytes, such as 64" })
      .positive("expected a number of megabytes, such as 64")
      .max(65536, "expected a number of megabytes, such as 64")
      .optional(),
  ),
  DOCUMENT_DIRECTORY_MB: z.preprocess(
    blankAsUnset,
    z.coerce
      .number({ message: "expected a number of megabytes, such as 48" })
      .positive("expected a number of megabytes, such as 48")
      .max(65536, "expected a number of megabytes, such as 48")
      .optional(),
  ),
  METRICS_PORT: z.preprocess(blankAsUnset, portNumber.optional()),
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalString.pipe(
    urlWithProtocols(["http:", "https:"], "an OTLP/HTTP collector URL such as http://otel-collector:4318").optional(),
  ),
  OTEL_SERVICE_NAME: optionalString,
  /** Sent with OTLP requests (`key=value,...`): the trace exporter reads it itself, the audit stream's OTLP logs from here. */
  OTEL_EXPORTER_OTLP_HEADERS: optionalString,
  /** The deployment's audit sinks, a JSON array (decision 092); checked below. */
  AUDIT_SINKS: optionalString,
  METRICS_TOKEN: optionalString.pipe(z.string().min(32, "expected at least 32 characters, for example from `openssl rand -hex 32`").optional()),
});

export type Env = z.infer<typeof EnvSchema>;

export interface Config {
  nodeEnv: Env["NODE_ENV"];
  port: number;
  /** Public base URL without a trailing slash. */
  baseUrl: string;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  dataDir: string;
  superAdminSlug: string;
  adminBootstrap: { email: string | undefined; password: string | undefined };
  /** Raw 32-byte key when ENCRYPTION_KEY is set; otherwise one is generated into DATA_DIR. */
  encryptionKey: Buffer | undefined;
  smtp: { host: string | undefined; port: number; user: string | undefined; pass: string | undefined; from: string | undefined };
  logLevel: Env["LOG_LEVEL"];
  /** Express's `trust proxy`: hops to trust, or the trusted proxies' addresses and ranges. */
  trustProxy: number | string[];
  /** Heap budget of the pool of built OIDC providers, in bytes; undefined: the registry's default. */
  providerPoolBytes: number | undefined;
  /** DOCUMENT_DIRECTORY_MB in bytes: what the directory of discovery documents may hold (decision 062). */
  documentDirectoryBytes: number | undefined;
  /** After SIGTERM, how long the node answers not-ready while still serving, before it stops accepting. */
  shutdownDelayMs: number;
  /** Whether outbound requests (a client's jwks_uri) may reach loopback and private addresses. */
  outboundAllowPrivateNetworks: boolean;
  /**
   * Where Prometheus scrapes `/metrics` (decision 050): a port of its own (never routed by the
   * public load balancer), or the main port behind a bearer token; neither by default.
   */
  metrics: { port: number | undefined; token: string | undefined };
  /** OpenTelemetry traces over OTLP/HTTP (decision 051); off without an endpoint. */
  tracing: { endpoint: string | undefined; serviceName: string; headers?: string | undefined };
  /** The deployment's audit sinks (AUDIT_SINKS, decision 092): every organization's entries and the deployment's own. */
  auditSinks?: AuditSinkCreate[];
}

/** AUDIT_SINKS: a JSON array of sinks, each as the Admin API takes one, with unique names. */
function parseAuditSinks(value: string | undefined, tracingEndpoint: string | undefined): AuditSinkCreate[] {
  if (!value) return [];
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    throw new ConfigError("AUDIT_SINKS", "expected a JSON array of sinks, such as [{\"name\":\"splunk\",\"kind\":\"splunk_hec\",\"url\":\"https://splunk.example.com:8088\",\"secret\":\"...\"}]");
  }
  const result = z.array(AuditSinkCreateSchema).max(20, "expected at most 20 sinks").safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new ConfigError("AUDIT_SINKS", `${issue.path.length > 0 ? `at ${issue.path.join(".")}: ` : ""}${issue.message}`);
  }
  const names = new Set<string>();
  for (const [i, sink] of result.data.entries()) {
    if (names.has(sink.name)) throw new ConfigError("AUDIT_SINKS", `at ${i}.name: "${sink.name}" is named twice`);
    names.add(sink.name);
    const urlIssue = auditSinkUrlIssue(sink.kind, sink.url);
    if (urlIssue) throw new ConfigError("AUDIT_SINKS", `at ${i}.url: ${urlIssue}`);
    if (sink.kind === "otlp" && !tracingEndpoint) throw new ConfigError("AUDIT_SINKS", `at ${i}.kind: otlp needs OTEL_EXPORTER_OTLP_ENDPOINT`);
  }
  return result.data;
}

/** Parses an environment (process.env by default). Throws ConfigError on the first bad variable. */
export function parseConfig(source: Record<string, string | undefined> = process.env): Config {
  const known = Object.fromEntries(
    Object.keys(EnvSchema.shape)
      .filter((key) => source[key] !== undefined)
      .map((key) => [key, source[key]]),
  );
  const result = EnvSchema.safeParse(known);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const variable = String(issue.path[0] ?? "environment");
    throw new ConfigError(variable, issue.message);
  }
  const env = result.data;
  const baseUrl = (env.BASE_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, "");
  if (new URL(baseUrl).pathname !== "/") {
    throw new ConfigError("BASE_URL", "expected an origin without a path, such as https://id.example.com");
  }
  if (env.METRICS_PORT !== undefined && env.METRICS_PORT === env.PORT) {
    throw new ConfigError("METRICS_PORT", "expected a port other than PORT: the metrics port must stay off the public surface");
  }
  if (env.SMTP_HOST && !env.SMTP_FROM) {
    throw new ConfigError("SMTP_FROM", "expected a sender address such as \"Porta <no-reply@example.com>\" when SMTP_HOST is set");
  }
  return {
    nodeEnv: env.NODE_ENV,
    port: env.PORT,
    baseUrl,
    databaseUrl: env.DATABASE_URL,
    redisUrl: env.REDIS_URL,
    dataDir: env.DATA_DIR,
    superAdminSlug: env.SUPER_ADMIN_SLUG,
    adminBootstrap: { email: env.ADMIN_BOOTSTRAP_EMAIL, password: env.ADMIN_BOOTSTRAP_PASSWORD },
    encryptionKey: env.ENCRYPTION_KEY ? Buffer.from(env.ENCRYPTION_KEY, "base64") : undefined,
    smtp: { host: env.SMTP_HOST, port: env.SMTP_PORT, user: env.SMTP_USER, pass: env.SMTP_PASS, from: env.SMTP_FROM },
    logLevel: env.LOG_LEVEL,
    trustProxy: env.TRUST_PROXY ?? ["loopback"],
    providerPoolBytes: env.OIDC_PROVIDER_POOL_MB === undefined ? undefined : Math.round(env.OIDC_PROVIDER_POOL_MB * 1024 * 1024),
    documentDirectoryBytes: env.DOCUMENT_DIRECTORY_MB === undefined ? undefined : Math.round(env.DOCUMENT_DIRECTORY_MB * 1024 * 1024),
    shutdownDelayMs: Math.round(env.SHUTDOWN_DELAY_SECONDS * 1000),
    outboundAllowPrivateNetworks: env.OUTBOUND_ALLOW_PRIVATE_NETWORKS === "true",
    metrics: { port: env.METRICS_PORT, token: env.METRICS_TOKEN },
    tracing: { endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: env.OTEL_SERVICE_NAME ?? "porta", headers: env.OTEL_EXPORTER_OTLP_HEADERS },
    auditSinks: parseAuditSinks(env.AUDIT_SINKS, env.OTEL_EXPORTER_OTLP_ENDPOINT),
  };
}
