import { createHash, createHmac, hkdfSync } from "node:crypto";

/**
 * One-time tokens sent by email (magic links, password resets, invitations). A token is the
 * HMAC of its purpose and the id of what owns it (a job, an invitation) under a key derived
 * from ENCRYPTION_KEY: the owner can always re-create the same token (a retried job resends
 * the same link), and the database stores only its SHA-256.
 */
export interface TokenMint {
  derive(purpose: "magic-link" | "password-reset" | "invitation" | "device-cookie" | "email-change", ownerId: string): string;
  hash(token: string): string;
}

export function createTokenMint(encryptionKey: Buffer): TokenMint {
  const key = Buffer.from(hkdfSync("sha256", encryptionKey, Buffer.alloc(0), "porta one-time tokens", 32));
  return {
    derive: (purpose, ownerId) => createHmac("sha256", key).update(`${purpose}:${ownerId}`).digest("base64url"),
    hash: (token) => createHash("sha256").update(token, "utf8").digest("hex"),
  };
}
