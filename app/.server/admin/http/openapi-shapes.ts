import { z } from "zod";

/** Envelope schemas for the OpenAPI document, wrapping a resource schema. */
export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item),
    total: z.number().int(),
    totalIsLowerBound: z
      .literal(true)
      .optional()
      .meta({ description: "Present when the list stopped counting: there are at least `total` items (a filtered list or search with more than 1,000 matches)" }),
    page: z.number().int(),
    pageSize: z.number().int(),
    cursor: z.string().optional(),
  });
}

export function historyOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), hasMore: z.boolean(), nextCursor: z.string().nullable() });
}

/** A name for an id an audit entry carries (decision 039); `name` is null when the thing is gone and was never named. */
export const NamedSchema = z.object({ name: z.string().nullable(), organizationId: z.uuid().nullable(), deleted: z.boolean() });

export const AuditNamesSchema = z.object({
  organization: NamedSchema.nullable(),
  actor: NamedSchema.extend({ type: z.enum(["user", "client"]) }).nullable(),
  target: NamedSchema.nullable(),
  client: NamedSchema.extend({ id: z.string() }).nullable(),
});

export const HistoryEntrySchema = z.object({
  id: z.uuid(),
  eventType: z.string(),
  createdAt: z.iso.datetime(),
  actorType: z.string(),
  actorId: z.string().nullable(),
  data: z.unknown(),
  names: AuditNamesSchema,
});

export const NoContent = z.undefined();
