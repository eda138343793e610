import type { Logger } from "pino";
import type { Database } from "../db/client";
import type { JobQueue } from "../jobs/queue";
import { AUDIT_STREAM_QUEUE } from "./outbox";

/**
 * The audit stream's safety net (decision 092): every few seconds, and once at start, a drain is
 * asked for each sink with entries due (a retry whose wait is over, rows a crash or a full queue
 * left, a claim that lapsed with its process). One indexed query when nothing is due.
 */
export const AUDIT_STREAM_SWEEP_MS = 5_000;

export function startAuditStreamSweep(db: Database, jobs: JobQueue, logger: Logger, intervalMs = AUDIT_STREAM_SWEEP_MS): { stop(): void } {
  let running = false;
  async function sweep() {
    if (running) return;
    running = true;
    try {
      const due = await db.prisma.$queryRaw<Array<{ sinkId: string }>>`
        SELECT DISTINCT e."sinkId"::text AS "sinkId" FROM "AuditSinkEvent" e JOIN "AuditSink" s ON s."id" = e."sinkId"
        WHERE e."status" = 'pending' AND (e."nextAttemptAt" IS NULL OR e."nextAttemptAt" <= now())
          AND s."enabled" AND (s."drainingUntil" IS NULL OR s."drainingUntil" < now())`;
      for (const { sinkId } of due) await jobs.enqueue(AUDIT_STREAM_QUEUE, { sinkId });
    } catch (error) {
      logger.warn({ err: { message: (error as Error).message } }, "could not look for audit sinks to drain");
    } finally {
      running = false;
    }
  }
  const timer = setInterval(() => void sweep(), intervalMs);
  timer.unref();
  void sweep();
  return { stop: () => clearInterval(timer) };
}
