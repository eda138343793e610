import { randomUUID } from "node:crypto";
import type { AuditSink } from "~/generated/prisma/client";
import type { AuditSinkKind } from "~/schemas/audit-sink";
import type { JobServiceContext } from "../context";
import type { JobContext } from "../jobs/job";
import { failureReason } from "../jobs/queue";
import { sendWebhook, type SendResult } from "../webhooks/send";
import { httpRequestOf, parseOtlpHeaders, requestUrl, syslogFrames, type FormatContext, type StreamedEntry } from "./formats";
import { openSinkSecret } from "./secrets";
import { sendSyslog } from "./syslog";

/**
 * The drain of one sink, as the `audit-stream` job (decision 092): it claims the sink (a lease, so
 * one drainer per sink across processes, and a crashed one's claim lapses), then sends the sink's
 * oldest waiting entries in the order of their ids, a batch per request. A batch delivered is
 * deleted (the sink keeps the count); a batch refused waits on the retry schedule with everything
 * behind it, so the receiver sees the entries in order; after the last attempt the batch is dead
 * (the dead-letter view, replayable) and the sink moves on.
 */
export const AUDIT_STREAM_BATCH = 100;
export const AUDIT_STREAM_TIMEOUT_MS = 10_000;
/** A claim outlives a batch's deadline; past it, another drainer may take the sink. */
export const AUDIT_STREAM_LEASE_MS = AUDIT_STREAM_TIMEOUT_MS + 5_000;
/**
 * Entries younger than this wait for the next pass: a transaction that took its entry's id a
 * moment before another's may commit a moment after it, and waiting lets it line up in id order.
 */
export const AUDIT_STREAM_SETTLE_MS = 250;
/** One job drains for at most this long, then leaves the rest to the next (the queue's own expiry is longer). */
const DRAIN_BUDGET_MS = 20_000;
const MAX_RESPONSE_BYTES = 16 * 1024;

type DrainContext = JobServiceContext<"encrypter" | "config" | "logger">;

