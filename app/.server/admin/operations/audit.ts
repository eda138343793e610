import { UuidSchema } from "~/schemas/uuid";
import { z } from "zod";
import { listAudit } from "../audit/service";
import { pageOf } from "../http/openapi-shapes";
import { MAX_PAGE_SIZE } from "../http/pagination";
import { operation } from "../http/route";

const AuditEntrySchema = z.object({
  id: z.uuid(),
  createdAt: z.iso.datetime(),
  eventType: z.string(),
  organizationId: z.uuid().nullable(),
  actorType: z.string(),
  actorId: z.string().nullable(),
  targetType: z.string().nullable(),
  targetId: z.string().nullable(),
  ip: z.string().nullable(),
  requestId: z.string().nullable(),
  data: z.unknown(),
});

const AuditQuery = z
  .object({
    organizationId: UuidSchema.optional(),
    eventType: z.string().max(100).regex(/^[a-z0-9_.]+(\.\*)?$/, "must be an event type, optionally ending in .*").optional(),
    actorId: z.string().max(100).optional(),
    targetType: z.string().max(50).optional(),
    targetId: z.string().max(200).optional(),
    from: z.iso.datetime({ offset: true }).optional(),
    to: z.iso.datetime({ offset: true }).optional(),
    cursor: z.string().max(512).optional(),
    limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional(),
  })
  .strict();

export const auditOperations = [
  operation({
    method: "GET",
    path: "/audit",
    operationId: "audit.list",
    summary: "Audit entries, newest first, filtered by organization, event type (prefix.*), actor, target and time range; cursor paging",
    tag: "audit",
    permission: "admin:audit:read",
    query: AuditQuery,
    response: pageOf(AuditEntrySchema),
    handler: async ({ ctx, query }) => ({ body: await listAudit(ctx, query) }),
  }),
];
