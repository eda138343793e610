import { createHash } from "node:crypto";
import type { z } from "zod";
import type { DigestParamsSchema } from "./schema";

type Params = z.infer<typeof DigestParamsSchema>;

/** H for a single MD5 or SHA-1 digest: digest(salt + password) or digest(password + salt), base64. Weak: imported only on request. */
export async function deriveDigest(params: Params, password: string): Promise<string> {
  const salt = Buffer.from(params.salt, "base64");
  const secret = Buffer.from(password, "utf8");
  const hash = createHash(params.algorithm);
  hash.update(params.saltPosition === "prefix" ? salt : secret);
  hash.update(params.saltPosition === "prefix" ? secret : salt);
  return hash.digest("base64");
}

const SIZE = { md5: 16, sha1: 20 } as const;
const LDAP = /^\{(SSHA|SHA|SMD5|MD5)\}([A-Za-z0-9+/]+={0,2})$/i;

/**
 * LDAP's `{SHA}`, `{SSHA}`, `{MD5}` and `{SMD5}` (base64 of the digest, then the salt), and bare
 * hex digests (32 hex digits: MD5; 40: SHA-1) without a salt.
 */
export function parseDigest(text: string): { params: Params; secret: string } | null {
  const hex = /^[0-9a-f]{32}$|^[0-9a-f]{40}$/i.exec(text);
  if (hex) {
    const algorithm = text.length === 32 ? "md5" : "sha1";
    return { params: { scheme: "digest", algorithm, salt: "", saltPosition: "suffix" }, secret: Buffer.from(text, "hex").toString("base64") };
  }
  const ldap = LDAP.exec(text);
  if (!ldap) return null;
  const tag = ldap[1]!.toUpperCase();
  const algorithm = tag.endsWith("SHA") ? "sha1" : "md5";
  const bytes = Buffer.from(ldap[2]!, "base64");
  const salted = tag === "SSHA" || tag === "SMD5";
  if (salted ? bytes.length <= SIZE[algorithm] : bytes.length !== SIZE[algorithm]) return null;
  return {
    params: { scheme: "digest", algorithm, salt: bytes.subarray(SIZE[algorithm]).toString("base64"), saltPosition: "suffix" },
    secret: bytes.subarray(0, SIZE[algorithm]).toString("base64"),
  };
}
