import { isUuid } from "~/schemas/uuid";
import type { ContextSource } from "../../context";
import { isDatabaseUnavailable } from "../../db/errors";
import { getClientRecord, isClientUsable } from "../../directory/clients";
import { getOrganizationBySlug } from "../../directory/organizations";
import { unauthorized } from "../../errors";
import { isAdminApiClient, organizationAdminResource } from "../api-access";
import { ORGANIZATION_ADMIN_ROLE, ORGANIZATION_AUDITOR_ROLE, organizationPermissionsOf } from "../organization-roles";
import type { AdminPermission } from "../permissions";
import { ORGANIZATION_CONSOLE_CLIENT_ID } from "../../oidc/storage/organization-console-client";
import { bearerTokenOf, isAccessTokenOnRecord, verifyIssuedToken } from "./access-token";
import { adminTokenClientId } from "./admin-token";
import type { Authenticate, Caller } from "./caller";

/**
 * The sign-in factors (RFC 8176) that count as more than a password: a second factor (`mfa`,
 * which a federated sign-in carries only when its provider is trusted for it) or a passkey
 * (`hwk`/`swk` with user verification).
 */
const STRONG_FACTORS = ["mfa", "hwk", "swk"];

interface OrganizationAdminRow {
  id: string;
  email: string;
  status: string;
  organizationId: string;
  role: string | null;
}

/**
 * The door of an organization's own administration, `/{slug}/api/admin` (decision 090), in the
 * order of the Admin API's checks; any failure is the same 401:
 * 1. a bearer token is present; 2. its ES256 signature verifies against the organization's
 * published keys, and it is still on record (not revoked, not expired); 3. `iss` is the
 * organization's issuer and the token is meant for its administration: an access token whose
 * audience is `${issuer}/api/admin`, issued to an active client of the organization marked for
 * administration, with the admin scope; 4. the user `sub` exists; 5. is active; 6. belongs to
 * the organization; 7. holds `org-admin` or `org-auditor`; 8. signed in with a second factor or
 * a passkey (the token's `amr`). The super-admin organization has no such door: its
 * administrators are service admins, on the Admin API.
 */
export async function requireOrganizationAdmin(services: ContextSource, request: Request, slug: string): Promise<Caller> {
  const token = bearerTokenOf(request);
  if (!token) throw unauthorized();
  const { prisma } = services.db;
  const normalized = slug.toLowerCase();
  if (normalized === services.config.superAdminSlug) throw unauthorized();
  const organization = await getOrganizationBySlug(prisma, services.cache, normalized);
  if (!organization || organization.status !== "active") throw unauthorized();

  const issuer = `${services.config.baseUrl}/${organization.slug}`;
  let sub: string;
  let jti: string | undefined;
  let clientId: string | undefined;
  let amr: unknown;
  try {
    const { payload, protectedHeader } = await verifyIssuedToken(services, issuer, () => services.keys.publicJwks(organization.id), token);
    if (payload.iss !== issuer || typeof payload.sub !== "string") throw unauthorized();
    sub = payload.sub;
    jti = typeof payload.jti === "string" ? payload.jti : undefined;
    amr = payload.amr;
    clientId = adminTokenClientId(protectedHeader, payload, organizationAdminResource(issuer));
  } catch (error) {
    if (isDatabaseUnavailable(error)) throw error;
    throw unauthorized();
  }
  if (!clientId || !jti || !(await isAccessTokenOnRecord(services, jti))) throw unauthorized();
  // The organization console's built-in client is no row; any other must be a usable administration client of the organization.
  if (clientId !== ORGANIZATION_CONSOLE_CLIENT_ID) {
    const client = await getClientRecord(prisma, services.cache, clientId);
    if (!client || client.organizationId !== organization.id || !isClientUsable(client) || !isAdminApiClient(client)) throw unauthorized();
  }

  if (!isUuid(sub)) throw unauthorized();
  const rows = await prisma.$queryRaw<OrganizationAdminRow[]>`
    SELECT u.id, u.email, u.status, u."organizationId", r.name AS role
    FROM "User" u
    LEFT JOIN "UserRole" ur ON ur."userId" = u.id
    LEFT JOIN "Role" r ON r.id = ur."roleId" AND r."organizationId" = u."organizationId"
    WHERE u.id = ${sub}::uuid`;
  const user = rows[0];
  if (!user || user.status !== "active" || user.organizationId !== organization.id) throw unauthorized();
  const roles = [...new Set(rows.map((r) => r.role).filter((name): name is string => name !== null))];
  if (!roles.includes(ORGANIZATION_ADMIN_ROLE) && !roles.includes(ORGANIZATION_AUDITOR_ROLE)) throw unauthorized();
  if (!Array.isArray(amr) || !amr.some((factor) => STRONG_FACTORS.includes(String(factor)))) throw unauthorized();

  const permissions: Set<AdminPermission> = organizationPermissionsOf(roles);
  return {
    admin: { id: user.id, email: user.email, organizationId: organization.id, roles, permissions },
    actorType: "org_admin",
    organizationId: organization.id,
    // An operation that declares no organization scope is refused before its input is read.
    may: (op) => op.organizationScope !== undefined && op.permission !== "public" && op.permission !== "authenticated" && permissions.has(op.permission),
  };
}

/** The authentication of one organization's door (its slug is the route's). */
export const authenticateOrganizationAdmin =
  (slug: string): Authenticate =>
  (services, request) =>
    requireOrganizationAdmin(services, request, slug);
