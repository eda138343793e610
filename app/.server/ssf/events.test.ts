import { describe, expect, it } from "vitest";
import { AUDIT_EVENTS } from "~/schemas/audit-events";
import type { WrittenAuditEntry } from "../audit/audit";
import { CREDENTIAL_CHANGE, EVENTS_SUPPORTED, eventsClaimOf, SESSION_REVOKED, SSF_EVENT_OF } from "./events";

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
      "https://schemas.openid.net/secevent/caep/event-type/credential-change",
      "https://schemas.openid.net/secevent/caep/event-type/session-revoked",
      "https://schemas.openid.net/secevent/risc/event-type/account-disabled",
      "https://schemas.openid.net/secevent/risc/event-type/account-enabled",
      "https://schemas.openid.net/secevent/risc/event-type/account-purged",
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
});
