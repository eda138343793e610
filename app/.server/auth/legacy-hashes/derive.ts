import { deriveArgon2 } from "./argon2";
import { deriveBcrypt } from "./bcrypt";
import { deriveDigest } from "./digest";
import { deriveMd5Crypt } from "./md5-crypt";
import { derivePbkdf2 } from "./pbkdf2";
import { LegacyPasswordSchema, type LegacyPassword } from "./schema";
import { deriveFirebaseScrypt, deriveScrypt } from "./scrypt";
import { deriveShaCrypt } from "./sha-crypt";

/**
 * H = legacy(password, salt, params): what Porta's Argon2id hash of an imported account wraps.
 * The password goes in as typed (UTF-8), as the system that made the hash saw it.
 */
export function deriveLegacySecret(legacy: LegacyPassword, password: string): Promise<string> {
  switch (legacy.scheme) {
    case "bcrypt":
      return deriveBcrypt(legacy, password);
    case "pbkdf2":
      return derivePbkdf2(legacy, password);
    case "scrypt":
      return deriveScrypt(legacy, password);
    case "firebase-scrypt":
      return deriveFirebaseScrypt(legacy, password);
    case "argon2":
      return deriveArgon2(legacy, password);
    case "sha256-crypt":
    case "sha512-crypt":
      return deriveShaCrypt(legacy, password);
    case "md5-crypt":
      return deriveMd5Crypt(legacy, password);
    case "digest":
      return deriveDigest(legacy, password);
  }
}

/** The stored column, parsed; null when the account has none (or, never expected, it does not parse). */
export function readLegacyPassword(stored: unknown): LegacyPassword | null {
  if (stored === null || stored === undefined) return null;
  const parsed = LegacyPasswordSchema.safeParse(stored);
  return parsed.success ? parsed.data : null;
}

/**
 * What a password attempt hands the account's one Argon2id verification: the password itself, or
 * for an imported account H' derived from it. A column that does not parse, or a derivation that
 * fails, gives a value no hash matches: the attempt still runs its one verification, and fails.
 */
export async function passwordSecret(stored: unknown, password: string): Promise<string> {
  if (stored === null || stored === undefined) return password;
  const legacy = readLegacyPassword(stored);
  if (!legacy) return `\u0000unreadable:${crypto.randomUUID()}`;
  return deriveLegacySecret(legacy, password).catch(() => `\u0000underived:${crypto.randomUUID()}`);
}
