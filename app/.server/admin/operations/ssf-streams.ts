import { z } from "zod";
import { SsfStreamSchema } from "~/schemas/ssf-stream";
import { UuidSchema } from "~/schemas/uuid";
import { pageOf } from "../http/openapi-shapes";
import { ListQuerySchema } from "../http/pagination";
import { operation } from "../http/route";
import { listSsfStreams } from "../ssf/service";

/** The Shared Signals streams of an organization, read-only (decision 093): receivers manage their own at /{slug}/ssf. */
const OrgParams = z.object({ orgId: UuidSchema });

export const ssfStreamsOperations = [
  operation({
    method: "GET",
    path: "/organizations/{orgId}/ssf-streams",
    operationId: "ssfStreams.list",
    summary: "List an organization's Shared Signals streams (read-only; each receiver manages its own)",
    tag: "ssf-streams",
    permission: "admin:client:read",
    params: OrgParams,
    query: ListQuerySchema,
    response: pageOf(SsfStreamSchema),
    handler: async ({ ctx, params, query }) => ({ body: await listSsfStreams(ctx, params.orgId, query) }),
  }),
];
