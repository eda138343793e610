import type { KeyValueStore } from "../cache/store";
import type { Context } from "../context";

/** Where the ephemeral adapter records an account's sessions, so they can be ended together. */
export const accountSessionsKey = (organizationId: string, accountId: string) => `oidc:${organizationId}:account-sessions:${accountId}`;

/** Where a session's last request came from (request-device.ts), kept beside the session's own key. */
export const sessionDeviceKey = (sessionKey: string) => `${sessionKey}:device`;

/**
 * Ends everything a user holds in one organization: grants with their access and refresh tokens
 * (PostgreSQL) go with the write, so refresh tokens stop working when it commits; browser
 * sessions (ephemeral store) end after the commit, never for a write that rolled back.
 */
export async function endUserSessions(ctx: Context<"store">, organizationId: string, userId: string): Promise<void> {
  await ctx.db.oidcPayload.deleteMany({ where: { organizationId, accountId: userId } });
  ctx.afterCommit(() => endBrowserSessions(ctx.store, organizationId, userId));
}

/**
 * The store's half of ending a user's sessions: the browser sessions. A write that ends the grants
 * and tokens in its own transaction runs this after the commit.
 */
export async function endBrowserSessions(store: KeyValueStore, organizationId: string, userId: string): Promise<void> {
  const key = accountSessionsKey(organizationId, userId);
  const sessions = await store.setMembers(key);
  await store.del(...sessions, ...sessions.map(sessionDeviceKey), key);
}
