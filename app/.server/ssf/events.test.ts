import { describe, expect, it } from "vitest";
import { AUDIT_EVENTS } from "~/schemas/audit-events";
import type { WrittenAuditEntry } from "../audit/audit";
import { ASSURANCE_LEVEL_CHANGE, CREDENTIAL_CHANGE, CREDENTIAL_COMPROMISE, EVENTS_SUPPORTED, eventsClaimsOf, SESSION_REVOKED, SSF_EVENT_OF } from "./events";

/** The one SET an entry becomes (the test fails when it becomes none or several). */
const eventsClaimOf = (e: WrittenAuditEntry) => {
  const claims = eventsClaimsOf(e);
  if (claims.length > 1) throw new Error(`${e.eventType} became ${claims.length} SETs`);
  return claims[0] ?? null;
};

const entry = (eventType: string, overrides: Partial<WrittenAuditEntry> = {}): WrittenAuditEntry =>
  ({
    id: "0190a000-0000-7000-8000-000000000000",
    eventType,
    organizationId: "0190a000-0000-7000-8000-000000000001",
    actorType: "admin",
    actorId: "a",
    targetType: "user",
    targetId: "u",
    ip: null,
    requestId: "r",
    data: {},
    createdAt: new Date("2026-12-03T08:00:00.500Z"),
    ...overrides,
  }) as WrittenAuditEntry;

describe("the audit event → SSF event table", () => {
  it("maps only audit events that exist, and offers exactly the events it can emit", () => {
    for (const type of Object.keys(SSF_EVENT_OF)) expect(Object.hasOwn(AUDIT_EVENTS, type), type).toBe(true);
    expect(EVENTS_SUPPORTED).toEqual([
      "https://schemas.openid.net/secevent/caep/event-type/assurance-level-change",
      "https://schemas.openid.net/secevent/caep/event-type/credential-change",
      "https://schemas.openid.net/secevent/caep/event-type/session-revoked",
      "https://schemas.openid.net/secevent/risc/event-type/account-disabled",
      "https://schemas.openid.net/secevent/risc/event-type/account-enabled",
      "https://schemas.openid.net/secevent/risc/event-type/account-purged",
      "https://schemas.openid.net/secevent/risc/event-type/credential-compromise",
    ]);
  });

  it("gives CAEP events a timestamp in seconds and who initiated them; RISC events carry no members of their own", () => {
    expect(eventsClaimOf(entry("user.sessions_revoked"))).toEqual({ [SESSION_REVOKED]: { event_timestamp: 1796284800, initiating_entity: "admin" } });
    expect(eventsClaimOf(entry("auth.logout", { actorType: "user" }))![SESSION_REVOKED]).toMatchObject({ initiating_entity: "user" });
    expect(eventsClaimOf(entry("user.deactivated"))).toEqual({ "https://schemas.openid.net/secevent/risc/event-type/account-disabled": {} });
    expect(eventsClaimOf(entry("user.updated"))).toBeNull();
  });

  it("names the credential and the change: a password update, a passkey second factor, a security key added, a second factor reset", () => {
    expect(eventsClaimOf(entry("account.password_changed"))![CREDENTIAL_CHANGE]).toMatchObject({ credential_type: "password", change_type: "update" });
    expect(eventsClaimOf(entry("auth.2fa.enrolled", { data: { method: "passkey" } }))![CREDENTIAL_CHANGE]).toMatchObject({ credential_type: "fido2-platform", change_type: "create" });
    expect(eventsClaimOf(entry("auth.2fa.enrolled", { data: { method: "totp" } }))![CREDENTIAL_CHANGE]).toMatchObject({ credential_type: "app", change_type: "create" });
    expect(eventsClaimOf(entry("account.passkey.added", { data: { deviceType: "singleDevice" } }))![CREDENTIAL_CHANGE]).toMatchObject({ credential_type: "fido2-roaming" });
    expect(eventsClaimOf(entry("user.2fa.reset"))![CREDENTIAL_CHANGE]).toMatchObject({ credential_type: "app", change_type: "revoke" });
  });

  it("tells of a reported compromise as credential-compromise with the administrator's note, and also as the password's removal and the sessions' end", () => {
    const claims = eventsClaimsOf(entry("user.credential_compromised", { data: { credentialType: "password", reason: "Found in a paste site" } }));
    expect(claims).toEqual([
      { [CREDENTIAL_COMPROMISE]: { credential_type: "password", event_timestamp: 1796284800, reason_admin: { und: "Found in a paste site" } } },
      { [CREDENTIAL_CHANGE]: { event_timestamp: 1796284800, initiating_entity: "admin", credential_type: "password", change_type: "delete" } },
      { [SESSION_REVOKED]: { event_timestamp: 1796284800, initiating_entity: "admin" } },
    ]);
    expect(eventsClaimsOf(entry("user.credential_compromised", { data: { credentialType: "password" } }))[0]![CREDENTIAL_COMPROMISE]).not.toHaveProperty("reason_admin");
  });

  it("adds an assurance-level-change only when the write crossed the nist-aal1/nist-aal2 line", () => {
    const assuranceOf = (type: string, factorsAfter: number | undefined, overrides: Partial<WrittenAuditEntry> = {}) =>
      eventsClaimsOf(entry(type, overrides), factorsAfter).find((c) => ASSURANCE_LEVEL_CHANGE in c)?.[ASSURANCE_LEVEL_CHANGE];
    // The first second factor: aal1 → aal2, by the user.
    expect(assuranceOf("auth.2fa.enrolled", 1, { actorType: "user", data: { method: "totp" } })).toEqual({
      event_timestamp: 1796284800,
      initiating_entity: "user",
      namespace: "NIST-AAL",
      current_level: "nist-aal2",
      previous_level: "nist-aal1",
      change_direction: "increase",
    });
    // A second one: still aal2, so only the credential-change.
    expect(assuranceOf("account.passkey.added", 2)).toBeUndefined();
    expect(eventsClaimsOf(entry("account.passkey.added"), 2)).toHaveLength(1);
    // The last one gone, by an administrator: aal2 → aal1.
    expect(assuranceOf("user.2fa.disabled", 0, { data: { removed: ["totp", "email"] } })).toMatchObject({ initiating_entity: "admin", current_level: "nist-aal1", previous_level: "nist-aal2", change_direction: "decrease" });
    expect(assuranceOf("account.2fa.removed", 1)).toBeUndefined();
    // An administrator's reset of a user who had no authenticator app lowers nothing.
    expect(assuranceOf("user.2fa.reset", 0, { data: { removed: [] } })).toBeUndefined();
    expect(assuranceOf("user.2fa.reset", 0, { data: { removed: ["totp"] } })).toMatchObject({ change_direction: "decrease" });
    // Without the count (no stream asked for it) there is none.
    expect(assuranceOf("auth.2fa.enrolled", undefined)).toBeUndefined();
    // Events that do not touch factors never carry one, whatever the count.
    expect(assuranceOf("account.password_changed", 0)).toBeUndefined();
    expect(assuranceOf("user.deactivated", 1)).toBeUndefined();
  });
});
