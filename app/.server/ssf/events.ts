import type { AuditEventType } from "~/schemas/audit-events";
import type { WrittenAuditEntry } from "../audit/audit";

/**
 * The events Porta transmits over OpenID Shared Signals (decision 093): CAEP 1.0 and RISC event
 * types, each emitted from audit events that already record what happened. This table is the one
 * place that says which audit event becomes which Security Event Token; the fan-out's SQL
 * (outbox.ts) and the streams' `events_supported` are made from it.
 */
export const CAEP = "https://schemas.openid.net/secevent/caep/event-type/";
export const RISC = "https://schemas.openid.net/secevent/risc/event-type/";
export const SSF = "https://schemas.openid.net/secevent/ssf/event-type/";

export const SESSION_REVOKED = `${CAEP}session-revoked`;
export const CREDENTIAL_CHANGE = `${CAEP}credential-change`;
export const ACCOUNT_DISABLED = `${RISC}account-disabled`;
export const ACCOUNT_ENABLED = `${RISC}account-enabled`;
export const ACCOUNT_PURGED = `${RISC}account-purged`;
export const VERIFICATION = `${SSF}verification`;

/** CAEP credential-change's `credential_type` and `change_type`. */
type CredentialType = "password" | "app" | "fido2-platform" | "fido2-roaming" | "phone-sms";
type ChangeType = "create" | "revoke" | "update" | "delete";

interface Mapping {
  event: string;
  /** The event's own members besides `event_timestamp` and `initiating_entity`. */
  details?: (entry: WrittenAuditEntry) => Record<string, unknown>;
}

const credential =
  (type: CredentialType | ((entry: WrittenAuditEntry) => CredentialType), change: ChangeType) =>
  (entry: WrittenAuditEntry): Record<string, unknown> => ({
    credential_type: typeof type === "function" ? type(entry) : type,
    change_type: change,
  });

/** A second factor's method in the entry's data: a passkey is a platform or roaming FIDO2 key; a code is an app. */
function secondFactorType(entry: WrittenAuditEntry): CredentialType {
  const data = entry.data as Record<string, unknown> | null;
  if (data?.method === "passkey") return "fido2-platform";
  return "app";
}

/** A passkey as the entry describes it: `singleDevice` is a security key, a synced one the platform's. */
function passkeyType(entry: WrittenAuditEntry): CredentialType {
  const data = entry.data as Record<string, unknown> | null;
  return data?.deviceType === "singleDevice" ? "fido2-roaming" : "fido2-platform";
}

/**
 * Audit event → SSF event. Every entry here targets the user it is about (`targetType` user),
 * which is how the fan-out finds the streams that asked for that user.
 */
export const SSF_EVENT_OF: Partial<Record<AuditEventType, Mapping>> = {
  "auth.logout": { event: SESSION_REVOKED },
  "session.revoked": { event: SESSION_REVOKED },
  "user.sessions_revoked": { event: SESSION_REVOKED },
  "account.session_ended": { event: SESSION_REVOKED },
  "account.sessions_ended": { event: SESSION_REVOKED },

  "account.password_changed": { event: CREDENTIAL_CHANGE, details: credential("password", "update") },
  "account.password_set": { event: CREDENTIAL_CHANGE, details: credential("password", "create") },
  "auth.password_reset.completed": { event: CREDENTIAL_CHANGE, details: credential("password", "update") },
  "user.password_set": { event: CREDENTIAL_CHANGE, details: credential("password", "update") },
  "user.password_cleared": { event: CREDENTIAL_CHANGE, details: credential("password", "delete") },
  "auth.2fa.enrolled": { event: CREDENTIAL_CHANGE, details: credential(secondFactorType, "create") },
  "account.2fa.removed": { event: CREDENTIAL_CHANGE, details: credential(secondFactorType, "delete") },
  "account.2fa.email_enabled": { event: CREDENTIAL_CHANGE, details: credential("app", "create") },
  "account.2fa.email_disabled": { event: CREDENTIAL_CHANGE, details: credential("app", "delete") },
  "user.2fa.disabled": { event: CREDENTIAL_CHANGE, details: credential("app", "revoke") },
  "user.2fa.reset": { event: CREDENTIAL_CHANGE, details: credential("app", "revoke") },
  "account.passkey.added": { event: CREDENTIAL_CHANGE, details: credential(passkeyType, "create") },
  "account.passkey.removed": { event: CREDENTIAL_CHANGE, details: credential("fido2-platform", "delete") },
  "user.passkey.deleted": { event: CREDENTIAL_CHANGE, details: credential("fido2-platform", "revoke") },

  "user.deactivated": { event: ACCOUNT_DISABLED },
  "user.activated": { event: ACCOUNT_ENABLED },
  "user.deleted": { event: ACCOUNT_PURGED },
};

/** What a stream can ask for: every event this table emits (verification is always sent when asked). */
export const EVENTS_SUPPORTED: readonly string[] = [...new Set(Object.values(SSF_EVENT_OF).map((m) => m!.event))].sort();

/** CAEP's `initiating_entity`: who caused the change. */
function initiatingEntity(entry: WrittenAuditEntry): "admin" | "user" | "policy" | "system" {
  switch (entry.actorType) {
    case "admin":
    case "org_admin":
    case "scim_token":
    case "client":
      return "admin";
    case "user":
      return "user";
    case "system":
      return "system";
    default:
      return "policy";
  }
}

/** The `events` claim of the SET an audit entry becomes, or null when it becomes none. */
export function eventsClaimOf(entry: WrittenAuditEntry): Record<string, Record<string, unknown>> | null {
  const mapping = SSF_EVENT_OF[entry.eventType];
  if (!mapping) return null;
  const body: Record<string, unknown> = {
    ...(mapping.event.startsWith(CAEP) ? { event_timestamp: Math.floor(entry.createdAt.getTime() / 1000), initiating_entity: initiatingEntity(entry) } : {}),
    ...mapping.details?.(entry),
  };
  return { [mapping.event]: body };
}
