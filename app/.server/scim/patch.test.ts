import { describe, expect, it } from "vitest";
import { ScimError } from "./errors";
import { applyPatch, operationsOf, PATCH_OP_SCHEMA, type Doc } from "./patch";

const URN = "urn:ietf:params:scim:schemas:core:2.0:User";
const USER: Doc = {
  userName: "ada@example.com",
  name: { givenName: "Ada" },
  emails: [{ value: "ada@example.com", type: "work", primary: true }],
  active: true,
};
const run = (...operations: unknown[]) => applyPatch(USER, operationsOf({ schemas: [PATCH_OP_SCHEMA], Operations: operations }), URN);

function refusal(work: () => unknown) {
  try {
    work();
  } catch (error) {
    if (error instanceof ScimError) return error.scimType;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("applyPatch", () => {
  it("takes Entra ID's capitalised ops, string booleans (read later) and filtered email paths", () => {
    const doc = run({ op: "Replace", path: "active", value: "False" }, { op: "Replace", path: 'emails[type eq "work"].value', value: "grace@example.com" });
    expect(doc.active).toBe("False");
    expect(doc.emails).toEqual([{ value: "grace@example.com", type: "work", primary: true }]);
    expect(USER.emails).toEqual([{ value: "ada@example.com", type: "work", primary: true }]);
  });

  it("takes Okta's path-less replace, path-like keys and the core schema's URN prefix", () => {
    expect(run({ op: "replace", value: { active: false } }).active).toBe(false);
    expect(run({ op: "replace", value: { "name.familyName": "Lovelace" } }).name).toEqual({ givenName: "Ada", familyName: "Lovelace" });
    expect(run({ op: "replace", path: `${URN}:name.givenName`, value: "Augusta" }).name).toEqual({ givenName: "Augusta" });
    expect(run({ op: "replace", value: { [URN]: { userName: "x@example.com" } } }).userName).toBe("x@example.com");
  });

  it("ignores attributes of other schemas, such as the enterprise extension", () => {
    const doc = run({ op: "add", path: "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department", value: "Navy" });
    expect(doc).toEqual(USER);
  });

  it("adds an element through a filter that matched nothing, and removes matched elements", () => {
    const added = run({ op: "add", path: 'emails[type eq "home"].value', value: "home@example.com" });
    expect(added.emails).toEqual([
      { value: "ada@example.com", type: "work", primary: true },
      { type: "home", value: "home@example.com" },
    ]);
    const removed = applyPatch(added, operationsOf({ schemas: [PATCH_OP_SCHEMA], Operations: [{ op: "remove", path: 'emails[type eq "home"]' }] }), URN);
    expect(removed.emails).toEqual(USER.emails);
    expect(run({ op: "remove", path: "name.givenName" }).name).toEqual({});
  });

  it("moves primary to an email added as primary, as RFC 7644 asks", () => {
    const doc = run({ op: "add", path: "emails", value: [{ value: "new@example.com", type: "work", primary: true }] });
    expect(doc.emails).toEqual([
      { value: "ada@example.com", type: "work", primary: false },
      { value: "new@example.com", type: "work", primary: true },
    ]);
  });

  it("refuses unknown ops, bad paths, a remove without a path and a replace through a filter it cannot satisfy", () => {
    expect(refusal(() => run({ op: "copy", path: "active", value: true }))).toBe("invalidSyntax");
    expect(refusal(() => run({ op: "replace", path: "emails[type eq", value: "x" }))).toBe("invalidPath");
    expect(refusal(() => run({ op: "replace", path: "1abc", value: "x" }))).toBe("invalidPath");
    expect(refusal(() => run({ op: "remove" }))).toBe("noTarget");
    expect(refusal(() => run({ op: "replace", path: 'emails[type eq "work" and primary eq false].value', value: "x" }))).toBe("noTarget");
    expect(refusal(() => run({ op: "replace", path: "emails.value", value: "x" }))).toBe("invalidPath");
    expect(refusal(() => run({ op: "replace", path: "active" }))).toBe("invalidValue");
    expect(refusal(() => operationsOf({ Operations: [] }))).toBe("invalidSyntax");
    expect(refusal(() => operationsOf({ schemas: [PATCH_OP_SCHEMA], Operations: [] }))).toBe("invalidSyntax");
  });
});
