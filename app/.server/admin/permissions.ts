/**
 * Every permission an Admin API operation can require. The seeded `service-admin` role holds
 * them all; bootstrap adds any that are new at each start.
 */
export const ADMIN_PERMISSIONS = [
  "admin:org:read",
  "admin:org:create",
  "admin:org:update",
  "admin:org:delete",
  "admin:app:read",
  "admin:app:write",
  "admin:client:read",
  "admin:client:write",
  "admin:resource:read",
  "admin:resource:write",
  "admin:user:read",
  "admin:user:write",
  "admin:user:impersonate",
  "admin:rbac:read",
  "admin:rbac:write",
  "admin:claim:read",
  "admin:claim:write",
  "admin:config:read",
  "admin:config:write",
  "admin:key:read",
  "admin:key:write",
  "admin:audit:read",
  "admin:audit_sink:read",
  "admin:audit_sink:write",
  "admin:stats:read",
  "admin:session:read",
  "admin:session:write",
  "admin:bulk:execute",
  "admin:branding:read",
  "admin:branding:write",
  "admin:export:read",
  "admin:import:write",
  "admin:2fa:read",
  "admin:2fa:write",
  "admin:mail:read",
  "admin:mail:write",
  "admin:webhook:read",
  "admin:webhook:write",
  "admin:idp:read",
  "admin:idp:write",
] as const;

export type AdminPermission = (typeof ADMIN_PERMISSIONS)[number];

export const SERVICE_ADMIN_ROLE = "service-admin";
/** The shared native client of the admin CLI and console. */
export const ADMIN_CLIENT_ID = "porta-admin";
export const ADMIN_CLIENT_SCOPE = "openid profile email roles offline_access";
