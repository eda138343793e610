import { createPrivateKey, type KeyObject } from "node:crypto";
import { SignJWT } from "jose";
import { APPLE_ISSUER } from "~/schemas/identity-provider";

/**
 * Sign in with Apple (decision 055): an OpenID provider whose client secret is not a string but
 * a short-lived ES256 JWT that the client signs with the private key Apple issued (a .p8 file),
 * naming the team (iss), the Services ID (sub) and the key (kid). The key is stored like any
 * client secret (encrypted, write-only); the JWT is made when the provider's configuration is.
 */

/** How long one client-secret JWT lasts (Apple accepts up to six months; the configuration is rebuilt every few minutes). */
const CLIENT_SECRET_TTL_SECONDS = 60 * 60;

/** The .p8 text as a P-256 private key, or null when it is not one. */
export function applePrivateKey(pem: string): KeyObject | null {
  try {
    const key = createPrivateKey({ key: pem, format: "pem" });
    return key.asymmetricKeyType === "ec" && key.asymmetricKeyDetails?.namedCurve === "prime256v1" ? key : null;
  } catch {
    return null;
  }
}

export async function appleClientSecret(input: { pem: string; teamId: string; keyId: string; clientId: string; now?: Date }): Promise<string> {
  const key = applePrivateKey(input.pem);
  if (!key) throw new Error("the stored Apple key is not a P-256 private key");
  const iat = Math.floor((input.now ?? new Date()).getTime() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: "ES256", kid: input.keyId })
    .setIssuer(input.teamId)
    .setSubject(input.clientId)
    .setAudience(APPLE_ISSUER)
    .setIssuedAt(iat)
    .setExpirationTime(iat + CLIENT_SECRET_TTL_SECONDS)
    .sign(key);
}

/** The name Apple posts once, on a person's first sign-in (`user`: {"name":{"firstName","lastName"}}). */
export function appleFirstSignInName(user: string | null): { givenName: string | null; familyName: string | null } {
  if (!user || user.length > 4096) return { givenName: null, familyName: null };
  try {
    const parsed = JSON.parse(user) as { name?: { firstName?: unknown; lastName?: unknown } };
    const text = (v: unknown) => (typeof v === "string" && v.trim() ? v.trim().slice(0, 200) : null);
    return { givenName: text(parsed.name?.firstName), familyName: text(parsed.name?.lastName) };
  } catch {
    return { givenName: null, familyName: null };
  }
}
