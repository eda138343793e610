import { BASE_SCOPES } from "../../oidc/provider/configuration";
import type { Context } from "../../context";
import { conflict, validation } from "../../errors";

/**
 * The scopes an organization's provider supports: the base scopes and the scope of each of its
 * custom claims. oidc-provider refuses a client whose `scope` names any other scope
 * (invalid_client_metadata), so the Admin API keeps clients and claims in step: a client may only
 * name supported scopes, and a custom scope cannot disappear while a client still names it.
 */
export async function supportedScopes(ctx: Context, organizationId: string): Promise<Set<string>> {
  const claims = await ctx.db.customClaimDefinition.findMany({
    where: { application: { organizationId } },
    select: { scope: true },
    distinct: ["scope"],
  });
  return new Set<string>([...BASE_SCOPES, ...claims.map((c) => c.scope)]);
}

/** 422 when the client's scope names a scope the organization does not support. */
export async function requireSupportedScope(ctx: Context, organizationId: string, scope: string) {
  const supported = await supportedScopes(ctx, organizationId);
  const unknown = scope.split(" ").filter((s) => !supported.has(s));
  if (unknown.length > 0) {
    throw validation([
      { field: "scope", message: `names scope(s) the organization does not support: ${unknown.join(", ")} (supported: ${[...supported].join(", ")}; a custom claim adds its scope)` },
    ]);
  }
}

/**
 * 409 when removing the given claims would take away a custom scope that a client of the
 * organization still names (no other claim keeping it supported).
 */
export async function assertScopesStayUsable(ctx: Context, organizationId: string, removedClaimIds: string[]) {
  const prisma = ctx.db;
  const removed = await prisma.customClaimDefinition.findMany({ where: { id: { in: removedClaimIds } }, select: { scope: true } });
  const remaining = await prisma.customClaimDefinition.findMany({
    where: { application: { organizationId }, id: { notIn: removedClaimIds } },
    select: { scope: true },
  });
  const kept = new Set<string>([...BASE_SCOPES, ...remaining.map((c) => c.scope)]);
  const vanishing = [...new Set(removed.map((c) => c.scope))].filter((s) => !kept.has(s));
  if (vanishing.length === 0) return;
  const clients = await prisma.client.findMany({
    where: { organizationId, OR: vanishing.map((s) => ({ scope: { contains: s } })) },
    select: { id: true, scope: true },
  });
  const users = clients.filter((c) => c.scope.split(" ").some((s) => vanishing.includes(s)));
  if (users.length > 0) {
    throw conflict(
      "scope_in_use",
      `The scope ${vanishing.join(", ")} is still named by ${users.length} client(s) of the organization; remove it from their scope first.`,
      [{ field: "scope", message: `used by client(s) ${users.slice(0, 5).map((c) => c.id).join(", ")}` }],
    );
  }
}
