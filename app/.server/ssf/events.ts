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
export const ASSURANCE_LEVEL_CHANGE = `${CAEP}assurance-level-change`;
export const CREDENTIAL_COMPROMISE = `${RISC}credential-compromise`;
export const ACCOUNT_DISABLED = `${RISC}account-disabled`;
export const ACCOUNT_ENABLED = `${RISC}account-enabled`;
export const ACCOUNT_PURGED = `${RISC}account-purged`;
export const VERIFICATION = `${SSF}verification`;

/** CAEP credential-change's `credential_type` and `change_type`. */
type CredentialType = "password" | "app" | "fido2-platform" | "fido2-roaming" | "phone-sms";
type ChangeType = "create" | "revoke" | "update" | "delete";

/** One SSF event an audit entry may become. */
export interface Emission {
  event: string;
  /** The event's own members besides CAEP's `event_timestamp` and `initiating_entity`. */
  details?: (entry: WrittenAuditEntry) => Record<string, unknown>;
  /**
   * An assurance-level-change is emitted only when the write moved the user across the
   * nist-aal1/nist-aal2 line: "increase" when the factor the entry added is now the user's only
   * one, "decrease" when the entry left none. Only the writer's transaction knows that, so the
   * outbox counts the user's factors there (`aalFactorsAfter`) and hands the count in.
   */
  assurance?: "increase" | "decrease";
  /** Emitted only for the entries this accepts (an administrator's reset that found nothing to remove). */
  when?: (entry: WrittenAuditEntry) => boolean;
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

/** CAEP 1.0 §3.3 with the NIST-AAL namespace: the one factor added, or the last one gone. */
const assurance = (direction: "increase" | "decrease"): Emission => ({
  event: ASSURANCE_LEVEL_CHANGE,
  assurance: direction,
  details: () => ({
    namespace: "NIST-AAL",
    current_level: direction === "increase" ? "nist-aal2" : "nist-aal1",
    previous_level: direction === "increase" ? "nist-aal1" : "nist-aal2",
    change_direction: direction,
  }),
});
const GAINED = assurance("increase");
const LOST = assurance("decrease");
/** An administrator's disable or reset lowers the level only when it removed a factor (its entry's `removed`). */
const LOST_IF_REMOVED: Emission = { ...LOST, when: (entry) => Array.isArray((entry.data as Record<string, unknown> | null)?.removed) && ((entry.data as { removed: unknown[] }).removed.length > 0) };

/** RISC credential-compromise (§2.7): the credential (only a password can be reported), when, and the administrator's note as written. */
function compromise(entry: WrittenAuditEntry): Record<string, unknown> {
  const data = entry.data as Record<string, unknown> | null;
  const reason = typeof data?.reason === "string" && data.reason !== "" ? data.reason : null;
  return {
    credential_type: "password",
    event_timestamp: Math.floor(entry.createdAt.getTime() / 1000),
    // A localizable string (CAEP 1.0 §2's reason_admin); the administrator's language is not known: "und".
    ...(reason ? { reason_admin: { und: reason } } : {}),
  };
}

/**
 * Audit event → the SSF events it may become (a SET carries one event, so an entry that is more
 * than one kind of news becomes one SET per event a stream delivers). Every entry here targets
 * the user it is about (`targetType` user), which is how the fan-out finds the streams that asked
 * for that user.
 */
export const SSF_EVENT_OF: Partial<Record<AuditEventType, readonly Emission[]>> = {
  "auth.logout": [{ event: SESSION_REVOKED }],
  "session.revoked": [{ event: SESSION_REVOKED }],
  "user.sessions_revoked": [{ event: SESSION_REVOKED }],
  "account.session_ended": [{ event: SESSION_REVOKED }],
  "account.sessions_ended": [{ event: SESSION_REVOKED }],

  "account.password_changed": [{ event: CREDENTIAL_CHANGE, details: credential("password", "update") }],
  "account.password_set": [{ event: CREDENTIAL_CHANGE, details: credential("password", "create") }],
  "auth.password_reset.completed": [{ event: CREDENTIAL_CHANGE, details: credential("password", "update") }],
  "user.password_set": [{ event: CREDENTIAL_CHANGE, details: credential("password", "update") }],
  "user.password_cleared": [{ event: CREDENTIAL_CHANGE, details: credential("password", "delete") }],
  "auth.2fa.enrolled": [{ event: CREDENTIAL_CHANGE, details: credential(secondFactorType, "create") }, GAINED],
  "account.2fa.removed": [{ event: CREDENTIAL_CHANGE, details: credential(secondFactorType, "delete") }, LOST],
  "account.2fa.email_enabled": [{ event: CREDENTIAL_CHANGE, details: credential("app", "create") }, GAINED],
  "account.2fa.email_disabled": [{ event: CREDENTIAL_CHANGE, details: credential("app", "delete") }, LOST],
  "user.2fa.disabled": [{ event: CREDENTIAL_CHANGE, details: credential("app", "revoke") }, LOST_IF_REMOVED],
  "user.2fa.reset": [{ event: CREDENTIAL_CHANGE, details: credential("app", "revoke") }, LOST_IF_REMOVED],
  "account.passkey.added": [{ event: CREDENTIAL_CHANGE, details: credential(passkeyType, "create") }, GAINED],
  "account.passkey.removed": [{ event: CREDENTIAL_CHANGE, details: credential("fido2-platform", "delete") }, LOST],
  "user.passkey.deleted": [{ event: CREDENTIAL_CHANGE, details: credential("fido2-platform", "revoke") }, LOST],

  "user.credential_compromised": [
    { event: CREDENTIAL_COMPROMISE, details: compromise },
    // The same write cleared the password and ended every session: receivers that asked only for those hear it too.
    { event: CREDENTIAL_CHANGE, details: credential("password", "delete") },
    { event: SESSION_REVOKED },
  ],

  "user.deactivated": [{ event: ACCOUNT_DISABLED }],
  "user.activated": [{ event: ACCOUNT_ENABLED }],
  "user.deleted": [{ event: ACCOUNT_PURGED }],
};

/** What a stream can ask for: every event this table emits (verification is always sent when asked). */
export const EVENTS_SUPPORTED: readonly string[] = [...new Set(Object.values(SSF_EVENT_OF).flatMap((m) => m!.map((e) => e.event)))].sort();

/** The SSF events an audit event may become (the outbox's SQL selects streams by these). */
export const ssfEventsOf = (eventType: AuditEventType): string[] => [...new Set((SSF_EVENT_OF[eventType] ?? []).map((e) => e.event))];

/** Whether an audit event may change the user's assurance level (the outbox then counts their factors). */
export const mayChangeAssurance = (eventType: AuditEventType): boolean => (SSF_EVENT_OF[eventType] ?? []).some((e) => e.assurance !== undefined);

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

/**
 * The `events` claims of the SETs an audit entry becomes, one event each (SSF 1.0 §4.1: a SET
 * carries one event), in the table's order; none when it becomes none. `aalFactorsAfter` is the
 * number of the user's second factors and passkeys after the write, when the entry may change
 * the assurance level; without it no assurance-level-change is emitted.
 */
export function eventsClaimsOf(entry: WrittenAuditEntry, aalFactorsAfter?: number): Array<Record<string, Record<string, unknown>>> {
  const claims: Array<Record<string, Record<string, unknown>>> = [];
  for (const emission of SSF_EVENT_OF[entry.eventType] ?? []) {
    if (emission.assurance === "increase" && aalFactorsAfter !== 1) continue;
    if (emission.assurance === "decrease" && aalFactorsAfter !== 0) continue;
    if (emission.when && !emission.when(entry)) continue;
    const body: Record<string, unknown> = {
      ...(emission.event.startsWith(CAEP) ? { event_timestamp: Math.floor(entry.createdAt.getTime() / 1000), initiating_entity: initiatingEntity(entry) } : {}),
      ...emission.details?.(entry),
    };
    claims.push({ [emission.event]: body });
  }
  return claims;
}
