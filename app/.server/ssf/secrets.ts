import type { Encrypter } from "../crypto/encryption";

/**
 * The Authorization header a receiver asked Porta to send with each push (SSF 1.0 §8.1.1's
 * `authorization_header`): a credential of the receiver's, kept encrypted with ENCRYPTION_KEY and
 * bound to its stream, never shown again (a read of the stream leaves it out).
 */
const associatedData = (streamId: string) => `ssf-stream:${streamId}`;

export function sealPushAuthorization(encrypter: Encrypter, streamId: string, value: string): string {
  return encrypter.encrypt(value, associatedData(streamId));
}

export function openPushAuthorization(encrypter: Encrypter, streamId: string, sealed: string): string {
  return encrypter.decrypt(sealed, associatedData(streamId));
}
