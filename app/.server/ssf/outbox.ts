import type { Logger } from "pino";
import { Prisma } from "~/generated/prisma/client";
import type { AuditFanOut, WrittenAuditEntry } from "../audit/audit";
import { newUuidV7 } from "../db/ids";
import type { JobQueue } from "../jobs/queue";
import type { AuditEventType } from "~/schemas/audit-events";
import { ASSURANCE_LEVEL_CHANGE, eventsClaimsOf, mayChangeAssurance, SSF_EVENT_OF, ssfEventsOf } from "./events";
import { PUSH, type SubjectId } from "./subjects";

/**
 * The Shared Signals outbox (decision 093), the audit writer's second fan-out beside the webhook
 * outbox: in the transaction that writes an entry about a user, each stream of the entry's
 * organization that is enabled or paused, belongs to an active client, delivers one of the entry's
 * SSF events and added that user as a subject gets one Security Event Token row per event it
 * delivers (a SET carries one event); a push stream that is enabled also gets its job,
 * handed to the queue at the commit. The SET is signed when it is first sent or polled
 * (deliver.ts): signing needs the organization's private key, which is read and decrypted there,
 * not inside the write.
 */
export interface SsfTarget {
  id: string;
  organizationId: string;
  audience: string;
  deliveryMethod: string;
  status: string;
  subject: SubjectId;
  eventsDelivered: string[];
}

/** The audit event → SSF events table as SQL: the events the entry may become, or NULL. */
const ssfEventsOfEntry = Prisma.sql`(CASE "AuditEntry"."eventType" ${Prisma.join(
  Object.keys(SSF_EVENT_OF).map((audit) => Prisma.sql`WHEN ${audit} THEN ARRAY[${Prisma.join(ssfEventsOf(audit as AuditEventType).map((e) => Prisma.sql`${e}::text`))}]`),
  " ",
)} ELSE NULL END)`;

/**
 * The streams an inserted entry reaches (audit/audit.ts runs it in the INSERT): one per stream,
 * with the first subject it added for the user (a stream may name one person by two formats).
 */
const STREAMS_OF_ENTRY = Prisma.sql`COALESCE((
  SELECT json_agg(json_build_object('id', t."id", 'organizationId', t."organizationId", 'audience', t."audience", 'deliveryMethod', t."deliveryMethod", 'status', t."status", 'subject', t."subject", 'eventsDelivered', t."eventsDelivered"))
  FROM (
    SELECT DISTINCT ON (s."id") s."id", s."organizationId", s."audience", s."deliveryMethod", s."status", sub."subject", s."eventsDelivered"
    FROM "SsfStream" s
    JOIN "SsfSubject" sub ON sub."streamId" = s."id"
    -- A receiver whose client was deactivated or deleted hears nothing more.
    JOIN "Client" c ON c."id" = s."clientId" AND c."organizationId" = s."organizationId" AND c."status" = 'active'
    WHERE "AuditEntry"."targetType" = 'user'
      AND s."organizationId" = "AuditEntry"."organizationId"
      AND s."status" IN ('enabled', 'paused')
      AND sub."userId"::text = "AuditEntry"."targetId"
      AND s."eventsDelivered" && ${ssfEventsOfEntry}
    ORDER BY s."id", sub."createdAt"
  ) t
), '[]'::json)`;

export function createSsfOutbox(jobs: JobQueue, logger: Logger, issuerOf: (organizationSlug: string) => string): AuditFanOut<SsfTarget> {
  return { targetsOf: STREAMS_OF_ENTRY, deliver };
  async function deliver(written: Array<{ entry: WrittenAuditEntry; targets: SsfTarget[] }>, tx: Prisma.TransactionClient): Promise<string[]> {
    const organizationIds = [...new Set(written.map((w) => w.entry.organizationId).filter((id): id is string => id !== null))];
    const organizations = await tx.organization.findMany({ where: { id: { in: organizationIds } }, select: { id: true, slug: true } });
    const issuers = new Map(organizations.map((o) => [o.id, issuerOf(o.slug)]));
    const factors = await aalFactorsAfter(
      tx,
      written.flatMap(({ entry, targets }) =>
        entry.targetId && mayChangeAssurance(entry.eventType) && targets.some((t) => t.eventsDelivered.includes(ASSURANCE_LEVEL_CHANGE)) ? [entry.targetId] : [],
      ),
    );
    const rows: Array<{ id: string; streamId: string; auditEntryId: string; claims: Prisma.InputJsonValue; push: boolean }> = [];
    for (const { entry, targets } of written) {
      const issuer = entry.organizationId ? issuers.get(entry.organizationId) : undefined;
      if (!issuer) continue;
      const claims = eventsClaimsOf(entry, entry.targetId ? factors.get(entry.targetId) : undefined);
      for (const stream of targets) for (const events of claims.filter((c) => Object.keys(c).every((e) => stream.eventsDelivered.includes(e)))) {
        const jti = newUuidV7();
        rows.push({
          id: jti,
          streamId: stream.id,
          auditEntryId: entry.id,
          claims: {
            iss: issuer,
            aud: stream.audience,
            iat: Math.floor(entry.createdAt.getTime() / 1000),
            jti,
            // The request that caused it, or the audit entry: one action's SETs share it (SSF 1.0 §4.1.3).
            txn: entry.requestId ?? entry.id,
            sub_id: stream.subject as unknown as Prisma.InputJsonValue,
            events,
          } as Prisma.InputJsonObject,
          push: stream.deliveryMethod === PUSH && stream.status === "enabled",
        });
      }
    }
    if (rows.length === 0) return [];
    await tx.ssfEvent.createMany({ data: rows.map(({ push: _push, ...row }) => row) });
    const jobIds: string[] = [];
    for (const row of rows.filter((r) => r.push)) {
      const jobId = await jobs.enqueueIn(tx, "ssf-push", { eventId: row.id });
      if (jobId) jobIds.push(jobId);
      else {
        logger.warn({ ssfEventId: row.id }, "SSF push queue full; event kept as dead");
        await tx.ssfEvent.update({ where: { id: row.id }, data: { status: "dead", lastError: "queue_full" } });
      }
    }
    return jobIds;
  }
}

/**
 * How many authenticators beyond a password each user has now: an enrolled authenticator app,
 * email codes, and passkeys (Porta counts each as a second factor, `amr` mfa). Read inside the
 * write's transaction after the write, so one added or removed there is already counted or gone
 * (a transaction that wrote two such entries for one person sees the state after both).
 */
async function aalFactorsAfter(tx: Prisma.TransactionClient, userIds: string[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  if (userIds.length === 0) return counts;
  const rows = await tx.$queryRaw<Array<{ id: string; factors: number }>>`
    SELECT u."id",
      ((SELECT count(*) FROM "TotpCredential" t WHERE t."userId" = u."id" AND t."status" = 'enrolled')
       + (CASE WHEN u."emailOtpEnabled" THEN 1 ELSE 0 END)
       + (SELECT count(*) FROM "Passkey" p WHERE p."userId" = u."id"))::int AS "factors"
    FROM "User" u WHERE u."id" = ANY(${[...new Set(userIds)]}::uuid[])`;
  for (const row of rows) counts.set(row.id, row.factors);
  return counts;
}
