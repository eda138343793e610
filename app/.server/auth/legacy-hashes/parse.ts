import { z } from "zod";
import type { ImportedPasswordHash } from "~/schemas/imported-password-hash";
import { validation } from "../../errors";
import { parseArgon2 } from "./argon2";
import { parseBcrypt } from "./bcrypt";
import { parseDigest } from "./digest";
import { parseMd5Crypt } from "./md5-crypt";
import { parseDjangoPbkdf2, parseKeycloak } from "./pbkdf2";
import { LegacyPasswordSchema, WEAK_LEGACY_SCHEMES, type LegacyPassword } from "./schema";
import { parsePasslibScrypt } from "./scrypt";
import { parseShaCrypt } from "./sha-crypt";

/** An imported hash taken apart: what is stored beside the account, and H, which only Argon2id wraps. */
export interface ParsedImport {
  legacy: LegacyPassword;
  secret: string;
  weak: boolean;
}

const STRING_FORMS = [parseBcrypt, parseArgon2, parseShaCrypt, parseMd5Crypt, parseDjangoPbkdf2, parsePasslibScrypt, parseDigest];

const isBase64 = (text: string) => /^[A-Za-z0-9+/]*={0,2}$/.test(text) && text.length % 4 === 0;

const KeycloakSecret = z.object({ value: z.string(), salt: z.string() });
const KeycloakCredential = z.object({ hashIterations: z.number().int(), algorithm: z.string() });

function json<T>(schema: z.ZodType<T>, value: unknown): T | null {
  let data = value;
  if (typeof value === "string") {
    try {
      data = JSON.parse(value);
    } catch {
      return null;
    }
  }
  const parsed = schema.safeParse(data);
  return parsed.success ? parsed.data : null;
}

function structured(input: Exclude<ImportedPasswordHash, string>): { params: unknown; secret: string } | string {
  switch (input.format) {
    case "keycloak": {
      const secret = json(KeycloakSecret, input.secretData);
      const credential = json(KeycloakCredential, input.credentialData);
      if (!secret || !isBase64(secret.value) || !isBase64(secret.salt)) return "secretData must be Keycloak's {value, salt}, both base64";
      if (!credential) return "credentialData must be Keycloak's {hashIterations, algorithm}";
      return parseKeycloak(secret, credential) ?? `Keycloak's algorithm ${JSON.stringify(credential.algorithm).slice(0, 40)} is not pbkdf2, pbkdf2-sha256 or pbkdf2-sha512`;
    }
    case "firebase": {
      if (![input.passwordHash, input.salt, input.signerKey, input.saltSeparator].every(isBase64)) return "passwordHash, salt, signerKey and saltSeparator must be base64";
      const params = { scheme: "firebase-scrypt", signerKey: input.signerKey, saltSeparator: input.saltSeparator, rounds: input.rounds, memCost: input.memCost, salt: input.salt };
      return { params, secret: Buffer.from(input.passwordHash, "base64").toString("base64") };
    }
    case "scrypt": {
      if (!isBase64(input.hash) || !isBase64(input.salt)) return "hash and salt must be base64";
      const key = Buffer.from(input.hash, "base64");
      return { params: { scheme: "scrypt", logN: input.logN, r: input.r, p: input.p, salt: input.salt, keyLength: key.length }, secret: key.toString("base64") };
    }
  }
}

/**
 * Takes an imported hash apart, or throws 422 naming `field`: a form Porta does not know, parameters
 * beyond what a sign-in may spend, or a weak scheme without `allowWeak`. The hash itself never
 * appears in a message.
 */
export function parseImportedHash(input: ImportedPasswordHash, options: { allowWeak: boolean; field?: string }): ParsedImport {
  const field = options.field ?? "importedPasswordHash";
  const refuse = (message: string) => validation([{ field, message }]);
  let found: { params: unknown; secret: string } | null = null;
  if (typeof input === "string") {
    const text = input.trim();
    for (const parse of STRING_FORMS) {
      found = parse(text);
      if (found) break;
    }
    if (!found) throw refuse("is not a password hash form Porta imports (bcrypt, PBKDF2 as Django writes it, Argon2 PHC, SHA-crypt, scrypt, or a structured Keycloak, Firebase or scrypt form)");
  } else {
    const result = structured(input);
    if (typeof result === "string") throw refuse(result);
    found = result;
  }
  const parsed = LegacyPasswordSchema.safeParse(found.params);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw refuse(`${issue.path.join(".") || "parameters"}: ${issue.message}`);
  }
  const legacy = parsed.data;
  const weak = WEAK_LEGACY_SCHEMES.has(legacy.scheme);
  if (weak && !options.allowWeak) throw refuse(`is a weak scheme (${legacy.scheme === "digest" ? legacy.algorithm : legacy.scheme}); send allowWeakLegacyHashes: true to import it anyway`);
  if (found.secret.length === 0) throw refuse("has an empty hash");
  return { legacy, secret: found.secret, weak };
}
