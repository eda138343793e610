import { z } from "zod";

/**
 * How a password imported from another system was hashed there: the algorithm, its salt and its
 * parameters, never the hash itself (decision 085). The account's `passwordHash` holds
 * Argon2id(H), where H is what `deriveLegacySecret` computes from the password and this; the
 * bounds keep one sign-in's derivation cheap enough to run before its one Argon2id verification.
 */
const Base64 = z
  .string()
  .max(1024)
  .regex(/^[A-Za-z0-9+/]*={0,2}$/, "must be base64");

export const BcryptParamsSchema = z.object({
  scheme: z.literal("bcrypt"),
  variant: z.enum(["2a", "2b", "2y"]),
  cost: z.number().int().min(4).max(13),
  salt: z.string().regex(/^[./A-Za-z0-9]{22}$/, "must be bcrypt's 22-character salt"),
});

export const Pbkdf2ParamsSchema = z.object({
  scheme: z.literal("pbkdf2"),
  digest: z.enum(["sha1", "sha256", "sha512"]),
  iterations: z.number().int().min(1).max(2_000_000),
  salt: Base64,
  keyLength: z.number().int().min(16).max(128),
});

export const ScryptParamsSchema = z.object({
  scheme: z.literal("scrypt"),
  /** N = 2^logN. */
  logN: z.number().int().min(1).max(20),
  r: z.number().int().min(1).max(32),
  p: z.number().int().min(1).max(16),
  salt: Base64,
  keyLength: z.number().int().min(16).max(128),
});

export const FirebaseScryptParamsSchema = z.object({
  scheme: z.literal("firebase-scrypt"),
  /** The Firebase project's signer key and salt separator (base64), as its password hash parameters show them. */
  signerKey: Base64,
  saltSeparator: Base64,
  rounds: z.number().int().min(1).max(32),
  memCost: z.number().int().min(1).max(20),
  salt: Base64,
});

export const Argon2ParamsSchema = z.object({
  scheme: z.literal("argon2"),
  type: z.enum(["argon2i", "argon2d", "argon2id"]),
  version: z.union([z.literal(16), z.literal(19)]),
  /** KiB. */
  memoryCost: z.number().int().min(8).max(262_144),
  timeCost: z.number().int().min(1).max(16),
  parallelism: z.number().int().min(1).max(16),
  salt: Base64,
  hashLength: z.number().int().min(4).max(128),
});

/** glibc's salts: up to 16 characters (8 for md5-crypt), never `$`, `:` or a line break. */
const CryptSalt = (max: number) => z.string().max(max).regex(/^[^$:\n]*$/, "must not contain $, : or a line break");

export const ShaCryptParamsSchema = z.object({
  scheme: z.enum(["sha256-crypt", "sha512-crypt"]),
  rounds: z.number().int().min(1000).max(1_000_000),
  salt: CryptSalt(16),
});

export const Md5CryptParamsSchema = z.object({ scheme: z.literal("md5-crypt"), salt: CryptSalt(8) });

/** One round of MD5 or SHA-1 over the password and an optional salt (LDAP's {SSHA}, plain hex digests). */
export const DigestParamsSchema = z.object({
  scheme: z.literal("digest"),
  algorithm: z.enum(["md5", "sha1"]),
  salt: Base64,
  saltPosition: z.enum(["prefix", "suffix"]),
});

export const LegacyPasswordSchema = z.discriminatedUnion("scheme", [
  BcryptParamsSchema,
  Pbkdf2ParamsSchema,
  ScryptParamsSchema,
  FirebaseScryptParamsSchema,
  Argon2ParamsSchema,
  ShaCryptParamsSchema,
  Md5CryptParamsSchema,
  DigestParamsSchema,
]);

export type LegacyPassword = z.infer<typeof LegacyPasswordSchema>;
export type LegacyScheme = LegacyPassword["scheme"];

/** Schemes a brute force on a stolen copy would break quickly: imported only when the caller says so. */
export const WEAK_LEGACY_SCHEMES: ReadonlySet<LegacyScheme> = new Set(["md5-crypt", "digest"]);

/** The name a read shows (`imported:<family>`): digests by their algorithm, the rest by scheme. */
export function legacyFamily(legacy: LegacyPassword): string {
  return legacy.scheme === "digest" ? legacy.algorithm : legacy.scheme;
}
