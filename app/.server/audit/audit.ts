import type { Logger } from "pino";
import type { Prisma, PrismaClient } from "~/generated/prisma/client";

/**
 * The audit trail: every authentication event and every admin write. Entries never carry a
 * secret, token or password; callers pass identifiers and reasons only.
 */
export type AuditEventType =
  | "auth.login.success"
  | "auth.login.failure"
  | "auth.magic_link.sent"
  | "auth.magic_link.verified"
  | "auth.2fa.verified"
  | "auth.2fa.failed"
  | "auth.password_reset.requested"
  | "auth.password_reset.completed"
  | "security.login_method_disabled"
  | (string & {});

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
}

export interface AuditLog {
  record(entry: AuditRecord, tx?: Prisma.TransactionClient): Promise<void>;
}

export function createAuditLog(prisma: PrismaClient, logger: Logger): AuditLog {
  return {
    async record(entry, tx) {
      const db = tx ?? prisma;
      await db.auditEntry.create({
        data: {
          eventType: entry.eventType,
          organizationId: entry.organizationId ?? null,
          actorType: entry.actorType,
          actorId: entry.actorId ?? null,
          targetType: entry.targetType ?? null,
          targetId: entry.targetId ?? null,
          ip: entry.ip ?? null,
          requestId: entry.requestId ?? null,
          data: (entry.data ?? {}) as Prisma.InputJsonValue,
        },
      });
      logger.debug({ eventType: entry.eventType, organizationId: entry.organizationId }, "audit");
    },
  };
}
