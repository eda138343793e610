import { randomInt } from "node:crypto";

/** 31 characters without look-alikes (no 0/O, 1/I/L). */
export const RECOVERY_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
export const RECOVERY_CODE_COUNT = 10;

/** Ten fresh codes of the shape XXXX-XXXX, from a CSPRNG. */
export function generateRecoveryCodes(count = RECOVERY_CODE_COUNT): string[] {
  return Array.from({ length: count }, () => {
    const chars = Array.from({ length: 8 }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]).join("");
    return `${chars.slice(0, 4)}-${chars.slice(4)}`;
  });
}

/** What is hashed and compared: upper case, no dashes or spaces ("abcd-efgh" = "ABCDEFGH"). */
export function normalizeRecoveryCode(input: string): string {
  return input.replace(/[\s-]+/g, "").toUpperCase();
}

export function looksLikeRecoveryCode(input: string): boolean {
  return /^[A-Z0-9]{8}$/.test(normalizeRecoveryCode(input));
}
