import type { KoaContextWithOIDC } from "oidc-provider";

/**
 * An administration token carries how its holder signed in (RFC 8176 `amr`), so the door that
 * takes it can require a second factor or a passkey of an organization's administrators
 * (decision 090) without looking for the browser session. The factors are those of the sign-in
 * the authorization code or refresh token was issued for (oidc-provider keeps them on both).
 * Tokens for other resources are left as they are.
 */
export function adminTokenFactors(ctx: KoaContextWithOIDC | undefined, token: { aud?: unknown }, adminResource: string | undefined): { amr: string[] } | undefined {
  if (!adminResource || !ctx?.oidc) return undefined;
  const audiences = Array.isArray(token.aud) ? token.aud : [token.aud];
  if (!audiences.includes(adminResource)) return undefined;
  const entities = ctx.oidc.entities as { AuthorizationCode?: { amr?: unknown }; RefreshToken?: { amr?: unknown }; DeviceCode?: { amr?: unknown } };
  const amr = entities.AuthorizationCode?.amr ?? entities.RefreshToken?.amr ?? entities.DeviceCode?.amr;
  return Array.isArray(amr) && amr.every((value) => typeof value === "string") ? { amr: amr as string[] } : undefined;
}
