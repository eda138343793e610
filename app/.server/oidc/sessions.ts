import type { PrismaClient } from "~/generated/prisma/client";
import type { KeyValueStore } from "../cache/store";

/** Where the ephemeral adapter records an account's sessions, so they can be ended together. */
export const accountSessionsKey = (organizationId: string, accountId: string) => `oidc:${organizationId}:account-sessions:${accountId}`;

/**
 * Ends everything a user holds in one organization: browser sessions (ephemeral store) and
 * grants with their access and refresh tokens (PostgreSQL). Refresh tokens stop working at once.
 */
export async function endUserSessions(prisma: PrismaClient, store: KeyValueStore, organizationId: string, userId: string): Promise<void> {
  const key = accountSessionsKey(organizationId, userId);
  const sessions = await store.setMembers(key);
  await store.del(...sessions, key);
  await prisma.oidcPayload.deleteMany({ where: { organizationId, accountId: userId } });
}

/**
 * The store's half of ending a user's sessions: the browser sessions. A write that ends the grants
 * and tokens in its own transaction runs this after the commit.
 */
export async function endBrowserSessions(store: KeyValueStore, organizationId: string, userId: string): Promise<void> {
  const key = accountSessionsKey(organizationId, userId);
  const sessions = await store.setMembers(key);
  await store.del(...sessions, key);
}
