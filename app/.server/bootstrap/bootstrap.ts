import { randomBytes } from "node:crypto";
import { Prisma, type PrismaClient } from "~/generated/prisma/client";
import { DEVICE_CODE_GRANT } from "~/schemas/client";
import { ADMIN_CLIENT_ID, ADMIN_CLIENT_SCOPE, ADMIN_PERMISSIONS, SERVICE_ADMIN_ROLE } from "../admin/permissions";
import { ensureOrganizationRoles } from "../admin/organization-roles";
import { normalizeEmail } from "~/schemas/email";
import { hashPassword } from "../auth/password-hash";

/** The shared admin client signs in with a browser (code + PKCE) or, from a machine without one, with a code (RFC 8628). */
const ADMIN_CLIENT_GRANT_TYPES = ["authorization_code", "refresh_token", DEVICE_CODE_GRANT];

const BOOTSTRAP_LOCK_KEY = 72707370;
const DEFAULT_ADMIN_EMAIL = "admin@localhost";

export interface BootstrapOptions {
  superAdminSlug: string;
  baseUrl: string;
  adminEmail?: string | undefined;
  adminPassword?: string | undefined;
  /** Gives the super-admin organization its signing key in the bootstrap's transaction. */
  signingKeys?: { ensureActiveKeyIn(tx: Prisma.TransactionClient, organizationId: string): Promise<void> };
}

export interface BootstrapResult {
  organizationId: string;
  /** Present only when this run created the first service-admin. */
  createdAdmin?: { email: string; generatedPassword?: string };
}

/** Loopback redirect URIs of the shared admin client; any port matches them (RFC 8252 §7.3). */
export function adminClientRedirectUris(baseUrl: string): string[] {
  const loopback = ["http://127.0.0.1", "http://localhost", "http://[::1]"].flatMap((origin) => [
    `${origin}/callback`,
    `${origin}/api/oidc/callback`,
  ]);
  const consoleCallback = `${baseUrl}/api/oidc/callback`;
  const { hostname } = new URL(baseUrl);
  const isLoopback = ["127.0.0.1", "localhost", "[::1]"].includes(hostname);
  return isLoopback ? loopback : [...loopback, consoleCallback];
}

/**
 * Makes sure the super-admin organization, its `service-admin` role with every admin
 * permission, the shared admin client and a first admin exist. Safe to run at every start and
 * from several processes at once (an advisory lock serializes them).
 */
export async function bootstrap(prisma: PrismaClient, options: BootstrapOptions): Promise<BootstrapResult> {
  const email = normalizeEmail(options.adminEmail ?? DEFAULT_ADMIN_EMAIL);
  const generatedPassword = options.adminPassword ? undefined : randomBytes(15).toString("base64url");
  // Hash outside the transaction: Argon2id takes tens of milliseconds.
  const passwordHash = await hashPassword(options.adminPassword ?? generatedPassword!);

  return prisma.$transaction(
    async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${BOOTSTRAP_LOCK_KEY})`;

      const organization = await tx.organization.upsert({
        where: { slug: options.superAdminSlug },
        create: { slug: options.superAdminSlug, name: "Porta Administration", defaultLoginMethods: ["password"], oauth21: true },
        update: {},
      });
      const organizationId = organization.id;
      await options.signingKeys?.ensureActiveKeyIn(tx, organizationId);
      await ensureOrganizationRoles(tx, organizationId);

      await tx.permission.createMany({
        data: ADMIN_PERMISSIONS.map((name) => ({ organizationId, name })),
        skipDuplicates: true,
      });
      const role = await tx.role.upsert({
        where: { organizationId_name: { organizationId, name: SERVICE_ADMIN_ROLE } },
        create: { organizationId, name: SERVICE_ADMIN_ROLE, description: "Full access to the Admin API and console" },
        update: {},
      });
      const permissions = await tx.permission.findMany({
        where: { organizationId, name: { in: [...ADMIN_PERMISSIONS] } },
        select: { id: true },
      });
      await tx.rolePermission.createMany({
        data: permissions.map((p) => ({ roleId: role.id, permissionId: p.id })),
        skipDuplicates: true,
      });

      const redirectUris = adminClientRedirectUris(options.baseUrl);
      await tx.client.upsert({
        where: { id: ADMIN_CLIENT_ID },
        create: {
          id: ADMIN_CLIENT_ID,
          organizationId,
          name: "Porta admin (CLI and console)",
          applicationType: "native",
          tokenEndpointAuthMethod: "none",
          redirectUris,
          grantTypes: ADMIN_CLIENT_GRANT_TYPES,
          scope: ADMIN_CLIENT_SCOPE,
          adminApiAccess: true,
        },
        // BASE_URL may have changed since the last start; the console callback follows it. The
        // device grant (`porta login --device`, decision 049) reaches databases made before it.
        update: { redirectUris, adminApiAccess: true, grantTypes: ADMIN_CLIENT_GRANT_TYPES },
      });

      const existingAdmin = await tx.userRole.findFirst({
        where: { roleId: role.id, user: { organizationId, status: "active" } },
        select: { userId: true },
      });
      if (existingAdmin) return { organizationId };

      const existingUser = await tx.user.findUnique({ where: { organizationId_email: { organizationId, email } } });
      const user =
        existingUser ??
        (await tx.user.create({
          data: { organizationId, email, emailVerified: true, givenName: "Porta", familyName: "Admin", passwordHash },
        }));
      if (existingUser && (existingUser.status !== "active" || !existingUser.passwordHash)) {
        await tx.user.update({ where: { id: existingUser.id }, data: { status: "active", passwordHash, legacyPassword: Prisma.DbNull } });
      }
      // The user may still hold the role while inactive (a deactivated last admin): keep one row.
      await tx.userRole.createMany({ data: [{ userId: user.id, roleId: role.id }], skipDuplicates: true });
      const rotatedPassword = !existingUser || !existingUser.passwordHash || existingUser.status !== "active";
      return {
        organizationId,
        createdAdmin: { email, ...(generatedPassword && rotatedPassword ? { generatedPassword } : {}) },
      };
    },
    { timeout: 30_000 },
  );
}
