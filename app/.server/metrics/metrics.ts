import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type Provider from "oidc-provider";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { AUDIT_EVENT_TYPES } from "~/schemas/audit-events";
import { LOGIN_METHODS } from "~/schemas/login-methods";
import { BOT_CHALLENGE_FAILURES, BOT_CHALLENGE_FORMS, type BotChallengeFailure, type BotChallengeForm } from "~/schemas/bot-challenge";
import type { AuditLog, AuditRecord } from "../audit/audit";
import type { ReadThroughCache } from "../cache/read-through";
import type { Database } from "../db/client";
import type { JobQueue } from "../jobs/queue";
import { wrapSend, type Mailer } from "../mail/mailer";
import type { PoolStats } from "../oidc/provider/tenant-provider";
import type { RateLimits } from "../rate-limit/limiters";
import { routeLabel } from "./route-label";

/**
 * Porta's Prometheus metrics (decision 050). Every label takes its values from a fixed set
 * (route templates, the audit catalogue, login methods, grant types, queue names): a value
 * that comes from traffic (a slug, an email, an error text) is folded into "other", so the
 * number of series does not grow with organizations or users.
 */
export interface Metrics {
  readonly registry: Registry;
  /** The whole HTTP handler, measured: requests by route template, method and status. */
  observeHttp(handler: RequestListener): RequestListener;
  observeAudit(audit: AuditLog): AuditLog;
  observeLimits(limits: RateLimits): RateLimits;
  observeMailer(mailer: Mailer): Mailer;
  observeJobs(jobs: JobQueue): JobQueue;
  /** A proof-of-work challenge issued, passed or refused (decision 091). */
  countBotChallenge(form: BotChallengeForm, result: "issued" | "passed" | BotChallengeFailure): void;
  /** Counts a freshly built provider's grants and errors. */
  observeProvider(provider: Provider): void;
  /** What is read at scrape time: the database pool, the cache, the provider pool, the queues. */
  watch(sources: WatchedSources): void;
  render(): Promise<{ contentType: string; body: string }>;
}

export interface WatchedSources {
  db: Database;
  cache: ReadThroughCache;
  cacheKind: "redis" | "memory";
  providerPool: () => PoolStats;
  /** The directory of discovery documents (decision 062). */
  documentDirectory: () => { entries: number; bytes: number };
  jobs: JobQueue;
}

const GRANT_TYPES = new Set([
  "authorization_code",
  "refresh_token",
  "client_credentials",
  "urn:ietf:params:oauth:grant-type:device_code",
  "urn:ietf:params:oauth:grant-type:token-exchange",
  "urn:ietf:params:oauth:grant-type:jwt-bearer",
  "urn:openid:params:grant-type:ciba",
]);
const SAFE_CODE = /^[a-z][a-z0-9_]{0,39}$/;
const AUDIT_EVENTS = new Set<string>(AUDIT_EVENT_TYPES);
const METHODS = new Set<string>([...LOGIN_METHODS, "federated"]);
const CHALLENGE_FORMS = new Set<string>(BOT_CHALLENGE_FORMS);
const CHALLENGE_RESULTS = new Set<string>(["issued", "passed", ...BOT_CHALLENGE_FAILURES]);

