import { describe, expect, it } from "vitest";
import { csvLineOf, parseBulkCsv } from "./bulk-csv";

describe("parseBulkCsv", () => {
  it("reads one operation per row, leaves empty cells out and keeps quoted commas", () => {
    const result = parseBulkCsv('\uFEFFop,email,givenName,familyName,emailVerified,userId\ncreate,ada@example.com,Ada,"Lovelace, Countess",true,\n\ndeactivate,,,,,0190a000-0000-7000-8000-000000000001\n');
    expect(result).toEqual({
      ok: true,
      operations: [
        { op: "create", email: "ada@example.com", givenName: "Ada", familyName: "Lovelace, Countess", emailVerified: true },
        { op: "deactivate", userId: "0190a000-0000-7000-8000-000000000001" },
      ],
    });
  });

  it("refuses unknown columns, a missing op column, an empty file and broken quoting", () => {
    expect(parseBulkCsv("op,password\ncreate,secret\n")).toMatchObject({ ok: false, problem: "columns", detail: "password" });
    expect(parseBulkCsv("email\na@example.com\n")).toMatchObject({ ok: false, problem: "columns" });
    expect(parseBulkCsv("op,email\n")).toEqual({ ok: false, problem: "empty" });
    expect(parseBulkCsv('op,email\ncreate,"unterminated\n')).toMatchObject({ ok: false, problem: "unreadable" });
  });

  it("maps an Admin API field to its CSV line", () => {
    expect(csvLineOf("operations.0.email")).toBe(2);
    expect(csvLineOf("operations.41")).toBe(43);
    expect(csvLineOf("organizationId")).toBeNull();
  });
});
