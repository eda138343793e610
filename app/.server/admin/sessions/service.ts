import { createHash } from "node:crypto";
import type { OidcPayload, Prisma } from "~/generated/prisma/client";
import { endUserSessions } from "../../oidc/sessions";
import type { Context } from "../../context";
import { notFound, validation } from "../../errors";
import { encodeCursor, listMode, type ListQuery, type Page } from "../http/pagination";

/**
 * An admin "session" is a grant: one user's authorization of one client, which carries the
 * refresh and access tokens issued under it (DESIGN keeps grants durable; browser cookies are
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

const hashId = (id: string) => createHash("sha256").update(id, "utf8").digest("base64url");

export async function listSessions(ctx: Context, query: ListQuery & { organizationId?: string | undefined; userId?: string | undefined }): Promise<Page<SessionView>> {
  const prisma = ctx.db;
  const where: Prisma.OidcPayloadWhereInput = {
    model: "Grant",
    ...(query.organizationId ? { organizationId: query.organizationId } : {}),
    ...(query.userId ? { accountId: query.userId } : {}),
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
  const rows = await prisma.oidcPayload.findMany({ where: { ...where, ...after }, orderBy, take: mode.limit + 1 });
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

export async function revokeSession(ctx: Context, grantId: string): Promise<SessionView> {
  const prisma = ctx.db;
  const row = await prisma.oidcPayload.findUnique({ where: { model_idHash: { model: "Grant", idHash: hashId(grantId) } } });
  if (!row) throw notFound("session");
  await prisma.oidcPayload.deleteMany({ where: { grantId, organizationId: row.organizationId } });
  await prisma.oidcPayload.delete({ where: { model_idHash: { model: "Grant", idHash: hashId(grantId) } } });
  return toView(row);
}

export async function revokeUserSessions(ctx: Context<"store">, userId: string): Promise<{ userId: string; organizationId: string }> {
  const user = await ctx.db.user.findUnique({ where: { id: userId }, select: { organizationId: true } });
  if (!user) throw notFound("user");
  await endUserSessions(ctx, user.organizationId, userId);
  return { userId, organizationId: user.organizationId };
}
