import { z } from "zod";
import { AUDIT_EVENT_FAMILIES, isAuditEventType } from "./audit-events";

/**
 * Webhook shapes shared by the Admin API, its OpenAPI document and the console (decision 047).
 * An endpoint receives the audit events it names: exact types from the one catalogue
 * (app/schemas/audit-events.ts) or whole families such as `user.*`.
 */
export const WEBHOOK_DELIVERY_STATUS_VALUES = ["pending", "retrying", "delivered", "dead"] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUS_VALUES)[number];

/** A value of an endpoint's filter: an audit event type, or a family of them. */
export function isWebhookEventFilter(value: string): boolean {
  return isAuditEventType(value) || AUDIT_EVENT_FAMILIES.includes(value);
}

/** Whether an endpoint's filter takes an event of this type. */
export function webhookFilterMatches(filter: readonly string[], eventType: string): boolean {
  return filter.some((f) => f === eventType || (f.endsWith(".*") && eventType.startsWith(f.slice(0, -1))));
}

const EventTypesSchema = z
  .array(z.string().refine(isWebhookEventFilter, "is not an audit event type or family (see docs/audit-events.md)"))
  .min(1, "must name at least one event type")
  .max(200, "must have at most 200 entries")
  .refine((a) => new Set(a).size === a.length, "must not repeat an event type");

/** The URL's form; whether its scheme and host are allowed depends on the operator (service). */
export const WebhookUrlSchema = z
  .string()
  .trim()
  .max(2000, "must have at most 2000 characters")
  .refine((value) => URL.canParse(value), "must be an absolute URL")
  .refine((value) => !URL.canParse(value) || ["https:", "http:"].includes(new URL(value).protocol), "must be an https URL")
  .refine((value) => !URL.canParse(value) || (!new URL(value).username && !new URL(value).password), "must not contain a user name or password")
  .refine((value) => !value.includes("#"), "must not contain a fragment");

const DescriptionSchema = z.string().trim().max(500, "must have at most 500 characters");

export const WebhookEndpointSchema = z.object({
  id: z.uuid(),
  organizationId: z.uuid(),
  url: z.string(),
  description: z.string(),
  eventTypes: z.array(z.string()),
  enabled: z.boolean(),
  /** Failed attempts in a row (a delivered one resets it). */
  consecutiveFailures: z.number().int(),
  /** Why Porta turned the endpoint off; null when it is on or an administrator turned it off. */
  disabledReason: z.string().nullable(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});
export type WebhookEndpoint = z.infer<typeof WebhookEndpointSchema>;

/** Creation and rotation answer the signing secret, once. */
export const WebhookEndpointWithSecretSchema = WebhookEndpointSchema.extend({
  secret: z.string().describe("The signing secret (whsec_...), shown only in this response"),
});

export const WebhookEndpointCreateSchema = z
  .object({
    url: WebhookUrlSchema,
    eventTypes: EventTypesSchema,
    description: DescriptionSchema.optional(),
    enabled: z.boolean().optional(),
  })
  .strict();
export type WebhookEndpointCreate = z.infer<typeof WebhookEndpointCreateSchema>;

export const WebhookEndpointUpdateSchema = z
  .object({
    url: WebhookUrlSchema.optional(),
    eventTypes: EventTypesSchema.optional(),
    description: DescriptionSchema.optional(),
    enabled: z.boolean().optional(),
  })
  .strict();
export type WebhookEndpointUpdate = z.infer<typeof WebhookEndpointUpdateSchema>;

export const WebhookAttemptSchema = z.object({
  attempt: z.number().int(),
  startedAt: z.iso.datetime(),
  durationMs: z.number().int(),
  statusCode: z.number().int().nullable(),
  error: z.string().nullable(),
  /** The first 1024 characters of what the endpoint answered. */
  responseBody: z.string().nullable(),
});

export const WebhookDeliverySchema = z.object({
  id: z.uuid().describe("Also the webhook-id header: the same on every attempt and replay"),
  endpointId: z.uuid(),
  eventType: z.string(),
  auditEntryId: z.uuid().nullable(),
  status: z.enum(WEBHOOK_DELIVERY_STATUS_VALUES),
  attempts: z.number().int(),
  lastStatusCode: z.number().int().nullable(),
  lastError: z.string().nullable(),
  nextAttemptAt: z.iso.datetime().nullable(),
  deliveredAt: z.iso.datetime().nullable(),
  createdAt: z.iso.datetime(),
});
export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>;

export const WebhookDeliveryDetailSchema = WebhookDeliverySchema.extend({
  payload: z.string().describe("The JSON body as signed and sent"),
  attemptLog: z.array(WebhookAttemptSchema),
});
export type WebhookDeliveryDetail = z.infer<typeof WebhookDeliveryDetailSchema>;
