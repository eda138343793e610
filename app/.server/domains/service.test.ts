import { describe, expect, it } from "vitest";
import { applyCheck, checkAuditEntry, LAPSE_AFTER_MS } from "./service";

const DAY = 24 * 60 * 60_000;
const t0 = new Date("2026-12-01T00:00:00Z");
const at = (ms: number) => new Date(t0.getTime() + ms);
const verified = { status: "verified", verifiedAt: t0, failures: 0, failingSince: null };
const row = { id: "d", organizationId: "o", domain: "corp.example" };

describe("applyCheck", () => {
  it("verifies a pending domain at the first match and keeps the first verification time after", () => {
    const first = applyCheck({ status: "pending", verifiedAt: null, failures: 2, failingSince: t0 }, { ok: true }, at(DAY));
    expect(first).toMatchObject({ transition: "verified", data: { status: "verified", verifiedAt: at(DAY), failures: 0, failingSince: null, lastError: null } });
    expect(applyCheck(verified, { ok: true }, at(DAY))).toMatchObject({ transition: null, data: { verifiedAt: t0 } });
  });

  it("lapses a verified domain only after three failures in a row over two days; a match in between starts again", () => {
    const fail = { ok: false as const, error: "no TXT record" };
    const one = applyCheck(verified, fail, at(0));
    expect(one).toMatchObject({ transition: null, data: { status: "verified", failures: 1, failingSince: at(0) } });
    const two = applyCheck({ ...verified, ...one.data }, fail, at(DAY));
    // Three quick failures (an administrator pressing the button) do not lapse it.
    const quick = applyCheck({ ...verified, ...two.data }, fail, at(DAY + 60_000));
    expect(quick).toMatchObject({ transition: null, data: { status: "verified", failures: 3 } });
    const three = applyCheck({ ...verified, ...two.data }, fail, at(LAPSE_AFTER_MS));
    expect(three).toMatchObject({ transition: "lapsed", data: { status: "lapsed", verifiedAt: null, failures: 3, lastError: "no TXT record" } });
    const healed = applyCheck({ ...verified, ...two.data }, { ok: true }, at(LAPSE_AFTER_MS));
    expect(healed).toMatchObject({ transition: null, data: { status: "verified", failures: 0, failingSince: null } });
  });

  it("leaves a pending domain pending however often it fails", () => {
    let state = { status: "pending", verifiedAt: null as Date | null, failures: 0, failingSince: null as Date | null };
    for (let i = 0; i < 10; i++) state = { ...state, ...applyCheck(state, { ok: false, error: "e" }, at(i * DAY)).data };
    expect(state).toMatchObject({ status: "pending", failures: 10 });
  });
});

describe("checkAuditEntry", () => {
  it("audits changes of status always, and an administrator's checks that change nothing", () => {
    const fail = applyCheck(verified, { ok: false, error: "e" }, t0);
    expect(checkAuditEntry(row, fail, "schedule")).toBeNull();
    expect(checkAuditEntry(row, fail, "api")).toMatchObject({ eventType: "domain.check_failed", data: { error: "e" } });
    expect(checkAuditEntry(row, applyCheck(verified, { ok: true }, t0), "api")).toMatchObject({ eventType: "domain.verified", data: { reconfirmed: true } });
    expect(checkAuditEntry(row, applyCheck({ ...verified, status: "lapsed" }, { ok: true }, t0), "schedule")).toMatchObject({ eventType: "domain.verified", data: { trigger: "schedule" } });
  });
});
