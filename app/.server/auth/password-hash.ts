import argon2 from "argon2";

/** Argon2id parameters; the defaults are OWASP's minimum (m=19 MiB, t=2, p=1). */
export interface Argon2Params {
  memoryCost: number;
  timeCost: number;
  parallelism: number;
}

export const DEFAULT_ARGON2_PARAMS: Argon2Params = { memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export function hashPassword(password: string, params: Argon2Params = DEFAULT_ARGON2_PARAMS): Promise<string> {
  return argon2.hash(password.normalize("NFKC"), { type: argon2.argon2id, ...params });
}

export function verifyPassword(hash: string, password: string): Promise<boolean> {
  return argon2.verify(hash, password.normalize("NFKC")).catch(() => false);
}

export function needsRehash(hash: string, params: Argon2Params = DEFAULT_ARGON2_PARAMS): boolean {
  return argon2.needsRehash(hash, { ...params });
}
