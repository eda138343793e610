import type { JWTPayload } from "jose";
import { inRequestScope, requestScope } from "../../request-scope";

/**
 * The claims of the access token JWT a protocol request presented, once its signature has been
 * verified for the organization (oidc/edge/mount.ts, adapter.ts). Token records that Porta does not
 * store (client_credentials tokens: their JWT is the record) are read from here by their jti.
 */
export function withVerifiedJwt<T>(claims: JWTPayload | undefined, fn: () => T): T {
  return claims ? inRequestScope({ verifiedJwt: claims }, fn) : fn();
}

/** The verified claims of this request's JWT when its jti is `jti`. */
export function verifiedJwtClaims(jti: string): JWTPayload | undefined {
  const claims = requestScope()?.verifiedJwt;
  return claims?.jti === jti ? claims : undefined;
}
