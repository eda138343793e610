import type { Prisma, WebhookAttempt as AttemptRow, WebhookDelivery as DeliveryRow, WebhookEndpoint as EndpointRow } from "~/generated/prisma/client";
import type {
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookDeliveryStatus,
  WebhookEndpoint,
  WebhookEndpointCreate,
  WebhookEndpointUpdate,
} from "~/schemas/webhook";
import type { Context } from "../../context";
import { newUuidV7 } from "../../db/ids";
import { compareAndSet } from "../../db/compare-and-set";
import { conflict, notFound, validation } from "../../errors";
import { isSpecialUseHost } from "../../outbound/guard";
import { newWebhookSecret, sealWebhookSecret } from "../../webhooks/secrets";
import { requireOrganization } from "../organizations/service";
import { listMode, listPage, type ListQuery, type Page } from "../http/pagination";

/**
 * Webhook endpoints of an organization and their delivery log (decision 047). The signing secret
 * is made here, answered once (at creation and rotation) and stored sealed; deliveries are
 * written by the audit writer (webhooks/outbox.ts) and sent by the `webhook` job.
 */
export function toWebhookEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    organizationId: row.organizationId,
    url: row.url,
    description: row.description,
    eventTypes: row.eventTypes,
    enabled: row.enabled,
    consecutiveFailures: row.consecutiveFailures,
    disabledReason: row.disabledReason,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function toWebhookDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    endpointId: row.endpointId,
    eventType: row.eventType,
    auditEntryId: row.auditEntryId,
    status: row.status as WebhookDeliveryStatus,
    attempts: row.attempts,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null,
    deliveredAt: row.deliveredAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}

function toDeliveryDetail(row: DeliveryRow & { attemptLog: AttemptRow[] }): WebhookDeliveryDetail {
  return {
    ...toWebhookDelivery(row),
    payload: row.payload,
    attemptLog: row.attemptLog.map((a) => ({
      attempt: a.attempt,
      startedAt: a.startedAt.toISOString(),
      durationMs: a.durationMs,
      statusCode: a.statusCode,
      error: a.error,
      responseBody: a.responseBody,
    })),
  };
}

/**
 * https only, unless the operator allows private networks (OUTBOUND_ALLOW_PRIVATE_NETWORKS: tests,
 * closed networks), which also allows plain http there. A host that is a special-use address is
 * refused here already; names are checked when each attempt resolves them.
 */
function assertAllowedUrl(ctx: Context<"config">, value: string): void {
  const url = new URL(value);
  const allowPrivate = ctx.config.outboundAllowPrivateNetworks;
  if (url.protocol !== "https:" && !allowPrivate) throw validation([{ field: "url", message: "must be an https URL" }]);
  if (!allowPrivate && isSpecialUseHost(url)) throw validation([{ field: "url", message: "must not point to a private, loopback or special-use address" }]);
}

export async function listWebhookEndpoints(ctx: Context, organizationId: string, query: ListQuery): Promise<Page<WebhookEndpoint>> {
  await requireOrganization(ctx, organizationId);
  const where: Prisma.WebhookEndpointWhereInput = { organizationId };
  const order = query.order ?? "asc";
  const page = await listPage(listMode(query), {
    count: () => ctx.db.webhookEndpoint.count({ where }),
    offset: (skip, take) => ctx.db.webhookEndpoint.findMany({ where, orderBy: [{ createdAt: order }, { id: order }], skip, take }),
    after: (afterId, take) =>
      ctx.db.webhookEndpoint.findMany({ where: { ...where, ...(afterId ? { id: order === "asc" ? { gt: afterId } : { lt: afterId } } : {}) }, orderBy: { id: order }, take }),
  });
  return { ...page, data: page.data.map(toWebhookEndpoint) };
}

export async function requireWebhookEndpoint(ctx: Context, organizationId: string, id: string): Promise<EndpointRow> {
  const row = await ctx.db.webhookEndpoint.findFirst({ where: { id, organizationId } });
  if (!row) throw notFound("webhook endpoint");
  return row;
}

export async function createWebhookEndpoint(
  ctx: Context<"config" | "encrypter">,
  organizationId: string,
  input: WebhookEndpointCreate,
): Promise<{ endpoint: EndpointRow; secret: string }> {
  await requireOrganization(ctx, organizationId);
  assertAllowedUrl(ctx, input.url);
  const id = newUuidV7();
  const secret = newWebhookSecret();
  const endpoint = await ctx.db.webhookEndpoint.create({
    data: {
      id,
      organizationId,
      url: input.url,
      description: input.description ?? "",
      eventTypes: input.eventTypes,
      enabled: input.enabled ?? true,
      secretEncrypted: sealWebhookSecret(ctx.encrypter, id, secret),
    },
  });
  return { endpoint, secret };
}

async function writeEndpoint(ctx: Context, current: EndpointRow, data: Prisma.WebhookEndpointUpdateManyMutationInput, expectedVersion: number | undefined) {
  await compareAndSet({ ifMatch: expectedVersion, read: current.version }, (guard) =>
    ctx.db.webhookEndpoint.updateMany({ where: { id: current.id, ...guard }, data: { ...data, version: { increment: 1 } } }),
  );
  return requireWebhookEndpoint(ctx, current.organizationId, current.id);
}

