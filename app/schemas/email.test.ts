import { describe, expect, it } from "vitest";
import { EmailSchema, isEmailAddress } from "./email";

describe("the email rule", () => {
  it.each(["admin@localhost", "a.b+tag@mail.example.co", "o'neil@example.com", "juergen@bücher.example", "x@a-b.c1"])("accepts %s", (address) => {
    expect(isEmailAddress(address)).toBe(true);
  });

  it.each([
    ["a comma list", "ada@example.com,eve@evil.test"],
    ["a display name", "Ada <ada@example.com>"],
    ["a quoted local part", '"ada lovelace"@example.com'],
    ["two @", "ada@eve@example.com"],
    ["no domain", "ada@"],
    ["no local part", "@example.com"],
    ["no @", "ada.example.com"],
    ["an empty label", "ada@example..com"],
    ["a trailing dot", "ada@example.com."],
    ["a leading dash", "ada@-example.com"],
    ["a line break", "ada@example.com\r\nBcc: eve@evil.test"],
    ["a NUL", "ada\u0000@example.com"],
    ["a non-ASCII local part", "jürgen@example.com"],
    ["a dot at the start of the local part", ".ada@example.com"],
    ["a local part over 64 characters", `${"a".repeat(65)}@example.com`],
    ["an address over 254 characters", `ada@${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(63)}.com`],
  ])("refuses %s", (_label, address) => {
    expect(isEmailAddress(address)).toBe(false);
  });

  it("normalizes to the stored form: trimmed and lower-case", () => {
    expect(EmailSchema.parse("  Admin@LocalHost ")).toBe("admin@localhost");
    expect(EmailSchema.safeParse("Ada <ada@example.com>").success).toBe(false);
  });
});
