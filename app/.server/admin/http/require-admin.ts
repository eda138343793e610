import { isDatabaseUnavailable } from "../../db/errors";
import { isUuid } from "~/schemas/uuid";
import { systemActor } from "../../auth/actors";
import { readContext, type ContextSource } from "../../context";
import { superAdminPublicJwks } from "../../oidc/provider/super-admin-keys";
import { adminApiResource, mayCallAdminApi } from "../api-access";
import { SERVICE_ADMIN_ROLE } from "../permissions";
import { bearerTokenOf, isAccessTokenOnRecord, verifyIssuedToken } from "./access-token";
import { adminTokenClientId } from "./admin-token";
import { unauthorized } from "../../errors";

interface AdminRow {
  id: string;
  email: string;
  status: string;
  organizationId: string;
  slug: string;
  role: string | null;
  permission: string | null;
}


/** Who is calling the Admin API, once the seven checks of the spec have passed. */
export interface AdminUser {
  id: string;
  email: string;
  organizationId: string;
  roles: string[];
  permissions: Set<string>;
}

/**
 * The Admin API's authentication, in the spec's order; any failure is the same 401:
 * 1. a bearer token is present; 2. its ES256 signature verifies against Porta's published
 * keys (and it is still on record, i.e. not revoked); 3. `iss` is the super-admin issuer, and
 * the token is meant for the Admin API: an access token for its resource, issued to an admin
 * client with the admin scope (decision 017); 4. the user `sub` exists; 5. is active;
 * 6. belongs to the super-admin organization; 7. holds the `service-admin` role.
 */
export async function requireAdmin(services: ContextSource, request: Request): Promise<AdminUser> {
  const token = bearerTokenOf(request);
  if (!token) throw unauthorized();

  const issuer = `${services.config.baseUrl}/${services.config.superAdminSlug}`;
  let sub: string;
  let jti: string | undefined;
  let clientId: string | undefined;
  try {
    const { payload, protectedHeader } = await verifyIssuedToken(services, issuer, () => superAdminPublicJwks(readContext(services, systemActor(null))), token);
    if (payload.iss !== issuer || typeof payload.sub !== "string") throw unauthorized();
    sub = payload.sub;
    jti = typeof payload.jti === "string" ? payload.jti : undefined;
    clientId = adminTokenClientId(protectedHeader, payload, adminApiResource(services.config.baseUrl));
  } catch (error) {
    // The keys could not be loaded: the token may be good, so the client must not drop it (503).
    if (isDatabaseUnavailable(error)) throw error;
    throw unauthorized();
  }
  if (!clientId) throw unauthorized();
  const { prisma } = services.db;
  // Revoked or expired tokens are gone from the token store.
  if (!jti || !(await isAccessTokenOnRecord(services, jti))) throw unauthorized();
  // An operator may have unmarked or deactivated the client since the token was issued.
  if (!(await mayCallAdminApi(prisma, services.cache, services.config.superAdminSlug, clientId))) throw unauthorized();

  if (!isUuid(sub)) throw unauthorized();
  // One statement for the user, their organization, roles and permissions (every Admin API
  // request pays for it; the nested Prisma query costs about twice as much).
  const rows = await prisma.$queryRaw<AdminRow[]>`
    SELECT u.id, u.email, u.status, u."organizationId", o.slug, r.name AS role, pm.name AS permission
    FROM "User" u
    JOIN "Organization" o ON o.id = u."organizationId"
    LEFT JOIN "UserRole" ur ON ur."userId" = u.id
    LEFT JOIN "Role" r ON r.id = ur."roleId"
    LEFT JOIN "RolePermission" rp ON rp."roleId" = r.id
    LEFT JOIN "Permission" pm ON pm.id = rp."permissionId"
    WHERE u.id = ${sub}::uuid`;
  const user = rows[0];
  if (!user) throw unauthorized();
  if (user.status !== "active") throw unauthorized();
  if (user.slug.toLowerCase() !== services.config.superAdminSlug) throw unauthorized();
  const roles = [...new Set(rows.map((r) => r.role).filter((name): name is string => name !== null))];
  if (!roles.includes(SERVICE_ADMIN_ROLE)) throw unauthorized();
  const permissions = new Set(rows.map((r) => r.permission).filter((name): name is string => name !== null));
  return { id: user.id, email: user.email, organizationId: user.organizationId, roles, permissions };
}
