import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import { SETTINGS } from "../../settings/registry";

/**
 * Email one-time codes: six digits derived from the code row's id under a server key (so the
 * job that mails a code can re-create it, and a retry mails the same code), stored as an HMAC.
 */
export const EMAIL_OTP_TTL_MINUTES = SETTINGS["auth.emailOtpTtlMinutes"].default;
export const MAX_ACTIVE_EMAIL_OTPS = 3;

export interface OtpMint {
  codeFor(codeId: string): string;
  hash(code: string): string;
  matches(code: string, storedHash: string): boolean;
}

export function createOtpMint(encryptionKey: Buffer): OtpMint {
  const key = Buffer.from(hkdfSync("sha256", encryptionKey, Buffer.alloc(0), "porta email otp", 32));
  const hash = (code: string) => createHmac("sha256", key).update(`hash:${code}`).digest("hex");
  return {
    codeFor(codeId) {
      // 48 bits of HMAC output reduced to 6 digits: the bias is below 1e-8.
      const value = createHmac("sha256", key).update(`code:${codeId}`).digest().readUIntBE(0, 6);
      return String(value % 1_000_000).padStart(6, "0");
    },
    hash,
    matches(code, storedHash) {
      const given = Buffer.from(hash(code), "hex");
      const stored = Buffer.from(storedHash, "hex");
      return given.length === stored.length && timingSafeEqual(given, stored);
    },
  };
}
