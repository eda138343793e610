import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * AES-256-GCM for secrets at rest (TOTP secrets, private signing keys). The stored form is
 * `v1.<iv>.<tag>.<ciphertext>` in base64url; the associated data binds a ciphertext to its use,
 * so a value copied from one column to another fails to decrypt.
 */
export interface Encrypter {
  encrypt(plaintext: string, associatedData: string): string;
  decrypt(stored: string, associatedData: string): string;
}

export function createEncrypter(key: Buffer): Encrypter {
  if (key.length !== 32) throw new Error("the encryption key must be 32 bytes");
  return {
    encrypt(plaintext, associatedData) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(Buffer.from(associatedData, "utf8"));
      const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      return ["v1", iv, cipher.getAuthTag(), ciphertext].map((p) => (typeof p === "string" ? p : p.toString("base64url"))).join(".");
    },
    decrypt(stored, associatedData) {
      const [version, iv, tag, ciphertext] = stored.split(".");
      if (version !== "v1" || !iv || !tag || ciphertext === undefined) throw new Error("unrecognised ciphertext format");
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
      decipher.setAAD(Buffer.from(associatedData, "utf8"));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString("utf8");
    },
  };
}
