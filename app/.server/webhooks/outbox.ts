import type { Logger } from "pino";
import { Prisma } from "~/generated/prisma/client";
import type { AuditFanOut, WebhookTarget, WrittenAuditEntry } from "../audit/audit";
import { newUuidV7 } from "../db/ids";
import type { JobQueue } from "../jobs/queue";
import { webhookFilterMatches } from "~/schemas/webhook";

/**
 * The webhook outbox (decision 047): the audit writer calls this in the transaction that writes
 * the entries, with the endpoints their INSERT returned, so each enabled endpoint of the entry's
 * organization whose filter takes the event gets a delivery row and a queued job exactly when the
 * write commits. A rolled-back write sends nothing; a committed one always sends (the job outbox
 * hands over what a crash left).
 */

/** The body a receiver gets, per Standard Webhooks: `type`, `timestamp`, `data`. */
export function payloadOf(entry: WrittenAuditEntry): string {
  return JSON.stringify({
    type: entry.eventType,
    timestamp: entry.createdAt.toISOString(),
    data: {
      auditEntryId: entry.id,
      organizationId: entry.organizationId,
      actor: { type: entry.actorType, id: entry.actorId },
      target: entry.targetType ? { type: entry.targetType, id: entry.targetId } : null,
      requestId: entry.requestId,
      // The entry's own data, already without secret values (audit/diff.ts).
      details: entry.data,
    },
  });
}

/** The enabled endpoints of the inserted entry's organization (audit/audit.ts runs it in the INSERT). */
const ENABLED_ENDPOINTS = Prisma.sql`COALESCE((
  SELECT json_agg(json_build_object('id', e."id", 'eventTypes', e."eventTypes"))
  FROM "WebhookEndpoint" e
  WHERE e."organizationId" = "AuditEntry"."organizationId" AND e."enabled"
), '[]'::json)`;

export function createWebhookOutbox(jobs: JobQueue, logger: Logger): AuditFanOut<WebhookTarget> {
  return { targetsOf: ENABLED_ENDPOINTS, deliver };
  async function deliver(written: Array<{ entry: WrittenAuditEntry; targets: WebhookTarget[] }>, tx: Prisma.TransactionClient): Promise<string[]> {
    const deliveries = written.flatMap(({ entry, targets }) =>
      targets
        .filter((endpoint) => entry.organizationId !== null && webhookFilterMatches(endpoint.eventTypes, entry.eventType))
        .map((endpoint) => ({
          id: newUuidV7(),
          endpointId: endpoint.id,
          organizationId: entry.organizationId!,
          eventType: entry.eventType,
          auditEntryId: entry.id,
          payload: payloadOf(entry),
        })),
    );
    if (deliveries.length === 0) return [];
    await tx.webhookDelivery.createMany({ data: deliveries });
    const jobIds: string[] = [];
    for (const delivery of deliveries) {
      const jobId = await jobs.enqueueIn(tx, "webhook", { deliveryId: delivery.id });
      if (jobId) jobIds.push(jobId);
      else {
        // The queue is full: the delivery is kept as dead, for a replay once the queue drains.
        logger.warn({ deliveryId: delivery.id }, "webhook queue full; delivery kept as dead");
        await tx.webhookDelivery.update({ where: { id: delivery.id }, data: { status: "dead", lastError: "queue_full" } });
      }
    }
    return jobIds;
  }
}
