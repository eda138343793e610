import argon2 from "argon2";
import bcrypt from "bcryptjs";
import { pbkdf2Sync, scryptSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { AppError } from "../../errors";
import { deriveLegacySecret, passwordSecret } from "./derive";
import { parseImportedHash } from "./parse";
import { LegacyPasswordSchema } from "./schema";
import { shaCryptChecksum } from "./sha-crypt";

/**
 * Every imported form against hashes its reference made: bcryptjs for bcrypt, node:crypto and
 * Python's hashlib for PBKDF2 and scrypt (Django's and Keycloak's stored forms), Firebase's
 * published vector, the argon2 package's own PHC strings, Drepper's SHA-crypt vectors and glibc's
 * crypt(3) (through Python) for SHA-crypt and md5-crypt. For each: the right password derives the H
 * the import stored, a wrong one does not.
 */
const PASSWORD = "correct horse";

async function roundTrip(input: Parameters<typeof parseImportedHash>[0], password = PASSWORD, allowWeak = false) {
  const parsed = parseImportedHash(input, { allowWeak });
  // What is stored must survive the column's own schema (a JSON round trip).
  const stored = LegacyPasswordSchema.parse(JSON.parse(JSON.stringify(parsed.legacy)));
  expect(await deriveLegacySecret(stored, password)).toBe(parsed.secret);
  expect(await deriveLegacySecret(stored, `${password}!`)).not.toBe(parsed.secret);
  expect(await deriveLegacySecret(stored, "")).not.toBe(parsed.secret);
  return parsed;
}

function refusal(input: Parameters<typeof parseImportedHash>[0], allowWeak = false): string {
  try {
    parseImportedHash(input, { allowWeak });
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).status).toBe(422);
    return (error as AppError).details![0]!.field + ": " + (error as AppError).details![0]!.message;
  }
  throw new Error("expected a refusal");
}

describe("bcrypt", () => {
  it.each(["2a", "2b", "2y"])("takes $%s$ hashes bcryptjs made, and no other password", async (variant) => {
    const made = await bcrypt.hash(PASSWORD, await bcrypt.genSalt(4));
    const hash = `$${variant}$${made.slice(4)}`;
    const parsed = await roundTrip(hash);
    expect(parsed.legacy).toEqual({ scheme: "bcrypt", variant, cost: 4, salt: made.slice(7, 29) });
    expect(parsed.secret).toBe(made.slice(-31));
    expect(parsed.weak).toBe(false);
  });

  it("keeps bcrypt's own rule for non-ASCII passwords (UTF-8 bytes)", async () => {
    const made = await bcrypt.hash("pässwörd ✓", 4);
    await roundTrip(made, "pässwörd ✓");
  });

  it("refuses a cost a sign-in could not afford", () => {
    expect(refusal("$2b$15$" + "a".repeat(53))).toMatch(/^importedPasswordHash: cost: /);
  });
});

describe("PBKDF2", () => {
  it("takes Django's pbkdf2_sha256 and pbkdf2_sha1 strings (made by Python's hashlib)", async () => {
    const sha256 = await roundTrip("pbkdf2_sha256$100000$seasalt$7D53paqVS3FbKCTYthRVmd2w/mSOmB8e0Q0eeuKmwOM=");
    expect(sha256.legacy).toEqual({ scheme: "pbkdf2", digest: "sha256", iterations: 100000, salt: Buffer.from("seasalt").toString("base64"), keyLength: 32 });
    const sha1 = await roundTrip("pbkdf2_sha1$10000$seasalt$Jwu25HYWPy/yfYdNS6w3q7sy9sU=");
    expect(sha1.legacy).toMatchObject({ digest: "sha1", keyLength: 20 });
  });

  it("takes Keycloak credentials for each of its PBKDF2 algorithms, 512-bit keys and the older 256-bit ones", async () => {
    const salt = "MDEyMzQ1Njc4OWFiY2RlZg==";
    const cases = [
      ["pbkdf2-sha256", 27500, "H5R9LZ0QvKxHLm1Lg0IeQXdtUAa+9gf2NeOZns+WHBTpnlaWE/+JwnJ/2OXEjNPW5EusP1xxGLqEqjWDbIcGlg=="],
      ["pbkdf2-sha512", 30000, "EZdYedjJ9LINuCEWb/obgbC2etwQSY8+K/kV9Sbe4upwijP8unRux35qRxFax9VOayhTRti9uKhJLnaJW9awyQ=="],
      ["pbkdf2", 27500, "W9SQs6hOy2gb+tDQ32dxp41IkWiW/nLb4+sLd84Cgq/u6h9SyyYmjHqFbNJC42Ei0Z9BcWmLvp6Wgj2D1gzKDA=="],
      ["pbkdf2-sha256", 27500, "H5R9LZ0QvKxHLm1Lg0IeQXdtUAa+9gf2NeOZns+WHBQ="],
    ] as const;
    for (const [algorithm, hashIterations, value] of cases) {
      // As Keycloak's export writes them: JSON strings inside the credential.
      const parsed = await roundTrip({
        format: "keycloak",
        secretData: JSON.stringify({ value, salt, additionalParameters: {} }).replace(',"additionalParameters":{}', ""),
        credentialData: JSON.stringify({ hashIterations, algorithm, additionalParameters: {} }),
      });
      expect(parsed.legacy).toMatchObject({ scheme: "pbkdf2", iterations: hashIterations, keyLength: Buffer.from(value, "base64").length });
    }
  });

  it("matches node:crypto's PBKDF2 for a structured Keycloak object", async () => {
    const salt = Buffer.from("pepper-and-salt!");
    const value = pbkdf2Sync(PASSWORD, salt, 1000, 64, "sha512").toString("base64");
    await roundTrip({ format: "keycloak", secretData: { value, salt: salt.toString("base64") }, credentialData: { hashIterations: 1000, algorithm: "pbkdf2-sha512" } });
  });

  it("refuses a Keycloak credential of another algorithm, and one whose parts are not JSON", () => {
    expect(refusal({ format: "keycloak", secretData: { value: "AAAA", salt: "AAAA" }, credentialData: { hashIterations: 1, algorithm: "argon2" } })).toMatch(/not pbkdf2/);
    expect(refusal({ format: "keycloak", secretData: "{not json", credentialData: "{}" })).toMatch(/secretData/);
  });
});

