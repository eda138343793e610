import type { JWTHeaderParameters, JWTPayload } from "jose";
import { ADMIN_API_SCOPES } from "../api-access";

/** RFC 9068 §2.1: the `typ` of a JWT access token, with or without its `application/` prefix. */
const ACCESS_TOKEN_TYP = /^(application\/)?at\+jwt$/i;

/**
 * Part of the Admin API's checks 2 and 3: a token whose signature and issuer verified is meant
 * for the Admin API only if it is a JWT access token (not an ID token), its audience is the
 * Admin API resource, and it names the client it was issued to and carries every admin scope.
 * Returns that client's id (whether the client may call the Admin API is checked against the
 * database), or undefined.
 */
export function adminTokenClientId(header: JWTHeaderParameters, payload: JWTPayload, resource: string): string | undefined {
  if (typeof header.typ !== "string" || !ACCESS_TOKEN_TYP.test(header.typ)) return undefined;
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (!audiences.includes(resource)) return undefined;
  const scopes = typeof payload.scope === "string" ? new Set(payload.scope.split(" ")) : new Set<string>();
  if (!ADMIN_API_SCOPES.every((scope) => scopes.has(scope))) return undefined;
  return typeof payload.client_id === "string" && payload.client_id !== "" ? payload.client_id : undefined;
}
