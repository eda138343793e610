import { z } from "zod";
import { UuidSchema } from "~/schemas/uuid";
import type { AuditEventType } from "~/schemas/audit-events";
import {
  WEBHOOK_DELIVERY_STATUS_VALUES,
  WebhookDeliveryDetailSchema,
  WebhookDeliverySchema,
  WebhookEndpointCreateSchema,
  WebhookEndpointSchema,
  WebhookEndpointUpdateSchema,
  WebhookEndpointWithSecretSchema,
} from "~/schemas/webhook";
import type { WebhookEndpoint as EndpointRow } from "~/generated/prisma/client";
import type { AuditEntry } from "../../context";
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  requireWebhookDelivery,
  requireWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  replayWebhookDelivery,
  rotateWebhookSecret,
  toWebhookEndpoint,
  updateWebhookEndpoint,
} from "../webhooks/service";
import { pageOf } from "../http/openapi-shapes";
import { ListQuerySchema } from "../http/pagination";
import { operation, type OperationContext } from "../http/route";

/** Webhook operations of the Admin API: endpoints per organization and their delivery log (decision 047). */
const NoQuery = z.object({}).strict();
const OrgParams = z.object({ orgId: UuidSchema });
const EndpointParams = z.object({ orgId: UuidSchema, id: UuidSchema });
const DeliveryParams = z.object({ orgId: UuidSchema, id: UuidSchema, deliveryId: UuidSchema });
const DeliveryListQuery = ListQuerySchema.extend({ status: z.enum(WEBHOOK_DELIVERY_STATUS_VALUES).optional() }).strict();

type Audit = OperationContext<unknown, unknown, unknown>["audit"];

/** Every endpoint change is recorded on the endpoint; its secret never reaches the audit log. */
function auditWebhook(audit: Audit, eventType: AuditEventType, endpoint: EndpointRow, data: Record<string, unknown> = {}, changes?: AuditEntry["changes"]) {
  audit({ eventType, organizationId: endpoint.organizationId, targetType: "webhook", targetId: endpoint.id, data, ...(changes ? { changes } : {}) });
}

export const webhooksOperations = [
  operation({
    method: "GET",
    path: "/organizations/{orgId}/webhooks",
    operationId: "webhooks.list",
    summary: "List an organization's webhook endpoints",
    tag: "webhooks",
    permission: "admin:webhook:read",
    params: OrgParams,
    query: ListQuerySchema,
    response: pageOf(WebhookEndpointSchema),
    handler: async ({ ctx, params, query }) => ({ body: await listWebhookEndpoints(ctx, params.orgId, query) }),
  }),
  operation({
    method: "POST",
    path: "/organizations/{orgId}/webhooks",
    operationId: "webhooks.create",
    summary: "Add a webhook endpoint; its signing secret (whsec_...) is in this response and never shown again",
    tag: "webhooks",
    permission: "admin:webhook:write",
    params: OrgParams,
    query: NoQuery,
    body: WebhookEndpointCreateSchema,
    response: WebhookEndpointWithSecretSchema,
    successStatus: 201,
    etag: true,
    handler: async ({ ctx, params, body }) => {
      const { endpoint, secret } = await createWebhookEndpoint(ctx, params.orgId, body);
      auditWebhook(ctx.audit, "webhook.created", endpoint, { change: body });
      return { body: { ...toWebhookEndpoint(endpoint), secret }, version: endpoint.version };
    },
  }),
];

