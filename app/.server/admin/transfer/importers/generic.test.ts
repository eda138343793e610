import { describe, expect, it } from "vitest";
import { AppError } from "../../../errors";
import { parseGenericCsv, parseGenericJson } from "./generic";

function refusal(work: () => unknown): AppError {
  try {
    work();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

/** Porta's own user list, as CSV or JSON, for the sources no importer knows. */
describe("a CSV user list", () => {
  it("reads the documented columns: flags in their spellings, roles split on semicolons, blank cells as absent", () => {
    const csv = [
      "\uFEFFemail,given_name,family_name,email_verified,active,password_hash,roles,external_id",
      " Ann@Example.com ,Ann,Lee,yes,,$2b$04$abcdefghijklmnopqrstuu5mMWQH7Yy6lMrS1W7jW6EyqyM3aD1G6,editor; viewer ;,u-1",
      "bob@example.com,,,0,false,,,",
      ",No,Address,true,true,,,u-3",
    ].join("\r\n");
    const source = parseGenericCsv(csv);
    expect(source.users).toEqual([
      { row: 0, sourceId: "u-1", email: "ann@example.com", givenName: "Ann", familyName: "Lee", emailVerified: true, active: true, passwordHash: "$2b$04$abcdefghijklmnopqrstuu5mMWQH7Yy6lMrS1W7jW6EyqyM3aD1G6", roles: ["editor", "viewer"], totpSecret: null },
      { row: 1, sourceId: null, email: "bob@example.com", givenName: null, familyName: null, emailVerified: false, active: false, passwordHash: null, roles: [], totpSecret: null },
    ]);
    expect(source.roles.map((r) => r.name)).toEqual(["editor", "viewer"]);
    expect(source.skipped).toEqual([{ row: 2, sourceId: "u-3", email: null, reason: "no_email" }]);
  });

  it("refuses a column it does not know, a file without an email column, a flag it cannot read and a NUL, naming the row", () => {
    expect(refusal(() => parseGenericCsv("email,password\na@example.com,secret")).details?.[0]).toMatchObject({ field: "data", message: expect.stringContaining("password") });
    expect(refusal(() => parseGenericCsv("given_name\nAnn")).details?.[0]).toMatchObject({ field: "data", message: "needs an email column" });
    expect(refusal(() => parseGenericCsv("email,active\na@example.com,maybe")).details?.[0]?.field).toBe("data.0.active");
    expect(refusal(() => parseGenericCsv("email,given_name\na@example.com,A\u0000B")).details?.[0]?.field).toBe("data.0.given_name");
    expect(refusal(() => parseGenericCsv('email\n"unterminated')).details?.[0]?.field).toBe("data");
  });
});

describe("a TOTP secret in a user list", () => {
  it("is taken in base32 as authenticator apps show it (spaces, padding and case aside), and refused when it is not base32", () => {
    const source = parseGenericCsv("email,totp_secret\na@example.com,jbsw y3dp ehpk 3pxp====\nb@example.com,");
    expect(source.users.map((u) => u.totpSecret)).toEqual(["JBSWY3DPEHPK3PXP", null]);
    expect(refusal(() => parseGenericCsv("email,totp_secret\na@example.com,not-base32!")).details?.[0]?.field).toBe("data.0.totp_secret");
  });
});

describe("a JSON user list", () => {
  it("takes the same keys, roles as an array and a structured password hash", () => {
    const scrypt = { format: "scrypt", hash: "aGFzaA==", salt: "c2FsdA==", logN: 14, r: 8, p: 1 } as const;
    const source = parseGenericJson(JSON.stringify([{ email: "c@example.com", email_verified: true, roles: ["admins"], password_hash: scrypt }]));
    expect(source.users[0]).toMatchObject({ email: "c@example.com", emailVerified: true, active: true, passwordHash: scrypt, roles: ["admins"] });
  });

  it("refuses what is not an array of known keys", () => {
    expect(refusal(() => parseGenericJson('{"email":"a@example.com"}')).details?.[0]).toMatchObject({ field: "data", message: "must be a JSON array of user objects" });
    expect(refusal(() => parseGenericJson('[{"email":"a@example.com","pasword_hash":"x"}]')).details?.[0]?.field).toBe("data.0.pasword_hash");
    expect(refusal(() => parseGenericJson("[1")).details?.[0]?.field).toBe("data");
  });
});
