import type { AuditEventType } from "~/schemas/audit-events";
import type { Context } from "../context";
import type { SignedIn } from "./session";

/**
 * Recent security events of a person's account, from the audit log: sign-ins, second factors,
 * password changes and resets, sessions ended, and what administrators changed about them.
 */
export const SECURITY_EVENTS = [
  "auth.login.success",
  "auth.2fa.verified",
  "auth.2fa.failed",
  "auth.2fa.enrolled",
  "auth.password_reset.completed",
  "account.password_changed",
  "account.password_set",
  "account.2fa.removed",
  "account.2fa.email_enabled",
  "account.2fa.email_disabled",
  "account.2fa.recovery_codes_regenerated",
  "account.passkey.added",
  "account.passkey.removed",
  "account.session_ended",
  "account.sessions_ended",
  "user.password_set",
  "user.password_cleared",
  "user.sessions_revoked",
  "user.2fa.disabled",
  "user.passkey.deleted",
  "user.2fa.reset",
  "user.2fa.recovery_codes_regenerated",
  "user.impersonated",
] as const satisfies readonly AuditEventType[];

export type SecurityEventName = (typeof SECURITY_EVENTS)[number];

export interface SecurityEvent {
  at: string;
  event: SecurityEventName;
  /** The method of a sign-in or a second factor, when the entry names one. */
  method: string | null;
  ip: string | null;
  /** An administrator did it, not the person. */
  byAdmin: boolean;
  /** An impersonation (decision 053): the administrator who acted as the person, and why. */
  impersonation: { by: string; reason: string } | null;
}

export const RECENT_EVENTS = 20;

export async function recentSecurityEvents(ctx: Context, access: SignedIn): Promise<SecurityEvent[]> {
  const rows = await ctx.db.auditEntry.findMany({
    where: { targetType: "user", targetId: access.user.id, organizationId: access.organization.id, eventType: { in: [...SECURITY_EVENTS] } },
    orderBy: { createdAt: "desc" },
    take: RECENT_EVENTS,
    select: { createdAt: true, eventType: true, actorType: true, ip: true, data: true },
  });
  return rows.map((row) => {
    const data = (row.data ?? {}) as { method?: unknown; secondFactor?: unknown; adminEmail?: unknown; reason?: unknown };
    const method = typeof data.secondFactor === "string" ? data.secondFactor : typeof data.method === "string" ? data.method : null;
    const impersonation =
      row.eventType === "user.impersonated" ? { by: typeof data.adminEmail === "string" ? data.adminEmail : "", reason: typeof data.reason === "string" ? data.reason : "" } : null;
    // The administrator's address is not the person's own network: it is not shown as "from".
    return { at: row.createdAt.toISOString(), event: row.eventType as SecurityEventName, method, ip: impersonation ? null : row.ip, byAdmin: row.actorType === "admin", impersonation };
  });
}