export const webhooksIdOperations = [
  operation({
    method: "GET",
    path: "/organizations/{orgId}/webhooks/{id}",
    operationId: "webhooks.get",
    summary: "Get a webhook endpoint",
    tag: "webhooks",
    permission: "admin:webhook:read",
    params: EndpointParams,
    query: NoQuery,
    response: WebhookEndpointSchema,
    etag: true,
    handler: async ({ ctx, params }) => {
      const row = await requireWebhookEndpoint(ctx, params.orgId, params.id);
      return { body: toWebhookEndpoint(row), version: row.version };
    },
  }),
  operation({
    method: "PUT",
    path: "/organizations/{orgId}/webhooks/{id}",
    operationId: "webhooks.update",
    summary: "Change a webhook endpoint's URL, event types, description, or turn it on or off; If-Match guards against lost updates",
    tag: "webhooks",
    permission: "admin:webhook:write",
    params: EndpointParams,
    query: NoQuery,
    body: WebhookEndpointUpdateSchema,
    response: WebhookEndpointSchema,
    etag: true,
    handler: async ({ ctx, params, body, ifMatch }) => {
      const before = toWebhookEndpoint(await requireWebhookEndpoint(ctx, params.orgId, params.id));
      const row = await updateWebhookEndpoint(ctx, params.orgId, params.id, body, ifMatch);
      auditWebhook(ctx.audit, "webhook.updated", row, { change: body }, { before, after: toWebhookEndpoint(row) });
      return { body: toWebhookEndpoint(row), version: row.version };
    },
  }),
  operation({
    method: "DELETE",
    path: "/organizations/{orgId}/webhooks/{id}",
    operationId: "webhooks.delete",
    summary: "Delete a webhook endpoint and its delivery log; deliveries not yet made are dropped",
    tag: "webhooks",
    permission: "admin:webhook:write",
    params: EndpointParams,
    query: NoQuery,
    successStatus: 204,
    handler: async ({ ctx, params, ifMatch }) => {
      const row = await deleteWebhookEndpoint(ctx, params.orgId, params.id, ifMatch);
      auditWebhook(ctx.audit, "webhook.deleted", row, { change: { url: row.url } });
      return {};
    },
  }),
];

export const webhooksIdRotateOperations = [
  operation({
    method: "POST",
    path: "/organizations/{orgId}/webhooks/{id}/rotate-secret",
    operationId: "webhooks.rotateSecret",
    summary: "Replace a webhook endpoint's signing secret; the new one is in this response and never shown again",
    tag: "webhooks",
    permission: "admin:webhook:write",
    params: EndpointParams,
    query: NoQuery,
    response: WebhookEndpointWithSecretSchema,
    etag: true,
    handler: async ({ ctx, params, ifMatch }) => {
      const { endpoint, secret } = await rotateWebhookSecret(ctx, params.orgId, params.id, ifMatch);
      auditWebhook(ctx.audit, "webhook.secret_rotated", endpoint);
      return { body: { ...toWebhookEndpoint(endpoint), secret }, version: endpoint.version };
    },
  }),
];

export const webhooksIdDeliveriesOperations = [
  operation({
    method: "GET",
    path: "/organizations/{orgId}/webhooks/{id}/deliveries",
    operationId: "webhooks.listDeliveries",
    summary: "The endpoint's deliveries, newest first, optionally of one status",
    tag: "webhooks",
    permission: "admin:webhook:read",
    params: EndpointParams,
    query: DeliveryListQuery,
    response: pageOf(WebhookDeliverySchema),
    handler: async ({ ctx, params, query }) => ({ body: await listWebhookDeliveries(ctx, params.orgId, params.id, query) }),
  }),
  operation({
    method: "GET",
    path: "/organizations/{orgId}/webhooks/{id}/deliveries/{deliveryId}",
    operationId: "webhooks.getDelivery",
    summary: "A delivery with its body and every attempt (status code, duration, error, the start of the response)",
    tag: "webhooks",
    permission: "admin:webhook:read",
    params: DeliveryParams,
    query: NoQuery,
    response: WebhookDeliveryDetailSchema,
    handler: async ({ ctx, params }) => ({ body: await requireWebhookDelivery(ctx, params.orgId, params.id, params.deliveryId) }),
  }),
  operation({
    method: "POST",
    path: "/organizations/{orgId}/webhooks/{id}/deliveries/{deliveryId}/replay",
    operationId: "webhooks.replayDelivery",
    summary: "Send a delivered or dead delivery again, with the same webhook-id and body, on a fresh retry schedule",
    tag: "webhooks",
    permission: "admin:webhook:write",
    params: DeliveryParams,
    query: NoQuery,
    response: WebhookDeliveryDetailSchema,
    handler: async ({ ctx, params }) => {
      const delivery = await replayWebhookDelivery(ctx, params.orgId, params.id, params.deliveryId);
      ctx.audit({
        eventType: "webhook.delivery_replayed",
        organizationId: params.orgId,
        targetType: "webhook",
        targetId: params.id,
        data: { deliveryId: delivery.id, eventType: delivery.eventType },
      });
      return { body: delivery };
    },
  }),
];
