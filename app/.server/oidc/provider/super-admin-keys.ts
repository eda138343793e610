import type { JWK } from "jose";
import { getOrganizationBySlug } from "../../directory/organizations";
import type { Context } from "../../context";

/**
 * The public keys that may sign Admin API and console tokens: the super-admin organization's
 * own (plus the shared keys of earlier versions while they retire), never another tenant's.
 */
export async function superAdminPublicJwks(ctx: Context<"cache" | "config" | "keys">): Promise<JWK[]> {
  const organization = await getOrganizationBySlug(ctx.db, ctx.cache, ctx.config.superAdminSlug);
  // Only before the bootstrap is there no such organization, and then no key to trust.
  return organization ? ctx.keys.publicJwks(organization.id) : [];
}
