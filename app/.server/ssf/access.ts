import type { Context } from "../context";
import { getClientRecord, isClientUsable } from "../directory/clients";
import { isDatabaseUnavailable } from "../db/errors";
import { SsfError } from "./errors";
import type { SsfAccess } from "./streams";

/**
 * Who may manage an organization's streams (decision 093): a client of that organization, with
 * an access token it got for itself (client_credentials: `sub` is its `client_id`) from the
 * organization's token endpoint, for the transmitter's API resource (`{issuer}/ssf`, which an
 * administrator defines with the scope `ssf.manage` and grants to the client, decision 077),
 * carrying that scope. The token's signature, lifetime and revocation are the organization
 * provider's to check, as at its introspection endpoint. A missing, invalid, expired, revoked or
 * other organization's token is one 401; a valid token without the scope, or for another
 * resource, is 403.
 */
export const SSF_SCOPE = "ssf.manage";
export const ssfResourceOf = (issuer: string) => `${issuer}/ssf`;

const challenge = (error?: string, scope = false) => ({
  "WWW-Authenticate": `Bearer realm="ssf"${error ? `, error="${error}"` : ""}${scope ? `, scope="${SSF_SCOPE}"` : ""}`,
});

export interface SsfOrganization {
  id: string;
  slug: string;
  issuer: string;
}

export async function requireSsfOrganization(ctx: Context<"config">, slug: string): Promise<SsfOrganization> {
  const org = await ctx.db.organization.findUnique({ where: { slug: slug.toLowerCase() }, select: { id: true, slug: true, status: true } });
  if (!org || org.status !== "active" || org.slug === ctx.config.superAdminSlug) throw new SsfError(404, "not_found", "There is no Shared Signals transmitter here.");
  return { id: org.id, slug: org.slug, issuer: `${ctx.config.baseUrl}/${org.slug}` };
}

export async function requireSsfAccess(ctx: Context<"config" | "oidc" | "cache">, slug: string, bearer: string | undefined): Promise<SsfAccess> {
  const org = await requireSsfOrganization(ctx, slug);
  if (bearer === undefined) throw new SsfError(401, "invalid_token", "An access token of this organization is required (Authorization: Bearer).", challenge());
  const refused = () => new SsfError(401, "invalid_token", "The access token is not valid for this organization.", challenge("invalid_token"));
  const tenant = await ctx.oidc.get(org.slug);
  if (!tenant) throw new SsfError(404, "not_found", "There is no Shared Signals transmitter here.");
  let claims: Awaited<ReturnType<typeof tenant.claimsOfSignedJwt>>;
  let onRecord: boolean;
  try {
    claims = await tenant.claimsOfSignedJwt(bearer);
    // The provider's own record: unexpired and not revoked (client_credentials tokens are kept as their JWT and a revocation marker).
    onRecord = claims !== undefined && (await tenant.provider.ClientCredentials.find(bearer)) !== undefined;
  } catch (error) {
    if (isDatabaseUnavailable(error)) throw error;
    throw refused();
  }
  if (!claims || !onRecord || claims.iss !== org.issuer) throw refused();
  const clientId = claims.client_id;
  if (typeof clientId !== "string" || claims.sub !== clientId) throw refused();
  // A sender-constrained token needs its proof, which these endpoints do not take.
  if (claims.cnf !== undefined) throw refused();
  const client = await getClientRecord(ctx.db, ctx.cache, clientId);
  if (!client || client.organizationId !== org.id || !isClientUsable(client)) throw refused();
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  const scopes = typeof claims.scope === "string" ? claims.scope.split(" ") : [];
  if (!audiences.includes(ssfResourceOf(org.issuer)) || !scopes.includes(SSF_SCOPE)) {
    throw new SsfError(403, "insufficient_scope", `The token must be for ${ssfResourceOf(org.issuer)} with the scope ${SSF_SCOPE}.`, challenge("insufficient_scope", true));
  }
  return { organizationId: org.id, slug: org.slug, issuer: org.issuer, clientId };
}
