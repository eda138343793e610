import type { Logger } from "pino";
import { Prisma, type PrismaClient } from "~/generated/prisma/client";
import type { AuditEventType } from "~/schemas/audit-events";
import { newUuidV7 } from "../db/ids";
import { fieldChanges, isSecretValue, REDACTED } from "./diff";

/**
 * The audit trail: every authentication event and every admin write. Entries never carry a
 * secret, token or password; callers pass identifiers and reasons only.
 */
export type { AuditEventType };

export interface AuditRecord {
  eventType: AuditEventType;
  organizationId?: string | null;
  /** `scim_token`: a provisioning client, by the id of the SCIM token it presented (decision 084). */
  actorType: "user" | "admin" | "org_admin" | "setup_link" | "system" | "client" | "anonymous" | "scim_token";
  actorId?: string | null;
  targetType?: string | null;
  targetId?: string | null;
  ip?: string | null;
  requestId?: string | null;
  data?: Record<string, unknown>;
  /**
   * An update's target as it was and as it is now (its public shape): the entry records only
   * the fields that differ, as `data.changes` (decision 039). Secret fields are named, never valued.
   */
  changes?: { before: object; after: object };
  /** When it happened; by default when the row is written. */
  at?: Date;
}

/** An entry as written: what the audit trail keeps, and what a webhook carries. */
export type WrittenAuditEntry = ReturnType<typeof rowOf>;

/**
 * What else an entry causes in its own transaction: the webhook outbox (webhooks/outbox.ts,
 * decision 047) and every other consumer of the trail that must see each committed entry exactly
 * when it commits. A fan-out names, as SQL over the inserted `"AuditEntry"` row, the JSON array of
 * its targets for that entry (an organization's enabled endpoints, say): the entries' INSERT returns
 * every fan-out's targets in the same statement, so a write in an organization without any costs no
 * extra round trip. `deliver` gets the entries that have at least one target and returns the ids of
 * the jobs to hand to the queue once the transaction commits.
 */
export interface AuditFanOut<T = unknown> {
  /** A correlated subquery yielding a JSON array (never NULL: `COALESCE(..., '[]'::json)`). */
  targetsOf: Prisma.Sql;
  // A method, so a fan-out of its own target type is one of `AuditFanOut[]` (handed what its SQL returned).
  deliver(written: Array<{ entry: WrittenAuditEntry; targets: T[] }>, tx: Prisma.TransactionClient): Promise<string[]>;
}

/** An enabled webhook endpoint of the entry's organization, as the entry's INSERT returns it. */
export interface WebhookTarget {
  id: string;
  eventTypes: string[];
}

export interface AuditLog {
  /** One entry; without a transaction, it and what it causes are written in one of their own. */
  record(entry: AuditRecord, tx?: Prisma.TransactionClient): Promise<string[]>;
  /**
   * Several entries in one statement, through the write's transaction, with the webhook
   * deliveries they cause. Returns the job ids to hand over after the commit.
   */
  recordMany(entries: AuditRecord[], tx: Prisma.TransactionClient): Promise<string[]>;
}

/** A request body recorded as `change` keeps its secret fields' names only (defence in depth). */
function withoutSecrets(change: unknown): unknown {
  if (!change || typeof change !== "object" || Array.isArray(change)) return change;
  return Object.fromEntries(Object.entries(change).map(([k, v]) => [k, isSecretValue(k, v) ? REDACTED : v]));
}

function dataOf(entry: AuditRecord): Record<string, unknown> {
  const data: Record<string, unknown> = { ...entry.data };
  if ("change" in data) data.change = withoutSecrets(data.change);
  if (entry.changes) data.changes = fieldChanges(entry.changes.before as Record<string, unknown>, entry.changes.after as Record<string, unknown>);
  return data;
}

const rowOf = (entry: AuditRecord) => ({
  // Chosen here (a UUIDv7, as the column's default) so a webhook can name the entry it reports.
  id: newUuidV7(),
  eventType: entry.eventType,
  organizationId: entry.organizationId ?? null,
  actorType: entry.actorType,
  actorId: entry.actorId ?? null,
  targetType: entry.targetType ?? null,
  targetId: entry.targetId ?? null,
  ip: entry.ip ?? null,
  requestId: entry.requestId ?? null,
  data: dataOf(entry) as Prisma.InputJsonValue,
  createdAt: entry.at ?? new Date(),
});

export function createAuditLog(prisma: PrismaClient, logger: Logger, fanOuts: readonly AuditFanOut[] = []): AuditLog {
  async function recordMany(entries: AuditRecord[], tx: Prisma.TransactionClient): Promise<string[]> {
    if (entries.length === 0) return [];
    const rows = entries.map(rowOf);
    // One statement writes the entries and reads, in the same transaction, each fan-out's targets
    // for each entry (decision 047): a target made earlier in this transaction is seen.
    const values = Prisma.join(
      rows.map(
        (r) =>
          Prisma.sql`(${r.id}::uuid, ${r.eventType}, ${r.organizationId}::uuid, ${r.actorType}, ${r.actorId}, ${r.targetType}, ${r.targetId}, ${r.ip}, ${r.requestId}, ${JSON.stringify(r.data)}::jsonb, ${r.createdAt}::timestamptz)`,
      ),
    );
    const targetColumns = fanOuts.length === 0 ? Prisma.empty : Prisma.sql`, ${Prisma.join(fanOuts.map((f, i) => Prisma.sql`${f.targetsOf} AS ${Prisma.raw(`"t${i}"`)}`))}`;
    const returned = await tx.$queryRaw<Array<Record<string, unknown> & { id: string }>>`
      INSERT INTO "AuditEntry" ("id", "eventType", "organizationId", "actorType", "actorId", "targetType", "targetId", "ip", "requestId", "data", "createdAt")
      VALUES ${values}
      RETURNING "id"::text AS "id"${targetColumns}`;
    const byId = new Map(returned.map((r) => [r.id, r]));
    const jobIds: string[] = [];
    for (const [i, fanOut] of fanOuts.entries()) {
      const written = rows
        .map((entry) => ({ entry, targets: (byId.get(entry.id)?.[`t${i}`] ?? []) as unknown[] }))
        .filter((w) => w.targets.length > 0);
      if (written.length > 0) jobIds.push(...(await fanOut.deliver(written, tx)));
    }
    return jobIds;
  }
  return {
    async record(entry, tx) {
      const jobIds = tx ? await recordMany([entry], tx) : await prisma.$transaction((own) => recordMany([entry], own));
      logger.debug({ eventType: entry.eventType, organizationId: entry.organizationId }, "audit");
      return jobIds;
    },
    recordMany,
  };
}
