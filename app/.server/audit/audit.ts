import type { Logger } from "pino";
import type { Prisma, PrismaClient } from "~/generated/prisma/client";
import type { AuditEventType } from "~/schemas/audit-events";

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
  /** When it happened; by default when the row is written. */
  at?: Date;
}

export interface AuditLog {
  record(entry: AuditRecord, tx?: Prisma.TransactionClient): Promise<void>;
  /** Several entries in one statement, through the write's transaction. */
  recordMany(entries: AuditRecord[], tx: Prisma.TransactionClient): Promise<void>;
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
  data: (entry.data ?? {}) as Prisma.InputJsonValue,
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
