import { z } from "zod";
import { defineJob } from "../jobs/job";
import { drainAuditSinkJob } from "./drain";

/**
 * The drain of one audit sink (drain.ts, decisions 072 and 092). Its retry schedule is the sink's
 * backoff between attempts at a batch (kept on the batch's rows, not by the queue: a failed batch
 * ends the job, and the sweep asks for the next drain when the batch is due). The queue retries
 * the job itself only when it could not run (the database away, the process gone).
 */
const auditStreamPayload = z.object({ sinkId: z.string() });

declare module "../jobs/job" {
  interface JobPayloadSchemas {
    "audit-stream": typeof auditStreamPayload;
  }
}

/** Seconds between attempts at a batch: about a day in all, then it is dead. */
export const AUDIT_STREAM_RETRY_SCHEDULE_SECONDS: readonly number[] = [5, 30, 2 * 60, 10 * 60, 30 * 60, 3600, 3 * 3600, 6 * 3600, 12 * 3600];

export const auditStreamJob = defineJob({
  name: "audit-stream",
  payload: auditStreamPayload,
  handler: drainAuditSinkJob,
  retrySchedule: AUDIT_STREAM_RETRY_SCHEDULE_SECONDS,
  // The rows are the record (and the dead letters); a failed job is just removed later.
  deadLetter: false,
});
