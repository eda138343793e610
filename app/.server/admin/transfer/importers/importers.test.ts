import argon2 from "argon2";
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { deriveLegacySecret, parseImportedHash } from "../../../auth/legacy-hashes";
import { AppError } from "../../../errors";
import { parseAuth0Export } from "./auth0";
import { parseKeycloakExport } from "./keycloak";

/** The importers read another system's export into Porta's users and roles, without writing. */
describe("the Keycloak importer", () => {
  it("takes Keycloak's Argon2 credential (its default since release 24) as a form users.create imports, and the old password derives the same hash", async () => {
    const salt = randomBytes(16);
    const hash = await argon2.hash("old argon2 password", { type: argon2.argon2id, memoryCost: 7168, timeCost: 2, parallelism: 1, hashLength: 32, salt, raw: true });
    const credential = {
      type: "password",
      secretData: JSON.stringify({ value: hash.toString("base64"), salt: salt.toString("base64"), additionalParameters: {} }),
      credentialData: JSON.stringify({ hashIterations: 2, algorithm: "argon2", additionalParameters: { hashLength: ["32"], memory: ["7168"], type: ["id"], version: ["1.3"], parallelism: ["1"] } }),
    };
    const source = parseKeycloakExport(JSON.stringify({ realm: "r", users: [{ username: "a", email: " A@Example.COM ", credentials: [credential] }] }));
    const user = source.users[0]!;
    expect(user).toMatchObject({ email: "a@example.com", active: true, emailVerified: false, givenName: null });
    const parsed = parseImportedHash(user.passwordHash!, { allowWeak: false });
    expect(parsed.legacy).toMatchObject({ scheme: "argon2", type: "argon2id", version: 19, memoryCost: 7168, timeCost: 2, parallelism: 1 });
    expect(await deriveLegacySecret(parsed.legacy, "old argon2 password")).toBe(parsed.secret);
    expect(await deriveLegacySecret(parsed.legacy, "wrong")).not.toBe(parsed.secret);
  });

  it("skips Keycloak's built-in roles, adds roles users hold that the file does not list, and keeps a user without a password credential", () => {
    const source = parseKeycloakExport(
      JSON.stringify({ realm: "Shop", roles: { realm: [{ name: "default-roles-shop" }, { name: "buyer", description: `Buys ${"and sells ".repeat(40)}` }] }, users: [{ email: "b@example.com", realmRoles: ["uma_authorization", "seller"] }] }),
    );
    expect(source.roles).toEqual([
      { name: "buyer", description: `Buys ${"and sells ".repeat(40)}`.trim() },
      { name: "seller", description: null },
    ]);
    expect(source.users[0]).toMatchObject({ passwordHash: null, roles: ["seller"] });
  });

  it("refuses a document of another shape with the fields named", () => {
    const refusal = (() => {
      try {
        parseKeycloakExport(JSON.stringify({ realm: 1, users: [{ enabled: "yes" }] }));
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(AppError);
    expect((refusal as AppError).details?.map((d) => d.field)).toEqual(["data.realm", "data.users.0.enabled"]);
  });
});

describe("the Auth0 importer", () => {
  it("reads one user a line, blank lines ignored, blocked users inactive, rows without an address skipped", () => {
    const source = parseAuth0Export(['{"user_id":"auth0|1","email":"C@example.com","blocked":true,"passwordHash":"$2b$04$abc"}', "", '{"user_id":"sms|2"}', "\r"].join("\n"));
    expect(source.users).toEqual([
      { row: 0, sourceId: "auth0|1", email: "c@example.com", givenName: null, familyName: null, emailVerified: false, active: false, passwordHash: "$2b$04$abc", roles: [], totpSecret: null, metadata: { user_metadata: {}, app_metadata: {} } },
    ]);
    expect(source.skipped).toEqual([{ row: 2, sourceId: "sms|2", email: null, reason: "no_email" }]);
  });

  it("reads Auth0's password hash export as it comes, naming each row by its database user id", () => {
    const source = parseAuth0Export('{"_id":{"$oid":"60425dc43519d90068f82973"},"email":"d@example.com","email_verified":true,"passwordHash":"$2b$10$x","tenant":"t","connection":"Username-Password-Authentication"}');
    expect(source.users[0]).toMatchObject({ sourceId: "auth0|60425dc43519d90068f82973", email: "d@example.com", emailVerified: true, passwordHash: "$2b$10$x" });
  });
});