export async function updateWebhookEndpoint(
  ctx: Context<"config">,
  organizationId: string,
  id: string,
  input: WebhookEndpointUpdate,
  expectedVersion: number | undefined,
): Promise<EndpointRow> {
  const current = await requireWebhookEndpoint(ctx, organizationId, id);
  if (input.url !== undefined) assertAllowedUrl(ctx, input.url);
  const turnedOn = input.enabled === true && !current.enabled;
  return writeEndpoint(
    ctx,
    current,
    {
      ...(input.url !== undefined ? { url: input.url } : {}),
      ...(input.eventTypes !== undefined ? { eventTypes: input.eventTypes } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.enabled !== undefined ? { enabled: input.enabled, disabledReason: null } : {}),
      // Turned on again: the failures that turned it off no longer count.
      ...(turnedOn ? { consecutiveFailures: 0 } : {}),
    },
    expectedVersion,
  );
}

export async function rotateWebhookSecret(
  ctx: Context<"encrypter">,
  organizationId: string,
  id: string,
  expectedVersion: number | undefined,
): Promise<{ endpoint: EndpointRow; secret: string }> {
  const current = await requireWebhookEndpoint(ctx, organizationId, id);
  const secret = newWebhookSecret();
  const endpoint = await writeEndpoint(ctx, current, { secretEncrypted: sealWebhookSecret(ctx.encrypter, id, secret) }, expectedVersion);
  return { endpoint, secret };
}

export async function deleteWebhookEndpoint(ctx: Context, organizationId: string, id: string, expectedVersion: number | undefined): Promise<EndpointRow> {
  const current = await requireWebhookEndpoint(ctx, organizationId, id);
  await compareAndSet({ ifMatch: expectedVersion, read: current.version }, (guard) => ctx.db.webhookEndpoint.deleteMany({ where: { id, ...guard } }));
  return current;
}

export async function listWebhookDeliveries(
  ctx: Context,
  organizationId: string,
  endpointId: string,
  query: ListQuery & { status?: WebhookDeliveryStatus | undefined },
): Promise<Page<WebhookDelivery>> {
  await requireWebhookEndpoint(ctx, organizationId, endpointId);
  const where: Prisma.WebhookDeliveryWhereInput = { endpointId, ...(query.status ? { status: query.status } : {}) };
  // Newest first unless asked otherwise: the log is read for what just happened.
  const order = query.order ?? "desc";
  const page = await listPage(listMode(query), {
    count: () => ctx.db.webhookDelivery.count({ where }),
    offset: (skip, take) => ctx.db.webhookDelivery.findMany({ where, orderBy: [{ createdAt: order }, { id: order }], skip, take }),
    after: (afterId, take) =>
      ctx.db.webhookDelivery.findMany({ where: { ...where, ...(afterId ? { id: order === "asc" ? { gt: afterId } : { lt: afterId } } : {}) }, orderBy: { id: order }, take }),
  });
  return { ...page, data: page.data.map(toWebhookDelivery) };
}

export async function requireWebhookDelivery(ctx: Context, organizationId: string, endpointId: string, deliveryId: string): Promise<WebhookDeliveryDetail> {
  await requireWebhookEndpoint(ctx, organizationId, endpointId);
  const row = await ctx.db.webhookDelivery.findFirst({
    where: { id: deliveryId, endpointId },
    include: { attemptLog: { orderBy: [{ startedAt: "asc" }, { attempt: "asc" }] } },
  });
  if (!row) throw notFound("webhook delivery");
  return toDeliveryDetail(row);
}

/**
 * Sends a delivery again, with the same webhook-id and body (a receiver that saw it already can
 * tell), on a fresh retry schedule. A delivery still being tried is not doubled.
 */
export async function replayWebhookDelivery(ctx: Context, organizationId: string, endpointId: string, deliveryId: string): Promise<WebhookDeliveryDetail> {
  const endpoint = await requireWebhookEndpoint(ctx, organizationId, endpointId);
  if (!endpoint.enabled) throw conflict("webhook_disabled", "The endpoint is turned off. Turn it on before replaying a delivery.");
  const claimed = await ctx.db.webhookDelivery.updateMany({
    where: { id: deliveryId, endpointId, status: { in: ["delivered", "dead"] } },
    data: { status: "pending", nextAttemptAt: null },
  });
  if (claimed.count !== 1) {
    await requireWebhookDelivery(ctx, organizationId, endpointId, deliveryId);
    throw conflict("webhook_delivery_in_progress", "The delivery is still being tried; replay it once it was delivered or is dead.");
  }
  const jobId = await ctx.enqueue("webhook", { deliveryId });
  if (!jobId) throw conflict("queue_full", "The webhook queue is full. Try again later.");
  return requireWebhookDelivery(ctx, organizationId, endpointId, deliveryId);
}