describe("scrypt", () => {
  it("takes the structured form and passlib's $scrypt$ string (made by Python's hashlib)", async () => {
    const structured = await roundTrip({ format: "scrypt", hash: "DwxLDfbQHyww2w1ObyWBVSxc3DnN93JCHXCM69iDGvs=", salt: "TmFDbC1zYWx0LTE2Ynl0ZQ==", logN: 14, r: 8, p: 1 });
    const passlib = await roundTrip("$scrypt$ln=14,r=8,p=1$TmFDbC1zYWx0LTE2Ynl0ZQ$DwxLDfbQHyww2w1ObyWBVSxc3DnN93JCHXCM69iDGvs");
    expect(passlib).toEqual(structured);
  });

  it("matches node:crypto's scrypt", async () => {
    const salt = Buffer.from("another salt");
    const hash = scryptSync(PASSWORD, salt, 64, { N: 1024, r: 4, p: 2 }).toString("base64");
    await roundTrip({ format: "scrypt", hash, salt: salt.toString("base64"), logN: 10, r: 4, p: 2 });
  });

  it("refuses memory a sign-in could not afford", () => {
    expect(refusal({ format: "scrypt", hash: "AAAAAAAAAAAAAAAAAAAAAAAA", salt: "AAAA", logN: 24, r: 8, p: 1 })).toMatch(/logN/);
  });
});

describe("Firebase's modified scrypt", () => {
  it("derives Firebase's published vector, and nothing from a wrong password", async () => {
    const parsed = await roundTrip(
      {
        format: "firebase",
        passwordHash: "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==",
        salt: "42xEC+ixf3L2lw==",
        signerKey: "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==",
        saltSeparator: "Bw==",
        rounds: 8,
        memCost: 14,
      },
      "user1password",
    );
    expect(parsed.legacy.scheme).toBe("firebase-scrypt");
  });
});

describe("Argon2 with other parameters", () => {
  it.each([
    ["argon2i", argon2.argon2i],
    ["argon2d", argon2.argon2d],
    ["argon2id", argon2.argon2id],
  ] as const)("takes %s PHC strings the argon2 package made", async (name, type) => {
    const phc = await argon2.hash(PASSWORD, { type, memoryCost: 4096, timeCost: 3, parallelism: 2, hashLength: 24 });
    const parsed = await roundTrip(phc);
    expect(parsed.legacy).toMatchObject({ scheme: "argon2", type: name, version: 19, memoryCost: 4096, timeCost: 3, parallelism: 2, hashLength: 24 });
  });

  it("refuses memory beyond the bound", () => {
    expect(refusal("$argon2id$v=19$m=1048576,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo")).toMatch(/memoryCost/);
  });
});

