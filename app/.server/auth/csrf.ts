import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * CSRF tokens for the interaction forms: an HMAC of the interaction uid under a key derived
 * from ENCRYPTION_KEY. The interaction cookie (httpOnly, per-uid path) is required as well,
 * so a token is useful only to the browser that started that interaction.
 */
export interface CsrfGuard {
  tokenFor(uid: string): string;
  verify(uid: string, token: unknown): boolean;
}

export function createCsrfGuard(encryptionKey: Buffer): CsrfGuard {
  const key = createHmac("sha256", encryptionKey).update("porta csrf key").digest();
  const tokenFor = (uid: string) => createHmac("sha256", key).update(`interaction:${uid}`).digest("base64url");
  return {
    tokenFor,
    verify(uid, token) {
      if (typeof token !== "string") return false;
      const expected = Buffer.from(tokenFor(uid));
      const given = Buffer.from(token);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}
