import { z } from "zod";

/**
 * A password hash from another system, as an import brings it (decision 085): the string forms
 * (`$2b$…`, `pbkdf2_sha256$…`, `$argon2i$…`, `$5$…`, `$6$…`, `$scrypt$…`, and with
 * `allowWeakLegacyHashes` `$1$…`, `{SSHA}…`, hex MD5/SHA-1), or a structured form where the
 * source system keeps no single string: a Keycloak credential, a Firebase user with its project's
 * hash parameters, or scrypt's parameters.
 */
const Text = z.string().max(4096, "must have at most 4096 characters");
const Count = z.number().int("must be a whole number");

export const KeycloakCredentialSchema = z
  .object({
    format: z.literal("keycloak"),
    /** The credential's `secretData`: `{"value": base64, "salt": base64}`, as Keycloak exports it (a JSON string) or as an object. */
    secretData: z.union([Text, z.object({ value: Text, salt: Text }).strict()]),
    /** The credential's `credentialData`: `{"hashIterations": n, "algorithm": "pbkdf2-sha256"}`, a JSON string or an object. */
    credentialData: z.union([Text, z.object({ hashIterations: Count, algorithm: Text }).passthrough()]),
  })
  .strict();

export const FirebaseHashSchema = z
  .object({
    format: z.literal("firebase"),
    /** The user's `passwordHash` and `salt` (base64), as `firebase auth:export` writes them. */
    passwordHash: Text,
    salt: Text,
    /** The project's hash parameters (base64 key and separator). */
    signerKey: Text,
    saltSeparator: Text,
    rounds: Count,
    memCost: Count,
  })
  .strict();

export const ScryptHashSchema = z
  .object({
    format: z.literal("scrypt"),
    /** Derived key and salt, base64. */
    hash: Text,
    salt: Text,
    /** N = 2^logN. */
    logN: Count,
    r: Count,
    p: Count,
  })
  .strict();

export const ImportedPasswordHashSchema = z.union([Text.min(1, "must not be empty"), z.discriminatedUnion("format", [KeycloakCredentialSchema, FirebaseHashSchema, ScryptHashSchema])]);

export type ImportedPasswordHash = z.infer<typeof ImportedPasswordHashSchema>;

/** How a user's password is held: Porta's own Argon2id, or an import not yet used to sign in. */
export const PasswordSchemeSchema = z.string().regex(/^(argon2id|imported:[a-z0-9-]+)$/);
