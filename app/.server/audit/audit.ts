import type { Logger } from "pino";
import type { Prisma, PrismaClient } from "~/generated/prisma/client";
import type { AuditEventType } from "~/schemas/audit-events";
import { fieldChanges, isSecretValue, REDACTED } from "./diff";

/**
 * The audit trail: every authentication event and every admin write. Entries never carry a
 * secret, token or password; callers pass identifiers and reasons only.
 */
export type { AuditEventType };

export interface AuditRecord {
  eventType: AuditEventType;
  organizationId?: string | null;
  actorType: "user" | "admin" | "system" | "client" | "anonymous";
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

export interface AuditLog {
  record(entry: AuditRecord, tx?: Prisma.TransactionClient): Promise<void>;
  /** Several entries in one statement, through the write's transaction. */
  recordMany(entries: AuditRecord[], tx: Prisma.TransactionClient): Promise<void>;
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
  eventType: entry.eventType,
  organizationId: entry.organizationId ?? null,
  actorType: entry.actorType,
  actorId: entry.actorId ?? null,
  targetType: entry.targetType ?? null,
  targetId: entry.targetId ?? null,
  ip: entry.ip ?? null,
  requestId: entry.requestId ?? null,
  data: dataOf(entry) as Prisma.InputJsonValue,
  ...(entry.at ? { createdAt: entry.at } : {}),
});

export function createAuditLog(prisma: PrismaClient, logger: Logger): AuditLog {
  return {
    async record(entry, tx) {
      const db = tx ?? prisma;
      await db.auditEntry.create({ data: rowOf(entry) });
      logger.debug({ eventType: entry.eventType, organizationId: entry.organizationId }, "audit");
    },
    async recordMany(entries, tx) {
      if (entries.length === 1) await tx.auditEntry.create({ data: rowOf(entries[0]!) });
      else if (entries.length > 1) await tx.auditEntry.createMany({ data: entries.map(rowOf) });
    },
  };
}
