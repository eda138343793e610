import argon2 from "argon2";
import { normalizePassword } from "./password-policy";

/** Argon2id parameters; the defaults are OWASP's minimum (m=19 MiB, t=2, p=1). */
export interface Argon2Params {
  memoryCost: number;
  timeCost: number;
  parallelism: number;
}

export const DEFAULT_ARGON2_PARAMS: Argon2Params = { memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export function hashPassword(password: string, params: Argon2Params = DEFAULT_ARGON2_PARAMS): Promise<string> {
  return argon2.hash(normalizePassword(password), { type: argon2.argon2id, ...params });
}

export function verifyPassword(hash: string, password: string): Promise<boolean> {
  return argon2.verify(hash, normalizePassword(password)).catch(() => false);
}

export function needsRehash(hash: string, params: Argon2Params = DEFAULT_ARGON2_PARAMS): boolean {
  try {
    return argon2.needsRehash(hash, { ...params });
  } catch {
    return true;
  }
}

/**
 * The one object through which Porta hashes and verifies passwords. Login code calls
 * `verify` exactly once per admitted attempt; tests count those calls on this object.
 */
export interface PasswordHasher {
  readonly params: Argon2Params;
  hash(password: string): Promise<string>;
  verify(hash: string, password: string): Promise<boolean>;
  needsRehash(hash: string): boolean;
  /** A hash of a random password with the current parameters, verified when no account is eligible. */
  dummyHash(): Promise<string>;
}

export function createPasswordHasher(params: Argon2Params = DEFAULT_ARGON2_PARAMS): PasswordHasher {
  let dummy: Promise<string> | undefined;
  return {
    params,
    hash: (password) => hashPassword(password, params),
    verify: (hash, password) => verifyPassword(hash, password),
    needsRehash: (hash) => needsRehash(hash, params),
    dummyHash() {
      dummy ??= hashPassword(crypto.randomUUID(), params);
      return dummy;
    },
  };
}