describe("SHA-crypt", () => {
  it("computes Drepper's published vectors", () => {
    const vectors = [
      ["sha256", "saltstring", 5000, "Hello world!", "5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5"],
      ["sha256", "saltstringsaltst", 10000, "Hello world!", "3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA"],
      ["sha256", "short", 77777, "we have a short salt string but not a short password", "JiO1O3ZpDAxGJeaDIuqCoEFysAe1mZNJRs3pw0KQRd/"],
      ["sha256", "roundstoolow", 1000, "the minimum number is still observed", "yfvwcWrQ8l/K0DAWyuPMDNHpIVlTQebY9l/gL972bIC"],
      ["sha512", "saltstring", 5000, "Hello world!", "svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1"],
      ["sha512", "saltstringsaltst", 10000, "Hello world!", "OW1/O6BYHV6BcXZu8QVeXbDWra3Oeqh0sbHbbMCVNSnCM/UrjmM0Dp8vOuZeHBy/YTBmSK6H9qs/y3RnOaw5v."],
      ["sha512", "anotherlongsalts", 1400, "a very much longer text to encrypt.  This one even stretches over morethan one line.", "POfYwTEok97VWcjxIiSOjiykti.o/pQs.wPvMxQ6Fm7I6IoYN3CmLs66x9t0oSwbtEW7o7UmJEiDwGqd8p4ur1"],
    ] as const;
    for (const [algorithm, salt, rounds, password, checksum] of vectors) expect(shaCryptChecksum(algorithm, Buffer.from(password), salt, rounds)).toBe(checksum);
  });

  it("takes $5$ and $6$ strings glibc's crypt(3) made, with and without rounds=", async () => {
    const sha256 = await roundTrip("$5$rounds=10000$saltstringsaltst$ffO6RHJbzihHqETll0c/MLDJrGhQw9fAaO1LcVIStWB");
    expect(sha256.legacy).toEqual({ scheme: "sha256-crypt", rounds: 10000, salt: "saltstringsaltst" });
    const sha512 = await roundTrip("$6$abcdefgh$yIZAF3gQPvtKZO/9qOJKffAKKbtS3ef3qmwyugk4uWVjX8YZf/GV3A8SkFxEPY0T56CcilGrHKLffBsp6dLMG.");
    expect(sha512.legacy).toEqual({ scheme: "sha512-crypt", rounds: 5000, salt: "abcdefgh" });
  });
});

describe("weak schemes", () => {
  const weak = [
    ["md5-crypt", "$1$Xy12ab$APL076MXKuUbY2neNRfJq1", "md5-crypt"],
    ["LDAP {SSHA}", "{SSHA}5pcxo13YdJml98eQSIlT3FMEBMMBAgME", "sha1"],
    ["hex MD5", "3cb4e732631f47e6eb961f34554b7cde", "md5"],
    ["hex SHA-1", "2f9e53523b62abc141a2b4d6019d23cba835dbd0", "sha1"],
  ] as const;

  it.each(weak)("refuses %s unless the import allows weak hashes, and says how", (_name, hash, family) => {
    expect(refusal(hash)).toMatch(new RegExp(`weak scheme \\(${family}\\).*allowWeakLegacyHashes`));
  });

  it.each(weak)("takes %s when allowed, marked weak", async (_name, hash) => {
    const parsed = await roundTrip(hash, PASSWORD, true);
    expect(parsed.weak).toBe(true);
  });

  it("md5-crypt hashes non-ASCII passwords as UTF-8, as glibc does", async () => {
    await roundTrip("$1$ab$bRZzLnQPD1ql12pSoshc71", "pässwörd", true);
  });
});

describe("what an import refuses", () => {
  it.each([
    ["an Argon2id hash of the right shape but an unknown prefix", "$argon3$v=19$m=1,t=1,p=1$AAAA$AAAA"],
    ["plain text", "hunter2"],
    ["a truncated bcrypt string", "$2b$10$abcdefghijklmnopqrstuv"],
    ["a DES crypt string", "abJnggxhB/yWI"],
    ["a Django hash of an unsupported algorithm", "bcrypt_sha256$$2b$12$abc"],
  ])("%s", (_name, input) => {
    expect(refusal(input)).toMatch(/^importedPasswordHash: is not a password hash form/);
  });

  it("never echoes the hash in its message", () => {
    const hash = "pbkdf2_sha256$9999999$salt$" + "A".repeat(44);
    expect(refusal(hash)).not.toContain("AAAA");
  });
});

describe("passwordSecret (what a sign-in verifies)", () => {
  it("is the password itself for an account without an import", async () => {
    expect(await passwordSecret(null, PASSWORD)).toBe(PASSWORD);
  });

  it("is H' for an imported account", async () => {
    const parsed = parseImportedHash("$6$abcdefgh$yIZAF3gQPvtKZO/9qOJKffAKKbtS3ef3qmwyugk4uWVjX8YZf/GV3A8SkFxEPY0T56CcilGrHKLffBsp6dLMG.", { allowWeak: false });
    expect(await passwordSecret(parsed.legacy, PASSWORD)).toBe(parsed.secret);
  });

  it("is a value no hash matches when the stored column does not parse (never the password itself)", async () => {
    const secret = await passwordSecret({ scheme: "rot13" }, PASSWORD);
    expect(secret).not.toBe(PASSWORD);
    expect(secret).not.toBe(await passwordSecret({ scheme: "rot13" }, PASSWORD));
  });
});
