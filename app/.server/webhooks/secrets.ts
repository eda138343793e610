import { randomBytes } from "node:crypto";
import type { Encrypter } from "../crypto/encryption";

/**
 * An endpoint's signing secret in the Standard Webhooks form, `whsec_` and 32 random bytes in
 * base64, made by Porta (never chosen by an administrator), shown once when made, and kept
 * encrypted with ENCRYPTION_KEY, bound to its endpoint (decision 047).
 */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

const associatedData = (endpointId: string) => `webhook:${endpointId}`;

export function sealWebhookSecret(encrypter: Encrypter, endpointId: string, secret: string): string {
  return encrypter.encrypt(secret, associatedData(endpointId));
}

export function openWebhookSecret(encrypter: Encrypter, endpointId: string, sealed: string): string {
  return encrypter.decrypt(sealed, associatedData(endpointId));
}
