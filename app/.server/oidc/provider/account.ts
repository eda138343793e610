import type { Account, FindAccount } from "oidc-provider";
import type { PrismaClient } from "~/generated/prisma/client";
import type { ReadThroughCache } from "../../cache/read-through";
import { getUserById } from "../../directory/users";

export interface AccountContext {
  prisma: PrismaClient;
  cache: ReadThroughCache;
  organizationId: string;
  /**
   * The organization's custom claims, read when its provider was built (a change to them
   * rebuilds it): a token for scopes without custom claims costs no query for their values.
   */
  customClaims: ReadonlyArray<{ id: string; claimName: string; scope: string }>;
}

/**
 * Resolves `sub` to an active user of this organization. Claims are gathered for the scopes
 * asked; oidc-provider then releases only those the granted scopes cover (openid → sub,
 * profile, email, roles, and each custom claim's own scope).
 */
export function createFindAccount(context: AccountContext): FindAccount {
  const { prisma, cache, organizationId, customClaims } = context;
  return async (_ctx, sub): Promise<Account | undefined> => {
    const user = await getUserById(prisma, cache, sub);
    if (!user || user.organizationId !== organizationId || user.status !== "active") return undefined;
    return {
      accountId: user.id,
      async claims(_use, scope) {
        const scopes = new Set((scope ?? "").split(" "));
        const name = [user.givenName, user.familyName].filter(Boolean).join(" ");
        const claims: Record<string, unknown> = {
          sub: user.id,
          email: user.email,
          email_verified: user.emailVerified,
          given_name: user.givenName ?? undefined,
          family_name: user.familyName ?? undefined,
          name: name || undefined,
          locale: user.locale ?? undefined,
          updated_at: Math.floor(user.updatedAt.getTime() / 1000),
        };
        if (scopes.has("roles")) {
          const roles = await prisma.userRole.findMany({ where: { userId: user.id }, select: { role: { select: { name: true } } } });
          claims.roles = roles.map((r) => r.role.name).sort();
        }
        const asked = new Map(customClaims.filter((c) => scopes.has(c.scope)).map((c) => [c.id, c.claimName]));
        if (asked.size > 0) {
          const values = await prisma.customClaimValue.findMany({ where: { userId: user.id, claimId: { in: [...asked.keys()] } }, select: { claimId: true, value: true } });
          for (const v of values) claims[asked.get(v.claimId)!] = v.value;
        }
        return claims as { sub: string };
      },
    };
  };
}
