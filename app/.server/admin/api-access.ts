import type { PrismaClient } from "~/generated/prisma/client";
import type { ReadThroughCache } from "../cache/read-through";
import { getClientRecord, isClientUsable } from "../directory/clients";
import { getOrganizationBySlug } from "../directory/organizations";
import { ADMIN_CLIENT_ID } from "./permissions";

/**
 * Which tokens are meant for the Admin API (decision 017): access tokens of the super-admin
 * organization whose audience is the Admin API as a resource (RFC 8707), issued to an admin
 * client, with the scopes the spec's admin client requests.
 */

/** The Admin API as a resource: the audience of every access token it accepts. */
export const adminApiResource = (baseUrl: string) => `${baseUrl}/api/admin`;

/**
 * An organization's own administration as a resource (decision 090): the audience of the tokens
 * its door `/{slug}/api/admin` accepts, issued by the organization's issuer to its clients marked
 * for administration (`adminApiAccess`). The super-admin organization's is the Admin API itself.
 */
export const organizationAdminResource = (issuer: string) => `${issuer}/api/admin`;

/** The spec's admin scope (`openid profile email roles`): an Admin API token carries all of it. */
export const ADMIN_API_SCOPES = ["openid", "profile", "email", "roles"] as const;

/** The shared admin client always, and the clients an operator marked. */
export const isAdminApiClient = (client: { id: string; adminApiAccess: boolean }) => client.id === ADMIN_CLIENT_ID || client.adminApiAccess;

/** Whether the client may call the Admin API now: an active admin client of the super-admin organization. */
export async function mayCallAdminApi(prisma: PrismaClient, cache: ReadThroughCache, superAdminSlug: string, clientId: string): Promise<boolean> {
  const [client, organization] = await Promise.all([getClientRecord(prisma, cache, clientId), getOrganizationBySlug(prisma, cache, superAdminSlug)]);
  return Boolean(client && organization && client.organizationId === organization.id && isClientUsable(client) && isAdminApiClient(client));
}