interface PendingRow {
  id: string;
  auditEntryId: string;
  attempts: number;
  nextAttemptAt: Date | null;
  createdAt: Date;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One request carrying `entries` to `sink`, whatever its kind. */
export async function sendToSink(ctx: Pick<DrainContext, "config" | "encrypter">, sink: AuditSink, entries: readonly StreamedEntry[]): Promise<SendResult> {
  const format: FormatContext = { hostname: new URL(ctx.config.baseUrl).hostname, serviceName: ctx.config.tracing.serviceName };
  const allowPrivateNetworks = ctx.config.outboundAllowPrivateNetworks;
  if (sink.kind === "syslog") {
    return sendSyslog(sink.url, syslogFrames(entries, format), { caPem: sink.caPem, allowPrivateNetworks, timeoutMs: AUDIT_STREAM_TIMEOUT_MS });
  }
  const kind = sink.kind as Exclude<AuditSinkKind, "syslog">;
  if (kind === "otlp" && !ctx.config.tracing.endpoint) return { statusCode: null, error: "TRACING_NOT_CONFIGURED", responseBody: null, durationMs: 0 };
  const secret = sink.secretEncrypted ? openSinkSecret(ctx.encrypter, sink.id, sink.secretEncrypted) : null;
  const request = httpRequestOf(kind, entries, format, { secret, headerName: sink.headerName, otlpHeaders: parseOtlpHeaders(ctx.config.tracing.headers) });
  return sendWebhook(requestUrl(kind, sink.url, ctx.config.tracing.endpoint), {
    headers: request.headers,
    body: request.body,
    contentType: request.contentType,
    userAgent: "Porta-Audit-Stream/1",
    allowPrivateNetworks,
    timeoutMs: AUDIT_STREAM_TIMEOUT_MS,
    maxResponseBytes: MAX_RESPONSE_BYTES,
  });
}

/** A send that could not even start (a secret that no longer opens, say) is a failed attempt like any other, so the line still moves on in the end. */
async function attempt(ctx: DrainContext, sink: AuditSink, entries: readonly StreamedEntry[]): Promise<SendResult> {
  try {
    return await sendToSink(ctx, sink, entries);
  } catch (error) {
    return { statusCode: null, error: failureReason(error), responseBody: null, durationMs: 0 };
  }
}

const deliveredOf = (result: SendResult) => (result.statusCode === null ? result.error === null : result.statusCode >= 200 && result.statusCode < 300);
const reasonOf = (result: SendResult) => result.error ?? `HTTP_${result.statusCode}`;

export async function drainAuditSinkJob(ctx: DrainContext, data: { sinkId: string }, _job: JobContext): Promise<void> {
  const started = Date.now();
  while (Date.now() - started < DRAIN_BUDGET_MS) {
    const lease = randomUUID();
    const claimed = await ctx.db.$queryRaw<AuditSink[]>`
      UPDATE "AuditSink" SET "drainLease" = ${lease}, "drainingUntil" = now() + ${`${AUDIT_STREAM_LEASE_MS} milliseconds`}::interval
      WHERE "id" = ${data.sinkId}::uuid AND "enabled" AND ("drainingUntil" IS NULL OR "drainingUntil" < now())
      RETURNING *`;
    const sink = claimed[0];
    // Off, deleted, or another drainer has it (which looks again before it lets go).
    if (!sink) return;
    try {
      await drainClaimed(ctx, sink, lease, started);
    } finally {
      await ctx.db.$executeRaw`UPDATE "AuditSink" SET "drainLease" = NULL, "drainingUntil" = NULL WHERE "id" = ${sink.id}::uuid AND "drainLease" = ${lease}`;
    }
    // Rows committed while this drainer held the claim were told to nobody else: look once more.
    const due = await ctx.db.$queryRaw<Array<{ n: number }>>`
      SELECT count(*)::int AS n FROM "AuditSinkEvent"
      WHERE "sinkId" = ${data.sinkId}::uuid AND "status" = 'pending' AND ("nextAttemptAt" IS NULL OR "nextAttemptAt" <= now())`;
    if ((due[0]?.n ?? 0) === 0) return;
    const [head] = await nextPending(ctx, data.sinkId);
    // The line is waiting for a retry: the sweep wakes it when it is due.
    if (!head || (head.nextAttemptAt && head.nextAttemptAt.getTime() > Date.now())) return;
  }
}

async function nextPending(ctx: DrainContext, sinkId: string, take = 1): Promise<PendingRow[]> {
  return ctx.db.auditSinkEvent.findMany({
    where: { sinkId, status: "pending" },
    orderBy: { auditEntryId: "asc" },
    take,
    select: { id: true, auditEntryId: true, attempts: true, nextAttemptAt: true, createdAt: true },
  });
}

async function drainClaimed(ctx: DrainContext, sink: AuditSink, lease: string, started: number): Promise<void> {
  const schedule = ctx.retryScheduleOf("audit-stream");
  while (Date.now() - started < DRAIN_BUDGET_MS) {
    let rows = await nextPending(ctx, sink.id, AUDIT_STREAM_BATCH);
    if (rows.length === 0) return;
    const head = rows[0]!;
    if (head.nextAttemptAt && head.nextAttemptAt.getTime() > Date.now()) return;
    const settled = Date.now() - AUDIT_STREAM_SETTLE_MS;
    if (head.createdAt.getTime() > settled) {
      await sleep(head.createdAt.getTime() - settled);
      continue;
    }
    rows = rows.filter((row) => row.createdAt.getTime() <= settled);
    const entries = await ctx.db.auditEntry.findMany({ where: { id: { in: rows.map((row) => row.auditEntryId) } }, orderBy: { id: "asc" } });
    const result = entries.length > 0 ? await attempt(ctx, sink, entries) : null;
    const ids = rows.map((row) => row.id);
    if (!result || deliveredOf(result)) {
      await ctx.transaction(async (tx) => {
        await tx.db.auditSinkEvent.deleteMany({ where: { id: { in: ids } } });
        // The claim is renewed with each batch delivered.
        await tx.db.auditSink.updateMany({
          where: { id: sink.id, drainLease: lease },
          data: { deliveredCount: { increment: entries.length }, lastDeliveredAt: new Date(), lastError: null, blockedUntil: null, drainingUntil: new Date(Date.now() + AUDIT_STREAM_LEASE_MS) },
        });
      });
      continue;
    }
    const reason = reasonOf(result);
    const wait = schedule[head.attempts];
    const retryAt = wait === undefined ? null : new Date(Date.now() + wait * 1000);
    await ctx.db.auditSink.update({ where: { id: sink.id }, data: { lastError: reason, blockedUntil: retryAt } });
    if (wait === undefined) {
      // The last attempt failed: the batch is dead, kept for a replay, and the line moves on.
      await ctx.db.auditSinkEvent.updateMany({ where: { id: { in: ids } }, data: { status: "dead", attempts: { increment: 1 }, lastError: reason, nextAttemptAt: null } });
      ctx.logger.warn({ sinkId: sink.id, entries: ids.length, reason }, "audit sink batch dead after its last attempt");
      continue;
    }
    await ctx.db.auditSinkEvent.updateMany({
      where: { id: { in: ids } },
      data: { attempts: head.attempts + 1, lastError: reason, nextAttemptAt: retryAt },
    });
    ctx.logger.info({ sinkId: sink.id, entries: ids.length, reason, retryInSeconds: wait }, "audit sink did not take a batch; retrying");
    return;
  }
}
