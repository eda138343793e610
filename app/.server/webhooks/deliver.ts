import { Webhook } from "standardwebhooks";
import type { JobServiceContext, StagedContext } from "../context";
import { AppError } from "../errors";
import type { JobContext, JobPayloads } from "../jobs/queue";
import { openWebhookSecret } from "./secrets";
import { sendWebhook } from "./send";

/**
 * One attempt at a webhook delivery, as the `webhook` job (decision 047): sign the stored body
 * per Standard Webhooks, POST it through the outbound guard, log the attempt, and either finish
 * the delivery or throw so the queue retries it on the webhook schedule (jobs/schedule.ts). The
 * last failure leaves the delivery dead; enough failures in a row turn the endpoint off, audited.
 */
export const WEBHOOK_TIMEOUT_MS = 10_000;
export const WEBHOOK_MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * A failed attempt, for the queue: a reason code only (the endpoint's answer stays in the
 * attempt log). No one is answered with it; 502 says the fault is the endpoint's.
 */
export class WebhookAttemptFailed extends AppError {
  constructor(code: string) {
    super(502, code, `webhook not delivered: ${code}`);
    this.name = "WebhookAttemptFailed";
  }
}

/** The Standard Webhooks headers of one attempt: the delivery's id, now, and the signature. */
export function signedHeaders(secret: string, deliveryId: string, body: string, at: Date): Record<string, string> {
  return {
    "webhook-id": deliveryId,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign(deliveryId, at, body),
  };
}

/** The collaborators of a delivery: the secret's key, the outbound rule, the failure limit. */
type DeliveryContext = JobServiceContext<"encrypter" | "config" | "settings">;

export async function deliverWebhookJob(ctx: DeliveryContext, data: JobPayloads["webhook"], job: JobContext): Promise<void> {
  const prisma = ctx.db;
  const delivery = await prisma.webhookDelivery.findUnique({ where: { id: data.deliveryId }, include: { endpoint: true } });
  // Deleted with its endpoint, or delivered by an earlier run whose report was lost.
  if (!delivery || delivery.status === "delivered") return;
  const { endpoint } = delivery;
  if (!endpoint.enabled) {
    await prisma.webhookDelivery.update({ where: { id: delivery.id }, data: { status: "dead", lastError: "endpoint_disabled", nextAttemptAt: null } });
    return;
  }
  const secret = openWebhookSecret(ctx.encrypter, endpoint.id, endpoint.secretEncrypted);
  const startedAt = new Date();
  const result = await sendWebhook(endpoint.url, {
    headers: signedHeaders(secret, delivery.id, delivery.payload, startedAt),
    body: delivery.payload,
    allowPrivateNetworks: ctx.config.outboundAllowPrivateNetworks,
    timeoutMs: WEBHOOK_TIMEOUT_MS,
    maxResponseBytes: WEBHOOK_MAX_RESPONSE_BYTES,
  });
  const delivered = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
  const reason = delivered ? null : (result.error ?? `HTTP_${result.statusCode}`);
  const schedule = ctx.retryScheduleOf("webhook");
  const wait = schedule[job.retryCount];
  const status = delivered ? "delivered" : wait === undefined ? "dead" : "retrying";
  // The attempt and the delivery's state are written together.
  await ctx.transaction(async (tx) => {
    await tx.db.webhookAttempt.create({
      data: {
        deliveryId: delivery.id,
        attempt: delivery.attempts + 1,
        startedAt,
        durationMs: result.durationMs,
        statusCode: result.statusCode,
        error: result.error,
        responseBody: result.responseBody,
      },
    });
    await tx.db.webhookDelivery.update({
      where: { id: delivery.id },
      data: {
        status,
        attempts: { increment: 1 },
        lastStatusCode: result.statusCode,
        lastError: reason,
        nextAttemptAt: status === "retrying" ? new Date(Date.now() + wait! * 1000) : null,
        ...(delivered ? { deliveredAt: new Date() } : {}),
      },
    });
  });
  if (delivered) {
    if (endpoint.consecutiveFailures > 0) await prisma.webhookEndpoint.update({ where: { id: endpoint.id }, data: { consecutiveFailures: 0 } });
    return;
  }
  if (await countFailure(ctx, endpoint.id, endpoint.organizationId)) {
    // Turned off by this failure: no more attempts until an administrator turns it on and replays.
    await prisma.webhookDelivery.update({ where: { id: delivery.id }, data: { status: "dead", nextAttemptAt: null } });
    return;
  }
  throw new WebhookAttemptFailed(reason!);
}

/** Counts a failed attempt; returns true when it turned the endpoint off (with its audit entry). */
async function countFailure(staged: StagedContext<"settings">, endpointId: string, organizationId: string): Promise<boolean> {
  const limit = await staged.settings.get("webhooks.disableAfterFailures");
  return staged.transaction(async (ctx) => {
    const endpoint = await ctx.db.webhookEndpoint.update({ where: { id: endpointId }, data: { consecutiveFailures: { increment: 1 } } });
    if (!endpoint.enabled || endpoint.consecutiveFailures < limit) return false;
    await ctx.db.webhookEndpoint.update({ where: { id: endpointId }, data: { enabled: false, disabledReason: "consecutive_failures", version: { increment: 1 } } });
    ctx.audit({
      eventType: "webhook.disabled",
      organizationId,
      targetType: "webhook",
      targetId: endpointId,
      data: { reason: "consecutive_failures", consecutiveFailures: endpoint.consecutiveFailures },
    });
    return true;
  });
}
