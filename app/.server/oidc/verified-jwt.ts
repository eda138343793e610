import { AsyncLocalStorage } from "node:async_hooks";
import type { JWTPayload } from "jose";

/**
 * The claims of the access token JWT a protocol request presented, once its signature has been
 * verified for the organization (oidc/mount.ts, adapter.ts). Token records that Porta does not
 * store (client_credentials tokens: their JWT is the record) are read from here by their jti.
 */
const current = new AsyncLocalStorage<JWTPayload>();

export function withVerifiedJwt<T>(claims: JWTPayload | undefined, fn: () => T): T {
  return claims ? current.run(claims, fn) : fn();
}

/** The verified claims of this request's JWT when its jti is `jti`. */
export function verifiedJwtClaims(jti: string): JWTPayload | undefined {
  const claims = current.getStore();
  return claims?.jti === jti ? claims : undefined;
}
