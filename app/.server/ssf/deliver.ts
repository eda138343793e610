import type { JWTPayload } from "jose";
import type { JobServiceContext } from "../context";
import { AppError } from "../errors";
import type { JobContext, JobPayloads } from "../jobs/queue";
import { sendWebhook } from "../webhooks/send";
import { openPushAuthorization } from "./secrets";
import { POLL } from "./subjects";
import { signSet } from "./sign";

/**
 * One push of a Security Event Token (RFC 8935), as the `ssf-push` job (decision 093): sign the
 * SET if this is its first attempt (and keep the bytes, so every retry sends the same token),
 * POST it as application/secevent+jwt with the stream's Authorization through the outbound guard
 * (the webhooks' sender: special-use addresses refused, no redirects, one deadline), and record
 * the outcome. A 2xx (202 per the RFC) is delivered; a 400 with an RFC 8935 error body is the
 * receiver refusing that SET for good (dead, with its `err` when it sent one); anything else is tried again on the
 * schedule, and the last failure leaves the SET dead.
 *
 * A process killed after the receiver took the SET and before the row was updated sends it again
 * after the restart, with the same jti: a receiver de-duplicates by jti (RFC 8935 §2).
 */
export const SSF_PUSH_TIMEOUT_MS = 5_000;
const MAX_RESPONSE_BYTES = 16 * 1024;

export class SsfPushFailed extends AppError {
  constructor(code: string) {
    super(502, code, `security event not delivered: ${code}`);
    this.name = "SsfPushFailed";
  }
}

type PushContext = JobServiceContext<"encrypter" | "config" | "keys" | "logger">;

/** The stored SET of an event, signing and storing it first when it has none yet. */
export async function setOf(ctx: Pick<PushContext, "db" | "keys">, event: { id: string; setJwt: string | null; claims: unknown }, organizationId: string): Promise<string> {
  if (event.setJwt) return event.setJwt;
  const jwt = await signSet(ctx.keys, organizationId, event.claims as JWTPayload);
  // Another attempt may have signed it meanwhile: the first stored token is the one sent from then on.
  const stored = await ctx.db.ssfEvent.updateManyAndReturn({ where: { id: event.id, setJwt: null }, data: { setJwt: jwt }, select: { setJwt: true } });
  if (stored.length > 0) return jwt;
  const again = await ctx.db.ssfEvent.findUniqueOrThrow({ where: { id: event.id }, select: { setJwt: true } });
  return again.setJwt!;
}

/** The `err` of an RFC 8935 §2.3 error body, when the answer is one. */
function errorCodeOf(body: string | null): string | null {
  if (!body) return null;
  try {
    const parsed = JSON.parse(body) as { err?: unknown };
    return typeof parsed.err === "string" && /^[a-z_]{1,40}$/.test(parsed.err) ? parsed.err : null;
  } catch {
    return null;
  }
}

export async function deliverSsfPushJob(ctx: PushContext, data: JobPayloads["ssf-push"], job: JobContext): Promise<void> {
  const event = await ctx.db.ssfEvent.findUnique({ where: { id: data.eventId }, include: { stream: true } });
  // Deleted with its stream, or delivered by an earlier run whose report was lost.
  if (!event || event.status === "delivered" || event.status === "acknowledged" || event.status === "dead") return;
  const { stream } = event;
  // Held while the stream is paused (resuming queues it again), or left for the poll when the stream switched to it; dropped when it was disabled.
  if (stream.status === "paused" || stream.deliveryMethod === POLL) return;
  if (stream.status === "disabled" || !stream.pushEndpointUrl) {
    await ctx.db.ssfEvent.update({ where: { id: event.id }, data: { status: "dead", lastError: "stream_disabled" } });
    return;
  }
  // A receiver whose client was deactivated or deleted since gets nothing more, queued or not.
  const client = await ctx.db.client.findUnique({ where: { id: stream.clientId }, select: { status: true, organizationId: true } });
  if (!client || client.status !== "active" || client.organizationId !== stream.organizationId) {
    await ctx.db.ssfEvent.update({ where: { id: event.id }, data: { status: "dead", lastError: "client_inactive" } });
    return;
  }
  const set = await setOf(ctx, event, stream.organizationId);
  const authorization = stream.pushAuthorizationEncrypted ? openPushAuthorization(ctx.encrypter, stream.id, stream.pushAuthorizationEncrypted) : null;
  const result = await sendWebhook(stream.pushEndpointUrl, {
    headers: { accept: "application/json", ...(authorization ? { authorization } : {}) },
    body: set,
    contentType: "application/secevent+jwt",
    userAgent: "Porta-Shared-Signals/1",
    allowPrivateNetworks: ctx.config.outboundAllowPrivateNetworks,
    timeoutMs: SSF_PUSH_TIMEOUT_MS,
    maxResponseBytes: MAX_RESPONSE_BYTES,
  });
  const code = result.statusCode;
  const delivered = code !== null && code >= 200 && code < 300;
  // A 400 is the receiver refusing this SET (RFC 8935 §2.3): the same bytes would be refused again.
  const refused = code === 400;
  const reason = delivered ? null : refused ? (errorCodeOf(result.responseBody) ?? "HTTP_400") : (result.error ?? `HTTP_${code}`);
  const last = ctx.retryScheduleOf("ssf-push")[job.retryCount] === undefined;
  const status = delivered ? "delivered" : refused || last ? "dead" : "retrying";
  await ctx.db.ssfEvent.update({
    where: { id: event.id },
    data: { status, attempts: { increment: 1 }, lastError: reason, ...(delivered ? { deliveredAt: new Date() } : {}) },
  });
  ctx.logger.info({ ssfEventId: event.id, streamId: stream.id, status, statusCode: code, error: reason }, "security event push");
  if (status === "retrying") throw new SsfPushFailed(reason!);
}
