import { describe, expect, it } from "vitest";
import { generateRecoveryCodes, looksLikeRecoveryCode, normalizeRecoveryCode, RECOVERY_ALPHABET, RECOVERY_CODE_COUNT } from "./recovery-codes";

describe("the recovery-code alphabet", () => {
  it("has no look-alike characters (0/O, 1/I/L) and no duplicates", () => {
    for (const c of ["0", "O", "1", "I", "L"]) expect(RECOVERY_ALPHABET).not.toContain(c);
    expect(new Set(RECOVERY_ALPHABET).size).toBe(RECOVERY_ALPHABET.length);
    expect(RECOVERY_ALPHABET).toMatch(/^[A-Z2-9]+$/);
  });
});

describe("generateRecoveryCodes", () => {
  it("makes ten codes of the shape XXXX-XXXX from the alphabet", () => {
    const codes = generateRecoveryCodes();
    expect(RECOVERY_CODE_COUNT).toBe(10);
    expect(codes).toHaveLength(10);
    for (const code of codes) {
      expect(code).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/);
      for (const c of code.replace("-", "")) expect(RECOVERY_ALPHABET).toContain(c);
    }
  });

  it("makes unique codes, and a different set every time", () => {
    const first = generateRecoveryCodes();
    const second = generateRecoveryCodes();
    expect(new Set(first).size).toBe(10);
    expect(new Set(second).size).toBe(10);
    expect(first.filter((c) => second.includes(c))).toEqual([]);
  });

  it("draws on the whole alphabet over many codes", () => {
    const seen = new Set(generateRecoveryCodes(500).join("").replace(/-/g, ""));
    expect([...seen].sort().join("")).toBe([...RECOVERY_ALPHABET].sort().join(""));
  });
});

describe("matching a code a person types", () => {
  const code = "ABCD-EF23";

  it.each([
    ["as shown", "ABCD-EF23"],
    ["in lower case", "abcd-ef23"],
    ["in mixed case", "AbCd-eF23"],
    ["without the dash", "ABCDEF23"],
    ["with a space for the dash", "ABCD EF23"],
    ["with spaces around", "  abcd-ef23 "],
    ["with spaces inside", "AB CD - EF 23"],
    ["with a tab and newline", "\tABCD-EF23\n"],
  ])("matches %s", (_label, typed) => {
    expect(normalizeRecoveryCode(typed)).toBe(normalizeRecoveryCode(code));
    expect(normalizeRecoveryCode(typed)).toBe("ABCDEF23");
    expect(looksLikeRecoveryCode(typed)).toBe(true);
  });

  it.each([
    ["a different code", "ABCD-EF24"],
    ["a code one character short", "ABCD-EF2"],
  ])("does not match %s", (_label, typed) => {
    expect(normalizeRecoveryCode(typed)).not.toBe(normalizeRecoveryCode(code));
  });

  it.each(["", "ABCD", "ABCD-EF2", "ABCD-EF234", "ABCD_EF23", "ABCD-EF2!", "123456"])("refuses %j as not a recovery code", (typed) => {
    expect(looksLikeRecoveryCode(typed)).toBe(false);
  });
});