const bounded = (value: unknown, allowed: Set<string>) => (typeof value === "string" && allowed.has(value) ? value : "other");
/** Error codes and reasons come from code, not from requests; anything else is folded. */
const code = (value: unknown) => (typeof value === "string" && SAFE_CODE.test(value) ? value : "other");

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "porta_" });

  const httpRequests = new Counter({
    name: "porta_http_requests_total",
    help: "HTTP requests answered, by route template, method and status code.",
    labelNames: ["route", "method", "status"] as const,
    registers: [registry],
  });
  const httpDuration = new Histogram({
    name: "porta_http_request_duration_seconds",
    help: "Time from a request's arrival to the end of its response, by route template, method and status class.",
    labelNames: ["route", "method", "status_class"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const grants = new Counter({
    name: "porta_oidc_grants_total",
    help: "Token endpoint grants, by grant type and outcome (success or the OAuth error code).",
    labelNames: ["grant_type", "outcome"] as const,
    registers: [registry],
  });
  const protocolErrors = new Counter({
    name: "porta_oidc_errors_total",
    help: "Errors answered by the protocol endpoints other than the token endpoint, by endpoint and OAuth error code.",
    labelNames: ["endpoint", "error"] as const,
    registers: [registry],
  });
  const auditEvents = new Counter({
    name: "porta_audit_events_total",
    help: "Audit entries written, by event type (the audit catalogue).",
    labelNames: ["event"] as const,
    registers: [registry],
  });
  const signIns = new Counter({
    name: "porta_sign_ins_total",
    help: "Sign-ins by login method and outcome; refusals carry their reason.",
    labelNames: ["method", "outcome", "reason"] as const,
    registers: [registry],
  });
  const secondFactors = new Counter({
    name: "porta_second_factor_total",
    help: "Second-factor checks by method and outcome.",
    labelNames: ["method", "outcome"] as const,
    registers: [registry],
  });
  const limitRefusals = new Counter({
    name: "porta_rate_limit_refusals_total",
    help: "Attempts refused by a rate limit, by limit.",
    labelNames: ["limit"] as const,
    registers: [registry],
  });
  const mail = new Counter({
    name: "porta_mail_total",
    help: "Mail handed to the SMTP server (or the development outbox), by outcome.",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  const jobRuns = new Counter({
    name: "porta_jobs_processed_total",
    help: "Job attempts by queue and outcome (a failed attempt is retried until its queue's schedule ends).",
    labelNames: ["queue", "outcome"] as const,
    registers: [registry],
  });
  const botChallenges = new Counter({
    name: "porta_bot_challenges_total",
    help: "Proof-of-work challenges on the sign-in forms by form and result: issued, passed, or why a post was refused.",
    labelNames: ["form", "result"] as const,
    registers: [registry],
  });
  const dbQueryDuration = new Histogram({
    name: "porta_db_query_duration_seconds",
    help: "Duration of the SQL statements Prisma sends.",
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });

  let sources: WatchedSources | undefined;
  let poolSeen = { builds: 0, evictions: 0 };
  new Gauge({ name: "porta_provider_pool_size", help: "Organizations whose OIDC provider is built and kept.", registers: [registry], collect() { if (sources) this.set(sources.providerPool().size); } });
  new Gauge({ name: "porta_provider_pool_capacity", help: "How many built providers the pool's memory budget holds.", registers: [registry], collect() { if (sources) this.set(sources.providerPool().capacity); } });
  new Gauge({ name: "porta_document_directory_entries", help: "Organizations whose discovery and JWKS are held in memory.", registers: [registry], collect() { if (sources) this.set(sources.documentDirectory().entries); } });
  new Gauge({ name: "porta_document_directory_bytes", help: "The directory of discovery documents' estimate of its own size.", registers: [registry], collect() { if (sources) this.set(sources.documentDirectory().bytes); } });
  const poolBuilds = new Counter({ name: "porta_provider_pool_builds_total", help: "OIDC providers built (pool misses).", registers: [registry] });
  new Counter({
    name: "porta_provider_pool_evictions_total",
    help: "Built providers pushed out of the pool by newer ones.",
    registers: [registry],
    collect() {
      if (!sources) return;
      const now = sources.providerPool();
      poolBuilds.inc(Math.max(0, now.builds - poolSeen.builds));
      this.inc(Math.max(0, now.evictions - poolSeen.evictions));
      poolSeen = { builds: now.builds, evictions: now.evictions };
    },
  });
  new Gauge({
    name: "porta_db_pool_connections",
    help: "PostgreSQL pool connections by state (total, idle, waiting clients); absent on the embedded database.",
    labelNames: ["state"] as const,
    registers: [registry],
    collect() {
      const stats = sources?.db.poolStats?.();
      if (!stats) return;
      this.set({ state: "total" }, stats.total);
      this.set({ state: "idle" }, stats.idle);
      this.set({ state: "waiting" }, stats.waiting);
    },
  });
  new Gauge({
    name: "porta_cache_up",
    help: "1 when the cache store (Redis, or the in-process memory) answers; reads fall back to the database when it does not.",
    labelNames: ["kind"] as const,
    registers: [registry],
    async collect() {
      if (!sources) return;
      const up = await Promise.race([
        sources.cache.ping().then(() => 1, () => 0),
        new Promise<number>((resolve) => setTimeout(() => resolve(0), 500).unref()),
      ]);
      this.set({ kind: sources.cacheKind }, up);
    },
  });
  new Gauge({
    name: "porta_jobs_queued",
    help: "Jobs by queue and state: waiting to run, or dead (their retries ran out).",
    labelNames: ["queue", "state"] as const,
    registers: [registry],
    async collect() {
      if (!sources) return;
      const jobs = sources.jobs;
      await Promise.all(
        jobs.queues.flatMap((queue) =>
          (jobs.hasDeadLetterQueue(queue) ? (["waiting", "dead"] as const) : (["waiting"] as const)).map(async (state) => {
            const count = await jobs.count(queue, state).catch(() => undefined);
            if (count !== undefined) this.set({ queue, state }, count);
          }),
        ),
      );
    },
  });

  function countAudit(entry: AuditRecord) {
    const event = bounded(entry.eventType, AUDIT_EVENTS);
    auditEvents.inc({ event });
    const data = entry.data ?? {};
    if (entry.eventType === "auth.login.success") signIns.inc({ method: bounded(data.method, METHODS), outcome: "success", reason: "" });
    if (entry.eventType === "auth.login.failure") signIns.inc({ method: bounded(data.method, METHODS), outcome: "failure", reason: code(data.reason) });
    if (entry.eventType === "auth.2fa.verified") secondFactors.inc({ method: code(data.method), outcome: "success" });
    if (entry.eventType === "auth.2fa.failed") secondFactors.inc({ method: code(data.method), outcome: "failure" });
  }

  return {
    registry,
    observeHttp(handler) {
      return (req: IncomingMessage, res: ServerResponse) => {
        const started = process.hrtime.bigint();
        // Read now: Express rewrites req.url inside mounted routers.
        const route = routeLabel(req.url);
        res.once("finish", () => {
          const method = req.method && /^[A-Z]{3,7}$/.test(req.method) ? req.method : "other";
          const status = String(res.statusCode);
          httpRequests.inc({ route, method, status });
          httpDuration.observe({ route, method, status_class: `${status[0]}xx` }, Number(process.hrtime.bigint() - started) / 1e9);
        });
        handler(req, res);
      };
    },
    observeAudit(audit) {
      return {
        async record(entry, tx) {
          const jobs = await audit.record(entry, tx);
          countAudit(entry);
          return jobs;
        },
        async recordMany(entries, tx) {
          const jobs = await audit.recordMany(entries, tx);
          for (const entry of entries) countAudit(entry);
          return jobs;
        },
      };
    },
    observeLimits(limits) {
      return {
        ...limits,
        async consume(name, key) {
          const outcome = await limits.consume(name, key);
          if (!outcome.allowed) limitRefusals.inc({ limit: name });
          return outcome;
        },
      };
    },
    countBotChallenge(form, result) {
      botChallenges.inc({ form: bounded(form, CHALLENGE_FORMS), result: bounded(result, CHALLENGE_RESULTS) });
    },
    observeMailer(mailer) {
      return wrapSend(mailer, async (message) => {
        try {
          const sent = await mailer.send(message);
          mail.inc({ outcome: "sent" });
          return sent;
        } catch (error) {
          mail.inc({ outcome: "failed" });
          throw error;
        }
      });
    },
    observeJobs(jobs) {
      return {
        ...jobs,
        handle(name, handler, expiry) {
          jobs.handle(
            name,
            async (data, job) => {
              try {
                await handler(data, job);
                jobRuns.inc({ queue: name, outcome: "done" });
              } catch (error) {
                jobRuns.inc({ queue: name, outcome: "failed" });
                throw error;
              }
            },
            expiry,
          );
        },
      };
    },
    observeProvider(provider) {
      provider.on("grant.success", (ctx) => {
        grants.inc({ grant_type: bounded(ctx.oidc.params?.grant_type, GRANT_TYPES), outcome: "success" });
      });
      provider.on("grant.error", (ctx, error) => {
        grants.inc({ grant_type: bounded(ctx.oidc.params?.grant_type, GRANT_TYPES), outcome: code(error.error) });
      });
      const errorAt = (endpoint: string) => (_ctx: unknown, error: { error?: string }) => protocolErrors.inc({ endpoint, error: code(error.error) });
      provider.on("authorization.error", errorAt("authorization"));
      provider.on("introspection.error", errorAt("introspection"));
      provider.on("revocation.error", errorAt("revocation"));
      provider.on("userinfo.error", errorAt("userinfo"));
      provider.on("end_session.error", errorAt("end_session"));
      provider.on("pushed_authorization_request.error", errorAt("pushed_authorization_request"));
    },
    watch(watched) {
      sources = watched;
      watched.db.onQuery((_sql, durationMs) => dbQueryDuration.observe(durationMs / 1000));
    },
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
