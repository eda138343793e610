import type { Encrypter } from "../crypto/encryption";

/**
 * A sink's token or API key, kept encrypted with ENCRYPTION_KEY and bound to its sink (decision
 * 092), like a webhook's signing secret; the Admin API answers only whether one is set and its
 * last four characters.
 */
const associatedData = (sinkId: string) => `audit-sink:${sinkId}`;

export function sealSinkSecret(encrypter: Encrypter, sinkId: string, secret: string): string {
  return encrypter.encrypt(secret, associatedData(sinkId));
}

export function openSinkSecret(encrypter: Encrypter, sinkId: string, sealed: string): string {
  return encrypter.decrypt(sealed, associatedData(sinkId));
}

/** The last four characters tell secrets apart; of a short secret they would give away too much of it. */
export const lastFourOf = (secret: string): string | null => (secret.length >= 12 ? secret.slice(-4) : null);
