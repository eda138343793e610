import { createHash } from "node:crypto";
import type { OidcPayload, Prisma } from "~/generated/prisma/client";
import { accountSessionsKey, endUserSessions, sessionDeviceKey } from "../../oidc/storage/sessions";
import type { Context } from "../../context";
import { notFound, validation } from "../../errors";
import { encodeCursor, listMode, type ListQuery, type Page } from "../http/pagination";
import { matchSubjects } from "../audit/subjects";

/**
 * An admin "session" is a grant: one user's authorization of one client, which carries the
 * refresh and access tokens issued under it (grants are durable rows, decision 057; browser cookies are
 * short-lived and belong to the grant's user). Revoking it ends those tokens at once.
 */
export interface SessionView {
  id: string;
  organizationId: string;
  userId: string | null;
  clientId: string | null;
  createdAt: string;
  expiresAt: string | null;
}

/**
 * A session as the console shows it: who (the user's email), through what (the client's name),
 * and from where: the IP address, browser and last activity of the browser session that holds
 * the grant, as the account page records them (oidc/edge/request-device.ts). A grant whose browser
 * session ended (a refresh token outlives the cookie) has none of those.
 */
export interface DescribedSession extends SessionView {
  userEmail: string | null;
  clientName: string | null;
  ip: string | null;
  userAgent: string | null;
  lastSeenAt: string | null;
}

interface StoredSession {
  accountId?: string;
  authorizations?: Record<string, { grantId?: string }>;
}

interface StoredDevice {
  ip?: string | null;
  userAgent?: string | null;
  seenAt?: number;
}

function parse<T>(text: string | null): T | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}

/** Names and devices for a page of sessions: two database reads and three store reads, whatever the page's size. */
export async function describeSessions(ctx: Context<"store">, sessions: SessionView[]): Promise<DescribedSession[]> {
  const userIds = [...new Set(sessions.flatMap((s) => (s.userId ? [s.userId] : [])))];
  const clientIds = [...new Set(sessions.flatMap((s) => (s.clientId ? [s.clientId] : [])))];
  const setKeys = [...new Set(sessions.flatMap((s) => (s.userId ? [accountSessionsKey(s.organizationId, s.userId)] : [])))];
  const [users, clients, sets] = await Promise.all([
    userIds.length ? ctx.db.user.findMany({ where: { id: { in: userIds } }, select: { id: true, email: true } }) : [],
    clientIds.length ? ctx.db.client.findMany({ where: { id: { in: clientIds } }, select: { id: true, name: true } }) : [],
    ctx.store.membersOfSets(setKeys),
  ]);
  const sessionKeys = [...new Set([...sets.values()].flat())];
  const [stored, devices] = await Promise.all([ctx.store.getMany(sessionKeys), ctx.store.getMany(sessionKeys.map(sessionDeviceKey))]);
  // The browser session holding each grant, and where that browser was last seen.
  const deviceOfGrant = new Map<string, StoredDevice | null>();
  sessionKeys.forEach((key, i) => {
    const session = parse<StoredSession>(stored[i] ?? null);
    const device = parse<StoredDevice>(devices[i] ?? null);
    for (const authorization of Object.values(session?.authorizations ?? {})) if (authorization.grantId) deviceOfGrant.set(authorization.grantId, device);
  });
  const emails = new Map(users.map((u) => [u.id, u.email]));
  const names = new Map(clients.map((c) => [c.id, c.name]));
  return sessions.map((s) => {
    const device = deviceOfGrant.get(s.id) ?? null;
    return {
      ...s,
      userEmail: (s.userId && emails.get(s.userId)) || null,
      clientName: (s.clientId && names.get(s.clientId)) || null,
      ip: device?.ip ?? null,
      userAgent: device?.userAgent ?? null,
      lastSeenAt: typeof device?.seenAt === "number" ? new Date(device.seenAt * 1000).toISOString() : null,
    };
  });
}

const hashId = (id: string) => createHash("sha256").update(id, "utf8").digest("base64url");

export interface SessionQuery extends ListQuery {
  organizationId?: string | undefined;
  userId?: string | undefined;
  /** An organization by name or slug, a user by email (decision 039): every exact match counts. */
  organization?: string | undefined;
  user?: string | undefined;
}

