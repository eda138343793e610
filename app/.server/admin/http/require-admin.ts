import { createHash } from "node:crypto";
import { isDatabaseUnavailable } from "../../db/errors";
import { isUuid } from "~/schemas/uuid";
import { createLocalJWKSet, jwtVerify, type JWK } from "jose";
import { systemActor } from "../../auth/actors";
import { readContext, type ContextSource } from "../../context";
import { superAdminPublicJwks } from "../../oidc/provider/super-admin-keys";
import { adminApiResource, mayCallAdminApi } from "../api-access";
import { SERVICE_ADMIN_ROLE } from "../permissions";
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

/** Published keys per running Porta (one process may run several, as the tests do). */
const keyCaches = new WeakMap<ContextSource, { at: number; changes: number; jwks: ReturnType<typeof createLocalJWKSet> }>();
const KEY_CACHE_MS = 15_000;

async function activeKeys(services: ContextSource) {
  let cached = keyCaches.get(services);
  // A key change this process made or noticed (a rotation, a retirement) counts at once.
  if (!cached || Date.now() - cached.at > KEY_CACHE_MS || cached.changes !== services.keys.changeCount()) {
    const changes = services.keys.changeCount();
    const keys: JWK[] = await superAdminPublicJwks(readContext(services, systemActor(null)));
    cached = { at: Date.now(), changes, jwks: createLocalJWKSet({ keys }) };
    keyCaches.set(services, cached);
  }
  return cached.jwks;
}

/** A key another process just activated is not in our cache yet: reload once (at most every second) and try again. */
async function verifyWithFreshKeys(services: ContextSource, token: string) {
  try {
    return await jwtVerify(token, await activeKeys(services), { algorithms: ["ES256"] });
  } catch (error) {
    const cached = keyCaches.get(services);
    if ((error as { code?: string }).code !== "ERR_JWKS_NO_MATCHING_KEY" || (cached && Date.now() - cached.at < 1_000)) throw error;
    keyCaches.delete(services);
    return jwtVerify(token, await activeKeys(services), { algorithms: ["ES256"] });
  }
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
  const header = request.headers.get("authorization") ?? "";
  const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/.exec(header.trim());
  if (!match) throw unauthorized();
  const token = match[1]!;

  const issuer = `${services.config.baseUrl}/${services.config.superAdminSlug}`;
  let sub: string;
  let jti: string | undefined;
  let clientId: string | undefined;
  try {
    const { payload, protectedHeader } = await verifyWithFreshKeys(services, token);
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
  if (!jti) throw unauthorized();
  const stored = await prisma.oidcPayload.findUnique({
    where: { model_idHash: { model: "AccessToken", idHash: createHash("sha256").update(jti, "utf8").digest("base64url") } },
    select: { expiresAt: true },
  });
  if (!stored || (stored.expiresAt && stored.expiresAt <= new Date())) throw unauthorized();
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
