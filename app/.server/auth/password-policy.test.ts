import { describe, expect, it } from "vitest";
import { checkNewPassword } from "./password-policy";

const rules = { minLength: 8, email: "erika.mustermann@example.com", organizationName: "Acme Corp." };

describe("checkNewPassword", () => {
  it("accepts a long, uncommon password without context words", () => {
    expect(checkNewPassword("correct horse battery staple", rules)).toEqual({ ok: true });
  });

  it("refuses too short, too long and breached passwords", () => {
    expect(checkNewPassword("short1", rules)).toEqual({ ok: false, problem: "too_short", limit: 8 });
    expect(checkNewPassword("x".repeat(1025), rules)).toMatchObject({ ok: false, problem: "too_long" });
    expect(checkNewPassword("password123", rules)).toEqual({ ok: false, problem: "breached" });
  });

  it("refuses the email address and its local part anywhere in the password, whatever the case and punctuation", () => {
    expect(checkNewPassword("erika.mustermann@example.com", rules)).toMatchObject({ problem: "contains_email" });
    expect(checkNewPassword("my ErikaMustermann 2026!", rules)).toMatchObject({ problem: "contains_email" });
    expect(checkNewPassword("Erika-Mustermann rocks", rules)).toMatchObject({ problem: "contains_email" });
  });

  it("refuses the organization's name (NIST context-specific words), not parts of it", () => {
    expect(checkNewPassword("welcome to acme corp 9", rules)).toMatchObject({ problem: "contains_organization" });
    expect(checkNewPassword("ACMECORP-rules-2026", rules)).toMatchObject({ problem: "contains_organization" });
    expect(checkNewPassword("acme rockets fly high", rules)).toEqual({ ok: true });
  });

  it("leaves context words under four letters alone", () => {
    expect(checkNewPassword("bob is my uncle 77", { minLength: 8, email: "bob@example.com", organizationName: "IBM" })).toEqual({ ok: true });
    expect(checkNewPassword("ibm mainframes 1964", { minLength: 8, email: "bob@example.com", organizationName: "IBM" })).toEqual({ ok: true });
  });
});
