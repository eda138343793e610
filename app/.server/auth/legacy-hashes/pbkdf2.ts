import { pbkdf2 } from "node:crypto";
import { promisify } from "node:util";
import type { z } from "zod";
import type { Pbkdf2ParamsSchema } from "./schema";

type Params = z.infer<typeof Pbkdf2ParamsSchema>;
const pbkdf2Async = promisify(pbkdf2);

/** H for PBKDF2: the derived key, base64 (on the thread pool, not the event loop). */
export async function derivePbkdf2(params: Params, password: string): Promise<string> {
  const key = await pbkdf2Async(Buffer.from(password, "utf8"), Buffer.from(params.salt, "base64"), params.iterations, params.keyLength, params.digest);
  return key.toString("base64");
}

const DJANGO = /^pbkdf2_(sha1|sha256)\$(\d{1,8})\$([^$]{1,128})\$([A-Za-z0-9+/]+={0,2})$/;

/**
 * Django's `pbkdf2_sha256$<iterations>$<salt>$<base64 hash>` (and `pbkdf2_sha1`): the salt is
 * text, used as its UTF-8 bytes; the key is as long as the digest.
 */
export function parseDjangoPbkdf2(text: string): { params: Params; secret: string } | null {
  const match = DJANGO.exec(text);
  if (!match) return null;
  const [, digest, iterations, salt, hash] = match;
  const key = Buffer.from(hash!, "base64");
  return {
    params: { scheme: "pbkdf2", digest: digest as Params["digest"], iterations: Number(iterations), salt: Buffer.from(salt!, "utf8").toString("base64"), keyLength: key.length },
    secret: key.toString("base64"),
  };
}

/** Keycloak's credential `algorithm` names and the digest each uses. */
export const KEYCLOAK_PBKDF2: Record<string, Params["digest"]> = { pbkdf2: "sha1", "pbkdf2-sha256": "sha256", "pbkdf2-sha512": "sha512" };

/**
 * A Keycloak password credential: `secretData` {value, salt} (both base64) and `credentialData`
 * {hashIterations, algorithm}. Keycloak derives 512 bits by default (older releases 256 for
 * pbkdf2-sha256) and verifies with the stored value's own length, so the key length is the value's.
 */
export function parseKeycloak(secret: { value: string; salt: string }, credential: { hashIterations: number; algorithm: string }): { params: Params; secret: string } | null {
  const digest = KEYCLOAK_PBKDF2[credential.algorithm];
  if (!digest) return null;
  const key = Buffer.from(secret.value, "base64");
  return {
    params: { scheme: "pbkdf2", digest, iterations: credential.hashIterations, salt: Buffer.from(secret.salt, "base64").toString("base64"), keyLength: key.length },
    secret: key.toString("base64"),
  };
}