/** The ids the name filters stand for; a name that matches nothing is a 422 naming the field. */
async function namedIds(ctx: Context, query: SessionQuery) {
  const [orgs, users] = await Promise.all([
    query.organization ? matchSubjects(ctx.db, "organization", query.organization) : null,
    query.user ? matchSubjects(ctx.db, "actor", query.user, query.organizationId).then((found) => found.filter((s) => s.type === "user")) : null,
  ]);
  const failed = [
    ...(orgs?.length === 0 ? [{ field: "query.organization", message: "names no organization (give its name or slug)" }] : []),
    ...(users?.length === 0 ? [{ field: "query.user", message: "names no user (give a whole email address)" }] : []),
  ];
  if (failed.length > 0) throw validation(failed);
  return { organizationIds: orgs?.map((s) => s.id), userIds: users?.map((s) => s.id) };
}

export async function listSessions(ctx: Context, query: SessionQuery): Promise<Page<SessionView>> {
  const prisma = ctx.db;
  const named = await namedIds(ctx, query);
  const where: Prisma.OidcPayloadWhereInput = {
    model: "Grant",
    AND: [
      ...(query.organizationId ? [{ organizationId: query.organizationId }] : []),
      ...(query.userId ? [{ accountId: query.userId }] : []),
      ...(named.organizationIds ? [{ organizationId: { in: named.organizationIds } }] : []),
      ...(named.userIds ? [{ accountId: { in: named.userIds } }] : []),
    ],
    OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }],
  };
  const mode = listMode(query);
  const orderBy: Prisma.OidcPayloadOrderByWithRelationInput[] = [{ createdAt: "desc" }, { idHash: "desc" }];
  const total = await prisma.oidcPayload.count({ where });
  if (mode.mode === "offset") {
    const rows = await prisma.oidcPayload.findMany({ where, orderBy, skip: (mode.page - 1) * mode.pageSize, take: mode.pageSize });
    return { data: rows.map(toView), total, page: mode.page, pageSize: mode.pageSize };
  }
  // Keyset on (createdAt, idHash): the cursor holds the last row's pair.
  const [createdAt, idHash] = mode.after ?? [null, ""];
  if (mode.after && (typeof createdAt !== "string" || Number.isNaN(Date.parse(createdAt)))) {
    throw validation([{ field: "cursor", message: "is not a cursor returned by Porta" }]);
  }
  const after: Prisma.OidcPayloadWhereInput = typeof createdAt === "string"
    ? { AND: [{ OR: [{ createdAt: { lt: new Date(createdAt) } }, { createdAt: new Date(createdAt), idHash: { lt: idHash } }] }] }
    : {};
  const rows = await prisma.oidcPayload.findMany({ where: { AND: [where, after] }, orderBy, take: mode.limit + 1 });
  const page = rows.slice(0, mode.limit);
  const last = page[page.length - 1];
  return {
    data: page.map(toView),
    total,
    page: 1,
    pageSize: mode.limit,
    cursor: rows.length > mode.limit && last ? encodeCursor([last.createdAt.toISOString(), last.idHash]) : undefined,
  };
}

function toView(row: OidcPayload): SessionView {
  const payload = row.payload as { jti?: string; clientId?: string; accountId?: string };
  return {
    id: String(payload.jti ?? ""),
    organizationId: row.organizationId,
    userId: payload.accountId ?? row.accountId,
    clientId: payload.clientId ?? null,
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt?.toISOString() ?? null,
  };
}

export async function revokeSession(ctx: Context<"logoutNotices">, grantId: string): Promise<SessionView> {
  const prisma = ctx.db;
  const row = await prisma.oidcPayload.findUnique({ where: { model_idHash: { model: "Grant", idHash: hashId(grantId) } } });
  if (!row) throw notFound("session");
  await prisma.oidcPayload.deleteMany({ where: { grantId, organizationId: row.organizationId } });
  await prisma.oidcPayload.delete({ where: { model_idHash: { model: "Grant", idHash: hashId(grantId) } } });
  const view = toView(row);
  // The grant's client is told that the user's sign-in there ended (decision 048).
  if (view.clientId && view.userId) {
    const notice = { organizationId: view.organizationId, clientId: view.clientId, sub: view.userId, sid: null };
    ctx.afterCommit(() => ctx.logoutNotices.send([notice]));
  }
  return view;
}

export async function revokeUserSessions(ctx: Context<"store" | "logoutNotices">, userId: string): Promise<{ userId: string; organizationId: string }> {
  const user = await ctx.db.user.findUnique({ where: { id: userId }, select: { organizationId: true } });
  if (!user) throw notFound("user");
  await endUserSessions(ctx, user.organizationId, userId);
  return { userId, organizationId: user.organizationId };
}
