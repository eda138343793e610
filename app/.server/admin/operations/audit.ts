import { UuidSchema } from "~/schemas/uuid";
import { z } from "zod";
import { requireAuditEntry, listAudit } from "../audit/service";
import { searchSubjects, SUBJECT_TYPES } from "../audit/subjects";
import { AuditNamesSchema, pageOf } from "../http/openapi-shapes";
import { ListQuerySchema } from "../http/pagination";
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
  names: AuditNamesSchema,
});

/** A name as a filter takes it: an email, a name or a slug, given whole. */
const NameFilter = z.string().trim().min(1, "must not be empty").max(200);

const AuditQuery = ListQuerySchema.extend({
  organizationId: UuidSchema.optional(),
  eventType: z.string().max(100).regex(/^[a-z0-9_.]+(\.\*)?$/, "must be an event type, optionally ending in .*").optional(),
  actorId: z.string().max(100).optional(),
  targetType: z.string().max(50).optional(),
  targetId: z.string().max(200).optional(),
  organization: NameFilter.optional(),
  actor: NameFilter.optional(),
  target: NameFilter.optional(),
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
}).strict();

const SubjectSchema = z.object({
  type: z.enum(SUBJECT_TYPES),
  id: z.string(),
  name: z.string(),
  detail: z.string().nullable(),
  organizationId: z.uuid().nullable(),
});

const SubjectsQuery = z
  .object({
    role: z.enum(["organization", "actor", "target"]),
    q: z.string().trim().min(2, "must be at least 2 characters").max(200),
    organizationId: UuidSchema.optional(),
    limit: z.coerce.number().int().min(1).max(20).optional(),
  })
  .strict();

export const auditOperations = [
  operation({
    method: "GET",
    path: "/audit",
    operationId: "audit.list",
    summary:
      "Audit entries, newest first, each with the names of its organization, actor, target and client; filtered by organization (id, or name/slug), event type (prefix.*), actor and target (id, or email/name: every exact match counts, a name that matches nothing is a 422) and time range; paged by page and pageSize, or by cursor and limit; newest first unless order=asc",
    tag: "audit",
    permission: "admin:audit:read",
    organizationScope: [{ in: "query", field: "organizationId", unbound: ["organization", "actor", "target"] }],
    query: AuditQuery,
    response: pageOf(AuditEntrySchema),
    handler: async ({ ctx, query }) => ({ body: await listAudit(ctx, query) }),
  }),
  operation({
    method: "GET",
    path: "/audit/subjects",
    operationId: "audit.searchSubjects",
    summary: "Organizations, users, clients, applications and roles whose name, email or slug contains the text: suggestions for the audit filters (role organization, actor or target)",
    tag: "audit",
    permission: "admin:audit:read",
    query: SubjectsQuery,
    response: z.object({ data: z.array(SubjectSchema) }),
    handler: async ({ ctx, query }) => ({ body: { data: await searchSubjects(ctx.db, query.role, query.q, query.organizationId, query.limit ?? 10) } }),
  }),
  operation({
    method: "GET",
    path: "/audit/{id}",
    operationId: "audit.get",
    summary: "One audit entry with its full data (an update's field-by-field changes in data.changes) and the names of what it names",
    tag: "audit",
    permission: "admin:audit:read",
    organizationScope: [{ in: "entity", param: "id", owner: "auditEntry" }],
    params: z.object({ id: UuidSchema }),
    query: z.object({}).strict(),
    response: AuditEntrySchema,
    handler: async ({ ctx, params }) => ({ body: await requireAuditEntry(ctx, params.id) }),
  }),
];
