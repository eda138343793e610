import { describe, expect, it } from "vitest";
import { subjectKeyOf, SubjectSchema } from "./subjects";

describe("subject identifiers", () => {
  it("takes iss_sub and email, and keys an email case-insensitively so one person named twice is one subject", () => {
    const a = SubjectSchema.parse({ format: "email", email: "Ada@Example.com" });
    const b = SubjectSchema.parse({ format: "email", email: "ada@example.com" });
    expect(subjectKeyOf(a)).toBe(subjectKeyOf(b));
    expect(subjectKeyOf(SubjectSchema.parse({ format: "iss_sub", iss: "https://id.example.com/acme", sub: "u1" }))).toBe("iss_sub https://id.example.com/acme u1");
  });

  it("refuses other formats, missing and extra members, and text that cannot be stored", () => {
    for (const value of [
      { format: "opaque", id: "x" },
      { format: "phone_number", phone_number: "+1" },
      { format: "email" },
      { format: "email", email: "a@example.com", sub: "x" },
      { format: "iss_sub", sub: "x" },
      { format: "email", email: "a\u0000@example.com" },
      { format: "iss_sub", iss: "https://id.example.com", sub: "\ud800" },
      { format: "email", email: `${"a".repeat(320)}@example.com` },
    ]) {
      expect(SubjectSchema.safeParse(value).success, JSON.stringify(value)).toBe(false);
    }
  });
});
