import { describe, expect, it } from "vitest";
import {
  groupWhere,
  MAX_FILTER_LENGTH,
  parseScimFilter,
  userWhere,
} from "./filter";
import { ScimError } from "./errors";

const users = (text: string) => userWhere(parseScimFilter(text));
const groups = (text: string) => groupWhere(parseScimFilter(text));
const USER_ID = "0190b1c4-8d3e-7a1b-9c2d-3e4f5a6b7c8d";

function refusal(work: () => unknown): { status: number; scimType?: string } {
  try {
    work();
  } catch (error) {
    if (error instanceof ScimError)
      return {
        status: error.status,
        ...(error.scimType ? { scimType: error.scimType } : {}),
      };
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("userWhere", () => {
  it("answers the lookup Entra ID and Okta make before creating a user: userName eq, on the email, case-insensitively", () => {
    expect(users('userName eq "Ada@Example.com"')).toEqual({
      email: { equals: "Ada@Example.com", mode: "insensitive" },
    });
    expect(
      users(
        'urn:ietf:params:scim:schemas:core:2.0:User:userName eq "a@b.example"'
      )
    ).toEqual({ email: { equals: "a@b.example", mode: "insensitive" } });
    expect(users('USERNAME Eq "a@b.example"')).toEqual({
      email: { equals: "a@b.example", mode: "insensitive" },
    });
  });

  it("keeps externalId case-exact and maps names, emails and active", () => {
    expect(users('externalId eq "00u1AbC"')).toEqual({
      scimExternalId: { equals: "00u1AbC" },
    });
    expect(
      users('name.givenName sw "Ad" and name.familyName co "love"')
    ).toEqual({
      AND: [
        { givenName: { startsWith: "Ad", mode: "insensitive" } },
        { familyName: { contains: "love", mode: "insensitive" } },
      ],
    });
    expect(
      users('emails.value ew "@example.com" or emails eq "x@y.example"')
    ).toEqual({
      OR: [
        { email: { endsWith: "@example.com", mode: "insensitive" } },
        { email: { equals: "x@y.example", mode: "insensitive" } },
      ],
    });
    expect(users("active eq false")).toEqual({ status: "inactive" });
    expect(users('active eq "True"')).toEqual({ status: "active" });
    expect(users("active ne true")).toEqual({ status: "inactive" });
  });

  it("answers emails[...] from the one work address a user has", () => {
    expect(users('emails[type eq "work" and value eq "a@b.example"]')).toEqual({
      AND: [{}, { email: { equals: "a@b.example", mode: "insensitive" } }],
    });
    expect(users('emails[type eq "home"]')).toEqual({ id: { in: [] } });
    expect(users("emails[primary eq true]")).toEqual({});
  });

  it("treats pr as present and not as a negation", () => {
    expect(users("externalId pr")).toEqual({ scimExternalId: { not: null } });
    expect(users('not (userName eq "a@b.example")')).toEqual({
      NOT: { email: { equals: "a@b.example", mode: "insensitive" } },
    });
  });

  it("matches an id that is no UUID to nobody, without reaching the uuid column", () => {
    expect(users(`id eq "${USER_ID}"`)).toEqual({ id: USER_ID });
    expect(users('id eq "1 OR 1=1"')).toEqual({ id: { in: [] } });
  });

  it("passes injection-looking values through as values (bound by Prisma), never as syntax or wildcards", () => {
    expect(users(`userName eq "x' OR '1'='1"`)).toEqual({
      email: { equals: "x' OR '1'='1", mode: "insensitive" },
    });
    // LIKE's wildcards match themselves.
    expect(users('userName co "%"')).toEqual({
      email: { contains: "\\%", mode: "insensitive" },
    });
    expect(users('name.givenName sw "a_b"')).toEqual({
      givenName: { startsWith: "a\\_b", mode: "insensitive" },
    });
  });

  it("refuses attributes Porta does not filter on, wrong value types and unsupported operators as invalidFilter", () => {
    for (const text of [
      'password eq "x"',
      'passwordHash sw "$argon2"',
      'organizationId eq "x"',
      'displayName eq "Ada"',
      'emails[display eq "x"]',
      'addresses[type eq "work"]',
      "userName eq 5",
      'userName gt "a"',
      'active eq "yes"',
      'meta.created gt "not a date"',
      'members eq "x"',
    ]) {
      expect(
        refusal(() => users(text)),
        text
      ).toEqual({ status: 400, scimType: "invalidFilter" });
    }
  });

  it("refuses what is not the grammar, too long a filter, too deep a nesting and too many terms", () => {
    for (const text of [
      'userName eq "unterminated',
      "userName eq",
      'userName "x"',
      "",
      "((",
      'userName eq "a\u0000"x',
    ]) {
      expect(
        refusal(() => users(text)),
        JSON.stringify(text)
      ).toEqual({ status: 400, scimType: "invalidFilter" });
    }
    expect(
      refusal(() =>
        parseScimFilter(`userName eq "${"a".repeat(MAX_FILTER_LENGTH)}"`)
      )
    ).toEqual({ status: 400, scimType: "invalidFilter" });
    expect(
      refusal(() =>
        parseScimFilter(`${"(".repeat(500)}userName eq "x"${")".repeat(500)}`)
      )
    ).toEqual({ status: 400, scimType: "invalidFilter" });
    expect(
      refusal(() =>
        parseScimFilter(
          Array.from(
            { length: 60 },
            (_, i) => `userName eq "u${i}@x.example"`
          ).join(" or ")
        )
      )
    ).toEqual({
      status: 400,
      scimType: "invalidFilter",
    });
  });

  it("does not count brackets inside quoted values as nesting", () => {
    expect(users(`userName eq "${"(".repeat(20)}"`)).toEqual({
      email: { equals: "(".repeat(20), mode: "insensitive" },
    });
  });
});

describe("groupWhere", () => {
  it("maps displayName to the role's name and members to its assignments, as Entra ID asks to check a membership", () => {
    expect(groups('displayName eq "Engineering"')).toEqual({
      name: { equals: "Engineering", mode: "insensitive" },
    });
    expect(
      groups(`id eq "${USER_ID}" and members[value eq "${USER_ID}"]`)
    ).toEqual({
      AND: [{ id: USER_ID }, { users: { some: { userId: USER_ID } } }],
    });
    expect(groups(`members eq "${USER_ID}"`)).toEqual({
      users: { some: { userId: USER_ID } },
    });
    expect(groups('members.value eq "nope"')).toEqual({ id: { in: [] } });
  });

  it("refuses user attributes and unknown ones", () => {
    for (const text of [
      'userName eq "a"',
      'name eq "x"',
      'members[display eq "x"]',
      'permissions eq "x"',
    ]) {
      expect(
        refusal(() => groups(text)),
        text
      ).toEqual({ status: 400, scimType: "invalidFilter" });
    }
  });
});
