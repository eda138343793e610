import type { Db } from "../context";
import type { AdminPermission } from "./permissions";

/**
 * The roles an organization's own people administer it with (decision 090). Every organization
 * has both: they are made with the organization, and the migration that introduced them added
 * them to the organizations already there. What they allow is decided here and nowhere else:
 * the roles carry no permission rows (an organization's permissions name its own APIs' scopes,
 * decision 077), so an organization cannot widen them by editing its roles.
 *
 * Inside its organization, an `org-admin` manages its people (invitations, activation, 2FA
 * resets, sessions, roles), its sign-in connections (OIDC and SAML), SCIM tokens, verified
 * domains and branding, reads its audit log and streams it to its SIEM (audit sinks, decision 092). Deliberately not: signing keys, deleting or
 * suspending the organization, its settings and policies, clients and applications, API
 * resources, webhooks, impersonation, export and import, bulk runs, mail and the service's
 * configuration. Those stay with service admins. An `org-auditor` reads what an org-admin may
 * read and changes nothing.
 */
export const ORGANIZATION_ADMIN_ROLE = "org-admin";
export const ORGANIZATION_AUDITOR_ROLE = "org-auditor";
export const ORGANIZATION_ROLES = [ORGANIZATION_ADMIN_ROLE, ORGANIZATION_AUDITOR_ROLE] as const;

export const ORGANIZATION_AUDITOR_PERMISSIONS: ReadonlySet<AdminPermission> = new Set<AdminPermission>([
  "admin:org:read",
  "admin:user:read",
  "admin:rbac:read",
  "admin:audit:read",
  "admin:audit_sink:read",
  "admin:session:read",
  "admin:branding:read",
  "admin:2fa:read",
  "admin:idp:read",
]);

export const ORGANIZATION_ADMIN_PERMISSIONS: ReadonlySet<AdminPermission> = new Set<AdminPermission>([
  ...ORGANIZATION_AUDITOR_PERMISSIONS,
  "admin:user:write",
  "admin:rbac:write",
  "admin:audit_sink:write",
  "admin:session:write",
  "admin:branding:write",
  "admin:2fa:write",
  "admin:idp:write",
]);

const DESCRIPTIONS: Record<(typeof ORGANIZATION_ROLES)[number], string> = {
  "org-admin": "Administers this organization: its users, sign-in connections, SCIM tokens, domains, branding and audit log",
  "org-auditor": "Reads this organization's administration (users, connections, audit log) without changing it",
};

/** The permissions the organization roles among `roles` hold within their organization. */
export function organizationPermissionsOf(roles: readonly string[]): Set<AdminPermission> {
  const held = new Set<AdminPermission>();
  if (roles.includes(ORGANIZATION_AUDITOR_ROLE)) for (const p of ORGANIZATION_AUDITOR_PERMISSIONS) held.add(p);
  if (roles.includes(ORGANIZATION_ADMIN_ROLE)) for (const p of ORGANIZATION_ADMIN_PERMISSIONS) held.add(p);
  return held;
}

export const isOrganizationRole = (name: string) => (ORGANIZATION_ROLES as readonly string[]).includes(name);

/** Makes sure the organization has both roles (a new organization, bootstrap, an import). */
export async function ensureOrganizationRoles(db: Db, organizationId: string): Promise<void> {
  await db.role.createMany({
    data: ORGANIZATION_ROLES.map((name) => ({ organizationId, name, description: DESCRIPTIONS[name] })),
    skipDuplicates: true,
  });
}
