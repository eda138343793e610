import { createHash, createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import { createEncrypter, type Encrypter } from "../../crypto/encryption";

/**
 * The keys of export packages, both derived from ENCRYPTION_KEY: an HMAC key that signs a
 * package and an AES-256-GCM key that seals the TOTP secrets inside it. A package therefore
 * verifies and opens only where ENCRYPTION_KEY is the same (another database of the same
 * deployment, a restore, a staging copy); anywhere else the import refuses it by key id.
 */
export interface PackageSeal {
  /** Fingerprint of the signing key, carried in the package so a refusal can say why. */
  keyId: string;
  sign(unsigned: unknown): string;
  /** True when `signature` is this deployment's signature of `unsigned`. */
  verify(unsigned: unknown, signature: string): boolean;
  secrets: Encrypter;
}

const derive = (root: Buffer, info: string) => Buffer.from(hkdfSync("sha256", root, Buffer.alloc(0), info, 32));

/** JSON with object keys sorted at every level, so a signature does not depend on key order. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

export function createPackageSeal(encryptionKey: Buffer): PackageSeal {
  const signingKey = derive(encryptionKey, "porta export packages: signing v1");
  const mac = (unsigned: unknown) => createHmac("sha256", signingKey).update(canonicalJson(unsigned), "utf8").digest();
  return {
    keyId: createHash("sha256").update(signingKey).digest("hex").slice(0, 16),
    sign: (unsigned) => mac(unsigned).toString("base64url"),
    verify(unsigned, signature) {
      const expected = mac(unsigned);
      const given = Buffer.from(signature, "base64url");
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
    secrets: createEncrypter(derive(encryptionKey, "porta export packages: sealed secrets v1")),
  };
}

/** Associated data binding a sealed TOTP secret to the user it belongs to. */
export const sealedTotpAad = (email: string) => `porta-export-totp:${email.toLowerCase()}`;
