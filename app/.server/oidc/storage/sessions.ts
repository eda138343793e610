import type { IncomingMessage, ServerResponse } from "node:http";
import type Provider from "oidc-provider";
import type { KeyValueStore } from "../../cache/store";
import type { Context, Db } from "../../context";
import { noticesForSessions, parseStoredSession, type LogoutNotices } from "../features/backchannel-logout";

/** Where the ephemeral adapter records an account's sessions, so they can be ended together. */
export const accountSessionsKey = (organizationId: string, accountId: string) => `oidc:${organizationId}:account-sessions:${accountId}`;

/** Where a session's last request came from (edge/request-device.ts), kept beside the session's own key. */
export const sessionDeviceKey = (sessionKey: string) => `${sessionKey}:device`;

/** The clients a user holds grants of in one organization (read before the grants end, to tell them: decision 048). */
export async function grantClientIds(db: Db, organizationId: string, userId: string): Promise<string[]> {
  const grants = await db.oidcPayload.findMany({ where: { organizationId, accountId: userId, model: "Grant" }, select: { payload: true } });
  return [...new Set(grants.flatMap((g) => { const clientId = (g.payload as { clientId?: unknown }).clientId; return typeof clientId === "string" ? [clientId] : []; }))];
}

/**
 * Ends everything a user holds in one organization: grants with their access and refresh tokens
 * (PostgreSQL) go with the write, so refresh tokens stop working when it commits; browser
 * sessions (ephemeral store) end after the commit, never for a write that rolled back, and the
 * clients of both that take logout tokens are told (decision 048).
 */
export async function endUserSessions(ctx: Context<"store" | "logoutNotices">, organizationId: string, userId: string): Promise<void> {
  const clientIds = await grantClientIds(ctx.db, organizationId, userId);
  await ctx.db.oidcPayload.deleteMany({ where: { organizationId, accountId: userId } });
  ctx.afterCommit(() => endBrowserSessions(ctx.store, organizationId, userId, { notices: ctx.logoutNotices, grantClientIds: clientIds }));
}

/**
 * The store's half of ending a user's sessions: the browser sessions. A write that ends the grants
 * and tokens in its own transaction runs this after the commit. With `tell`, each client of
 * the ended sessions (with its sid) and of the ended grants gets a logout token.
 */
export async function endBrowserSessions(
  store: KeyValueStore,
  organizationId: string,
  userId: string,
  tell?: { notices: LogoutNotices; grantClientIds: string[] },
): Promise<void> {
  const key = accountSessionsKey(organizationId, userId);
  const sessions = await store.setMembers(key);
  // Read before they go: the sids the clients know the sessions by are in them.
  const stored = tell && sessions.length > 0 ? await store.getMany(sessions) : [];
  await store.del(...sessions, ...sessions.map(sessionDeviceKey), key);
  if (tell) await tell.notices.send(noticesForSessions(organizationId, userId, stored.map(parseStoredSession), tell.grantClientIds));
}

/** The part of the provider's browser session the account page reads. */
export interface BrowserSession {
  /** The session id: the value of the session cookie (stored only hashed, adapter.ts). */
  id: string;
  accountId: string | undefined;
  /** auth_time: when the person last proved who they are in this browser. */
  loginTs: number | undefined;
  amr: string[] | undefined;
}

interface SessionModel {
  get(ctx: { req: IncomingMessage; res: ServerResponse }): Promise<{ jti: string; accountId?: string; loginTs?: number; amr?: string[] }>;
}

/**
 * The provider's session of the browser that sent `req`, read outside the provider's own routes
 * (the account page) with the provider's own check of the signed session cookie. oidc-provider
 * documents `Session.get` for its own middleware only.
 */
export async function browserSessionOf(provider: Provider, req: IncomingMessage, res: ServerResponse): Promise<BrowserSession> {
  const session = await (provider.Session as unknown as SessionModel).get({ req, res });
  return { id: session.jti, accountId: session.accountId, loginTs: session.loginTs, amr: session.amr };
}
