import type { JWK } from "jose";
import { getOrganizationBySlug } from "../../directory/organizations";
import type { Services } from "../../services";

/**
 * The public keys that may sign Admin API and console tokens: the super-admin organization's
 * own (plus the shared keys of earlier versions while they retire), never another tenant's.
 */
export async function superAdminPublicJwks(services: Pick<Services, "db" | "cache" | "config" | "keys">): Promise<JWK[]> {
  const organization = await getOrganizationBySlug(services.db.prisma, services.cache, services.config.superAdminSlug);
  // Only before the bootstrap is there no such organization, and then no key to trust.
  return organization ? services.keys.publicJwks(organization.id) : [];
}
