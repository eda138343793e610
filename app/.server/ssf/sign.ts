import { importJWK, SignJWT, type JWTPayload } from "jose";
import type { KeyService } from "../oidc/provider/keys";

/**
 * A Security Event Token (RFC 8417, SSF 1.0 §4) signed ES256 with the organization's active key
 * (decision 016), `typ: secevent+jwt`, so that a receiver verifies it against the organization's
 * jwks_uri like its ID tokens. No `exp` and no `sub`: RFC 8417 §2.2 says a SET is not a token to
 * act on, and SSF names the subject in `sub_id`.
 */
export async function signSet(keys: Pick<KeyService, "providerJwks">, organizationId: string, claims: JWTPayload): Promise<string> {
  const [active] = await keys.providerJwks(organizationId);
  if (!active) throw new Error("the organization has no signing key");
  const key = await importJWK(active, "ES256");
  return new SignJWT(claims).setProtectedHeader({ alg: "ES256", kid: active.kid, typ: "secevent+jwt" }).sign(key);
}
