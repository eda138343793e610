import type { Actor, ContextSource } from "../../context";
import { requireAdmin, type AdminUser } from "./require-admin";
import type { AdminPermission } from "../permissions";
import type { OrganizationScope } from "./organization-scope";

/**
 * What a door looks at to admit an operation: its permission and its organization scope (an
 * Operation of route.ts is one; named here so that route.ts, which runs the doors, is not imported back).
 */
export interface GatedOperation {
  permission: AdminPermission | "public" | "authenticated";
  organizationScope?: readonly OrganizationScope[];
}

/**
 * Who runs an Admin API operation. The Admin API's own door admits service admins, who reach
 * every organization with the permissions their roles hold. Other doors run the same operations
 * for callers bound to one organization (organization-scope.ts): what they may run is theirs to
 * say, and every target must belong to their organization.
 */
export interface Caller {
  /** The person acting, as the operations see them. */
  admin: AdminUser;
  /** How the audit trail names the actor (its id is `admin.id`). */
  actorType: Actor["type"];
  /** Set when the caller may act within this organization only. */
  organizationId: string | null;
  /** Whether the caller may run the operation at all (else 403). */
  may(op: GatedOperation): boolean;
}

/** Authenticates a request for a door; any failure throws the door's 401. */
export type Authenticate = (services: ContextSource, request: Request) => Promise<Caller>;

/** The Admin API's door: the spec's seven checks, then the operation's permission. */
export const authenticateServiceAdmin: Authenticate = async (services, request) => {
  const admin = await requireAdmin(services, request);
  return {
    admin,
    actorType: "admin",
    organizationId: null,
    may: (op) => op.permission === "public" || op.permission === "authenticated" || admin.permissions.has(op.permission),
  };
};
