import type { KeyValueStore } from "../cache/store";
import type { Context, StagedContext } from "../context";
import { getClientRecord } from "../directory/clients";
import { ACCOUNT_CLIENT_ID } from "../oidc/storage/account-client";
import { grantRowsWhere } from "../oidc/storage/adapter";
import { accountSessionsKey, sessionDeviceKey } from "../oidc/storage/sessions";
import { noticesForSessions } from "../oidc/features/backchannel-logout";
import type { SignedIn } from "./session";

/**
 * A person's browser sessions in one organization: where they are signed in, and ending one or
 * all the others. A session is the provider's (the ephemeral store); the grants it holds (refresh
 * and access tokens of the applications signed in to from that browser) are PostgreSQL rows and
 * end with it, in the write that records the audit entry; the store's keys go after the commit.
 */
export interface AccountSessionView {
  /** The hashed store key's last segment: names the session without being its cookie. */
  handle: string;
  current: boolean;
  signedInAt: string | null;
  lastSeenAt: string | null;
  ip: string | null;
  userAgent: string | null;
  /** Names of the applications signed in to from this session; the account page is `null`. */
  clients: Array<string | null>;
}

interface StoredSession {
  accountId?: string;
  loginTs?: number;
  authorizations?: Record<string, { grantId?: string; sid?: string }>;
}

interface StoredDevice {
  ip?: string | null;
  userAgent?: string | null;
  seenAt?: number;
}

const handleOf = (key: string) => key.slice(key.lastIndexOf(":") + 1);
const iso = (seconds: number | undefined) => (typeof seconds === "number" ? new Date(seconds * 1000).toISOString() : null);

function parse<T>(text: string | null): T | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}

export interface LiveSession {
  key: string;
  session: StoredSession;
}

/** The person's sessions that still exist (the index may name some that ended on their own). */
async function liveSessions(store: KeyValueStore, access: SignedIn): Promise<LiveSession[]> {
  const keys = await store.setMembers(accountSessionsKey(access.organization.id, access.user.id));
  const found = await Promise.all(keys.map(async (key) => ({ key, session: parse<StoredSession>(await store.get(key)) })));
  return found.filter((s): s is LiveSession => s.session !== null && s.session.accountId === access.user.id);
}

export async function listAccountSessions(ctx: Context<"store" | "cache">, access: SignedIn): Promise<AccountSessionView[]> {
  const sessions = await liveSessions(ctx.store, access);
  const views = await Promise.all(
    sessions.map(async ({ key, session }) => {
      const device = parse<StoredDevice>(await ctx.store.get(sessionDeviceKey(key)));
      const clients = await Promise.all(
        Object.keys(session.authorizations ?? {}).map(async (clientId) => {
          if (clientId === ACCOUNT_CLIENT_ID) return null;
          const client = await getClientRecord(ctx.db, ctx.cache, clientId);
          return client && client.organizationId === access.organization.id ? client.name : clientId;
        }),
      );
      return {
        handle: handleOf(key),
        current: key === access.sessionKey,
        signedInAt: iso(session.loginTs),
        lastSeenAt: iso(device?.seenAt),
        ip: device?.ip ?? null,
        userAgent: device?.userAgent ?? null,
        clients,
      };
    }),
  );
  // This browser first, then the most recently used.
  return views.sort((a, b) => Number(b.current) - Number(a.current) || (b.lastSeenAt ?? b.signedInAt ?? "").localeCompare(a.lastSeenAt ?? a.signedInAt ?? ""));
}

const grantIdsOf = (sessions: LiveSession[]) =>
  sessions.flatMap(({ session }) => Object.values(session.authorizations ?? {}).flatMap((a) => (a.grantId ? [a.grantId] : [])));

/** Inside a write: the grants of `sessions` end with it, their browser sessions after the commit. */
async function endTheseSessions(ctx: Context<"store" | "logoutNotices">, access: SignedIn, sessions: LiveSession[]): Promise<void> {
  ctx.afterCommit(() => ctx.store.del(...sessions.flatMap(({ key }) => [key, sessionDeviceKey(key)])));
  // The applications signed in to from those browsers get logout tokens (decision 048).
  ctx.afterCommit(() => ctx.logoutNotices.send(noticesForSessions(access.organization.id, access.user.id, sessions.map((s) => s.session))));
  const grantIds = grantIdsOf(sessions);
  if (grantIds.length > 0) await ctx.db.oidcPayload.deleteMany({ where: { organizationId: access.organization.id, ...grantRowsWhere(grantIds) } });
}

/**
 * Inside a write: everything the person holds in the organization ends except this browser's
 * session and its grants, including grants whose browser session already ended on its own
 * (an application's refresh token outlives the cookie).
 */
export async function endAllButThisSession(ctx: Context<"store" | "logoutNotices">, access: SignedIn, sessions: LiveSession[]): Promise<number> {
  const current = sessions.filter((s) => s.key === access.sessionKey);
  const others = sessions.filter((s) => s.key !== access.sessionKey);
  const kept = grantIdsOf(current);
  await ctx.db.oidcPayload.deleteMany({
    where: { organizationId: access.organization.id, accountId: access.user.id, ...(kept.length > 0 ? { NOT: grantRowsWhere(kept) } : {}) },
  });
  ctx.afterCommit(() => (others.length > 0 ? ctx.store.del(...others.flatMap(({ key }) => [key, sessionDeviceKey(key)])) : undefined));
  ctx.afterCommit(() => ctx.logoutNotices.send(noticesForSessions(access.organization.id, access.user.id, others.map((s) => s.session))));
  return others.length;
}

export type EndOutcome = { ok: true } | { ok: false; reason: "unknown" | "current" };

/** Ends one of the person's other sessions, named by its handle from the list. */
export async function endAccountSession(staged: StagedContext<"store" | "logoutNotices">, access: SignedIn, handle: string): Promise<EndOutcome> {
  const sessions = await liveSessions(staged.store, access);
  const target = sessions.find((s) => handleOf(s.key) === handle);
  if (!target) return { ok: false, reason: "unknown" };
  if (target.key === access.sessionKey) return { ok: false, reason: "current" };
  await staged.transaction(async (ctx) => {
    await endTheseSessions(ctx, access, [target]);
    ctx.audit({ eventType: "account.session_ended", organizationId: access.organization.id, targetType: "user", targetId: access.user.id, data: {} });
  });
  return { ok: true };
}

/** The person's live sessions, read before a write that ends the others (endAllButThisSession). */
export const readAccountSessions = (store: KeyValueStore, access: SignedIn) => liveSessions(store, access);

export async function endOtherAccountSessions(staged: StagedContext<"store" | "logoutNotices">, access: SignedIn): Promise<number> {
  const sessions = await liveSessions(staged.store, access);
  return staged.transaction(async (ctx) => {
    const count = await endAllButThisSession(ctx, access, sessions);
    ctx.audit({ eventType: "account.sessions_ended", organizationId: access.organization.id, targetType: "user", targetId: access.user.id, data: { count } });
    return count;
  });
}
