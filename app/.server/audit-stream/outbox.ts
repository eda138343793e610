import type { Logger } from "pino";
import { Prisma } from "~/generated/prisma/client";
import type { AuditFanOut, WrittenAuditEntry } from "../audit/audit";
import { newUuidV7 } from "../db/ids";
import type { JobQueue } from "../jobs/queue";

/**
 * The audit stream's outbox (decision 092), one of the audit writer's fan-outs beside the webhook
 * outbox: the entries' INSERT names, per entry, the enabled sinks that take it (its organization's,
 * and the deployment's, which take every entry), filtered by event family in the same statement;
 * this writes one row per (sink, entry) in the entry's transaction and asks for a drain of each
 * sink that has no drain waiting yet. Nothing here touches the network: a sink that is down costs
 * a sign-in nothing more than one that is up.
 */
export const AUDIT_STREAM_QUEUE = "audit-stream";

/** A sink that takes the entry, and whether its line can move now (not waiting for a retry). */
export interface SinkTarget {
  id: string;
  due: boolean;
}

/** The sinks that take the inserted entry (audit/audit.ts runs it in the INSERT). */
const SINKS_OF_ENTRY = Prisma.sql`COALESCE((
  SELECT json_agg(json_build_object('id', s."id", 'due', s."blockedUntil" IS NULL OR s."blockedUntil" <= now()))
  FROM "AuditSink" s
  WHERE s."enabled"
    AND (s."organizationId" IS NULL OR s."organizationId" = "AuditEntry"."organizationId")
    AND (cardinality(s."eventFamilies") = 0 OR split_part("AuditEntry"."eventType", '.', 1) || '.*' = ANY(s."eventFamilies"))
), '[]'::json)`;

export function createAuditStreamOutbox(jobs: JobQueue, logger: Logger): AuditFanOut<SinkTarget> {
  return { targetsOf: SINKS_OF_ENTRY, deliver };
  async function deliver(written: Array<{ entry: WrittenAuditEntry; targets: SinkTarget[] }>, tx: Prisma.TransactionClient): Promise<string[]> {
    const rows = written.flatMap(({ entry, targets }) =>
      targets.map((sink) => ({ id: newUuidV7(), sinkId: sink.id, auditEntryId: entry.id, organizationId: entry.organizationId, eventType: entry.eventType })),
    );
    if (rows.length === 0) return [];
    await tx.auditSinkEvent.createMany({ data: rows });
    // A sink whose line waits for a retry (it is down, or refusing) gets no drain from a write: the
    // sweep asks for one when the retry is due, so a sink that is down costs a sign-in one INSERT.
    const sinkIds = [...new Set(written.flatMap(({ targets }) => targets.filter((sink) => sink.due).map((sink) => sink.id)))];
    if (sinkIds.length === 0) return [];
    // A drain not yet started takes these rows too: under a stream of sign-ins most writes queue none.
    const waiting = await tx.$queryRaw<Array<{ sinkId: string }>>`
      SELECT DISTINCT o."payload"->>'sinkId' AS "sinkId" FROM "JobOutbox" o WHERE o."queue" = ${AUDIT_STREAM_QUEUE} AND o."payload"->>'sinkId' = ANY(${sinkIds}::text[])
      UNION
      SELECT DISTINCT j.data->>'sinkId' FROM pgboss.job j WHERE j.name = ${AUDIT_STREAM_QUEUE} AND j.state = 'created' AND j.data->>'sinkId' = ANY(${sinkIds}::text[])`;
    const queued = new Set(waiting.map((row) => row.sinkId));
    const jobIds: string[] = [];
    for (const sinkId of sinkIds) {
      if (queued.has(sinkId)) continue;
      const jobId = await jobs.enqueueIn(tx, AUDIT_STREAM_QUEUE, { sinkId });
      // A full queue: the rows wait, and the periodic sweep (sweep.ts) asks for their drain.
      if (jobId) jobIds.push(jobId);
      else logger.warn({ sinkId }, "audit stream queue full; the sweep will drain the sink");
    }
    return jobIds;
  }
}
