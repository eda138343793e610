import type { Prisma } from "~/generated/prisma/client";
import { toSigningKeyInfo, type SigningKeyInfo } from "../../oidc/provider/keys";
import type { Context } from "../../context";
import { notFound } from "../../errors";
import { listMode, listPage, type ListQuery, type Page } from "../http/pagination";

/** The kid Porta generates: 12 random bytes in base64url. Cursors carry it. */
const KID = /^[A-Za-z0-9_-]{16}$/;

/** The organization a key operation names; unknown and deleted ones are a 404. */
export async function requireKeyOrganization(ctx: Context, organizationId: string): Promise<void> {
  const row = await ctx.db.organization.findUnique({ where: { id: organizationId }, select: { status: true } });
  if (!row || row.status === "deleted") throw notFound("organization");
}

export interface KeyListQuery extends ListQuery {
  organizationId?: string | undefined;
}

/** Every key, or one organization's, newest first by default; shared keys of earlier versions have no organization. */
export async function listKeys(ctx: Context<"keys">, query: KeyListQuery): Promise<Page<SigningKeyInfo>> {
  const prisma = ctx.db;
  // A key whose retiring period is over shows as retired, not as still published.
  await ctx.keys.retireExpiredIn(ctx.db, ctx.afterCommit);
  const where: Prisma.SigningKeyWhereInput = query.organizationId ? { organizationId: query.organizationId } : {};
  const order = query.order ?? "desc";
  const page = await listPage(listMode(query), {
    idPattern: KID,
    count: () => prisma.signingKey.count({ where }),
    offset: (skip, take) => prisma.signingKey.findMany({ where, orderBy: [{ createdAt: order }, { id: order }], skip, take }),
    after: (afterId, take) =>
      prisma.signingKey.findMany({ where: { ...where, ...(afterId ? { id: order === "asc" ? { gt: afterId } : { lt: afterId } } : {}) }, orderBy: { id: order }, take }),
  });
  return { ...page, data: page.data.map(toSigningKeyInfo) };
}
