import type * as Otpauth from "otpauth";
import { requiredOnFirstUse } from "../../lazy";

/** Loaded with the first TOTP enrolment or check, not at every start (decision 056). */
const otpauth = requiredOnFirstUse<typeof Otpauth>("otpauth");

/** RFC 6238: SHA-1, 6 digits, 30-second steps, one step of tolerance either way. */
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
export const TOTP_WINDOW = 1;

export function generateTotpSecret(): string {
  return new (otpauth().Secret)({ size: 20 }).base32;
}

function totpFor(secretBase32: string, issuer = "Porta", label = "account") {
  const { Secret, TOTP } = otpauth();
  return new TOTP({ issuer, label, algorithm: "SHA1", digits: TOTP_DIGITS, period: TOTP_PERIOD_SECONDS, secret: Secret.fromBase32(secretBase32) });
}

/** The secret of raw key bytes, as Porta stores it (another system's export may keep the bytes). */
export function totpSecretOfBytes(bytes: Uint8Array): string {
  // A copy: a Buffer may be a view into a larger pool, whose whole ArrayBuffer is not the key.
  return new (otpauth().Secret)({ buffer: new Uint8Array(bytes).buffer }).base32;
}

/** RFC 4648 base32 without padding, as Porta stores secrets and authenticator apps show them. */
export const TOTP_SECRET_BASE32 = /^[A-Z2-7]{16,128}$/;

/** The otpauth:// URI an authenticator app scans. */
export function totpUri(secretBase32: string, issuer: string, label: string): string {
  return totpFor(secretBase32, issuer, label).toString();
}

/** The QR code of an otpauth:// URI as a data: URL; qrcode loads with the first enrollment, not at start (decision 056). */
export async function totpQrDataUrl(uri: string): Promise<string> {
  const { default: QRCode } = await import("qrcode");
  return QRCode.toDataURL(uri, { margin: 1, width: 220 });
}

/**
 * The time step a code belongs to when it is valid within ±1 step of `now`, else null. The
 * caller accepts a step only if it is later than the last one used (no replay).
 */
export function matchTotpStep(secretBase32: string, code: string, now = Date.now()): number | null {
  const token = code.replace(/\s+/g, "");
  if (!/^\d{6}$/.test(token)) return null;
  const delta = totpFor(secretBase32).validate({ token, timestamp: now, window: TOTP_WINDOW });
  if (delta === null) return null;
  return Math.floor(now / 1000 / TOTP_PERIOD_SECONDS) + delta;
}

/** The current code (tests and the setup page's self-check use it). */
export function currentTotpCode(secretBase32: string, now = Date.now()): string {
  return totpFor(secretBase32).generate({ timestamp: now });
}

/** The additional data a user's TOTP secret is encrypted under: a secret copied to another user does not decrypt. */
export const totpAad = (userId: string) => `totp-secret:${userId}`;
