import type { Prisma } from "~/generated/prisma/client";
import type { SsfStreamView } from "~/schemas/ssf-stream";
import type { Context } from "../../context";
import { listMode, listPage, type ListQuery, type Page } from "../http/pagination";
import { requireOrganization } from "../organizations/service";

/** An organization's Shared Signals streams for its administrators, read-only (decision 093): receivers manage their own. */
const include = { _count: { select: { subjects: true, events: { where: { status: { in: ["pending", "retrying"] } } } } } } satisfies Prisma.SsfStreamInclude;
type Row = Prisma.SsfStreamGetPayload<{ include: typeof include }>;

function toView(row: Row): SsfStreamView {
  return {
    id: row.id,
    organizationId: row.organizationId,
    clientId: row.clientId,
    audience: row.audience,
    deliveryMethod: row.deliveryMethod as SsfStreamView["deliveryMethod"],
    pushEndpointUrl: row.pushEndpointUrl,
    status: row.status as SsfStreamView["status"],
    reason: row.reason,
    description: row.description,
    eventsRequested: row.eventsRequested,
    eventsDelivered: row.eventsDelivered,
    subjects: row._count.subjects,
    waitingEvents: row._count.events,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export async function listSsfStreams(ctx: Context, organizationId: string, query: ListQuery): Promise<Page<SsfStreamView>> {
  await requireOrganization(ctx, organizationId);
  const where: Prisma.SsfStreamWhereInput = { organizationId };
  const order = query.order ?? "asc";
  const page = await listPage(listMode(query), {
    count: () => ctx.db.ssfStream.count({ where }),
    offset: (skip, take) => ctx.db.ssfStream.findMany({ where, include, orderBy: [{ createdAt: order }, { id: order }], skip, take }),
    after: (afterId, take) =>
      ctx.db.ssfStream.findMany({ where: { ...where, ...(afterId ? { id: order === "asc" ? { gt: afterId } : { lt: afterId } } : {}) }, include, orderBy: { id: order }, take }),
  });
  return { ...page, data: page.data.map(toView) };
}
