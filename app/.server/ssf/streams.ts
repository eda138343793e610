import type { SsfStream } from "~/generated/prisma/client";
import type { Context, StagedContext } from "../context";
import { newUuidV7 } from "../db/ids";
import { isSpecialUseHost } from "../outbound/guard";
import { EVENTS_SUPPORTED, VERIFICATION } from "./events";
import { SsfError } from "./errors";
import { sealPushAuthorization } from "./secrets";
import { POLL, PUSH, subjectKeyOf, type PollSchema, type StatusWriteSchema, type StreamPatchSchema, type StreamWriteSchema, type SubjectId, type SubjectWriteSchema } from "./subjects";
import { setOf } from "./deliver";
import type { z } from "zod";

/**
 * Stream management of SSF 1.0 §8 (decision 093): a receiver, authenticated as one client of the
 * organization (access.ts), creates, reads, updates and deletes its streams, sets their status,
 * adds and removes subjects, asks for a verification event, and polls a poll stream (RFC 8936).
 * Every stream is its client's: another client's stream id is the same 404 as an unknown one.
 * Each write is audited with the client as actor, in the write's transaction.
 */
export interface SsfAccess {
  organizationId: string;
  slug: string;
  issuer: string;
  clientId: string;
}

type Ctx = StagedContext<"config" | "encrypter" | "keys">;

/** The poll endpoint of a stream, which the transmitter gives (RFC 8936 §2). */
export const pollUrlOf = (issuer: string, streamId: string) => `${issuer}/ssf/poll/${streamId}`;

/** The stream configuration as SSF 1.0 §8.1.1 shows it; the push Authorization is never shown. */
export function streamConfigOf(access: SsfAccess, stream: SsfStream) {
  return {
    stream_id: stream.id,
    iss: access.issuer,
    aud: stream.audience,
    delivery:
      stream.deliveryMethod === PUSH ? { method: PUSH, endpoint_url: stream.pushEndpointUrl } : { method: POLL, endpoint_url: pollUrlOf(access.issuer, stream.id) },
    events_supported: [...EVENTS_SUPPORTED],
    events_requested: stream.eventsRequested,
    events_delivered: stream.eventsDelivered,
    ...(stream.description ? { description: stream.description } : {}),
  };
}

/**
 * A push URL follows the webhooks' rule: https only and never a special-use address, unless the
 * operator allows private networks (OUTBOUND_ALLOW_PRIVATE_NETWORKS), which also allows plain
 * http there. Names are checked again when each push resolves them.
 */
function assertPushUrl(ctx: Context<"config">, value: string): void {
  const url = new URL(value);
  const allowPrivate = ctx.config.outboundAllowPrivateNetworks;
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:")) throw new SsfError(400, "invalid_request", "delivery.endpoint_url: must be an https URL");
  if (url.username || url.password) throw new SsfError(400, "invalid_request", "delivery.endpoint_url: must not contain a user name or password");
  if (url.hash) throw new SsfError(400, "invalid_request", "delivery.endpoint_url: must not contain a fragment");
  if (!allowPrivate && isSpecialUseHost(url)) throw new SsfError(400, "invalid_request", "delivery.endpoint_url: must not point to a private, loopback or special-use address");
}

/** Requested ∩ supported, in the order requested. */
const deliveredOf = (requested: readonly string[]) => [...new Set(requested.filter((e) => EVENTS_SUPPORTED.includes(e)))];

const notFound = () => new SsfError(404, "not_found", "There is no such stream.");

async function requireStream(ctx: Pick<Ctx, "db">, access: SsfAccess, streamId: string): Promise<SsfStream> {
  const stream = await ctx.db.ssfStream.findFirst({ where: { id: streamId, organizationId: access.organizationId, clientId: access.clientId } });
  if (!stream) throw notFound();
  return stream;
}

type Delivery = z.infer<typeof StreamWriteSchema>["delivery"];

/** The columns a delivery method sets; a push stream's Authorization sealed to the stream. */
function deliveryColumns(ctx: Ctx, streamId: string, delivery: Delivery) {
  if (delivery.method === PUSH) {
    assertPushUrl(ctx, delivery.endpoint_url);
    return {
      deliveryMethod: PUSH,
      pushEndpointUrl: delivery.endpoint_url,
      pushAuthorizationEncrypted: delivery.authorization_header ? sealPushAuthorization(ctx.encrypter, streamId, delivery.authorization_header) : null,
    };
  }
  return { deliveryMethod: POLL, pushEndpointUrl: null, pushAuthorizationEncrypted: null };
}

const audited = (access: SsfAccess, eventType: "ssf_stream.created" | "ssf_stream.updated" | "ssf_stream.deleted", streamId: string, data: Record<string, unknown>) => ({
  eventType,
  organizationId: access.organizationId,
  targetType: "ssf_stream",
  targetId: streamId,
  data: { clientId: access.clientId, ...data },
});

export async function createStream(ctx: Ctx, access: SsfAccess, input: z.infer<typeof StreamWriteSchema>) {
  const id = newUuidV7();
  const columns = deliveryColumns(ctx, id, input.delivery);
  const stream = await ctx.transaction(async (tx) => {
    const created = await tx.db.ssfStream.create({
      data: {
        id,
        organizationId: access.organizationId,
        clientId: access.clientId,
        audience: access.clientId,
        eventsRequested: input.events_requested,
        eventsDelivered: deliveredOf(input.events_requested),
        description: input.description ?? null,
        ...columns,
      },
    });
    tx.audit(audited(access, "ssf_stream.created", id, { deliveryMethod: columns.deliveryMethod, eventsDelivered: created.eventsDelivered }));
    return created;
  });
  return streamConfigOf(access, stream);
}

export async function getStream(ctx: Ctx, access: SsfAccess, streamId: string) {
  return streamConfigOf(access, await requireStream(ctx, access, streamId));
}

export async function listStreams(ctx: Ctx, access: SsfAccess) {
  const streams = await ctx.db.ssfStream.findMany({ where: { organizationId: access.organizationId, clientId: access.clientId }, orderBy: { createdAt: "asc" }, take: 100 });
  return streams.map((s) => streamConfigOf(access, s));
}

/** PATCH (the members given) or PUT (all of them: the missing ones take their defaults). */
export async function updateStream(ctx: Ctx, access: SsfAccess, input: z.infer<typeof StreamPatchSchema>, replace: boolean) {
  const current = await requireStream(ctx, access, input.stream_id);
  const events = input.events_requested ?? (replace ? [] : undefined);
  const description = input.description ?? (replace ? null : undefined);
  // A PATCH that leaves the delivery out keeps it, Authorization included.
  const columns = input.delivery ? deliveryColumns(ctx, current.id, input.delivery) : {};
  const stream = await ctx.transaction(async (tx) => {
    const updated = await tx.db.ssfStream.update({
      where: { id: current.id },
      data: {
        ...columns,
        ...(events !== undefined ? { eventsRequested: events, eventsDelivered: deliveredOf(events) } : {}),
        ...(description !== undefined ? { description } : {}),
        version: { increment: 1 },
      },
    });
    // A poll stream turned push sends what was waiting for the poll.
    if (current.deliveryMethod === POLL && updated.deliveryMethod === PUSH && updated.status === "enabled") {
      const waiting = await tx.db.ssfEvent.findMany({ where: { streamId: current.id, status: "pending" }, orderBy: { createdAt: "asc" }, select: { id: true } });
      for (const event of waiting) await tx.enqueue("ssf-push", { eventId: event.id });
    }
    tx.audit(audited(access, "ssf_stream.updated", current.id, { change: { deliveryMethod: updated.deliveryMethod, eventsDelivered: updated.eventsDelivered } }));
    return updated;
  });
  return streamConfigOf(access, stream);
}

export async function deleteStream(ctx: Ctx, access: SsfAccess, streamId: string): Promise<void> {
  const stream = await requireStream(ctx, access, streamId);
  await ctx.transaction(async (tx) => {
    await tx.db.ssfStream.delete({ where: { id: stream.id } });
    tx.audit(audited(access, "ssf_stream.deleted", stream.id, {}));
  });
}

export async function getStatus(ctx: Ctx, access: SsfAccess, streamId: string) {
  const stream = await requireStream(ctx, access, streamId);
  return { stream_id: stream.id, status: stream.status, ...(stream.reason ? { reason: stream.reason } : {}) };
}

/**
 * Sets a stream's status (SSF 1.0 §8.1.2.2). Paused holds the events that occur meanwhile;
 * enabling a paused push stream queues them, oldest first. Disabled drops them: nothing is kept
 * for a disabled stream, and what was waiting is dead.
 */
export async function setStatus(ctx: Ctx, access: SsfAccess, input: z.infer<typeof StatusWriteSchema>) {
  const stream = await requireStream(ctx, access, input.stream_id);
  const updated = await ctx.transaction(async (tx) => {
    const row = await tx.db.ssfStream.update({ where: { id: stream.id }, data: { status: input.status, reason: input.reason ?? null, version: { increment: 1 } } });
    if (input.status === "disabled") {
      await tx.db.ssfEvent.updateMany({ where: { streamId: stream.id, status: { in: ["pending", "retrying"] } }, data: { status: "dead", lastError: "stream_disabled" } });
    }
    if (input.status === "enabled" && stream.status === "paused" && stream.deliveryMethod === PUSH) {
      const held = await tx.db.ssfEvent.findMany({ where: { streamId: stream.id, status: { in: ["pending", "retrying"] } }, orderBy: { createdAt: "asc" }, select: { id: true } });
      for (const event of held) await tx.enqueue("ssf-push", { eventId: event.id });
    }
    tx.audit(audited(access, "ssf_stream.updated", stream.id, { change: { status: input.status } }));
    return row;
  });
  return { stream_id: updated.id, status: updated.status, ...(updated.reason ? { reason: updated.reason } : {}) };
}

/** The organization's user a subject names, or null (an unknown subject is kept, and matches nobody). */
async function userOf(ctx: Pick<Ctx, "db">, access: SsfAccess, subject: SubjectId): Promise<string | null> {
  if (subject.format === "iss_sub") {
    if (subject.iss !== access.issuer) throw new SsfError(400, "invalid_request", "subject.iss: must be this transmitter's issuer");
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(subject.sub)) return null;
    const user = await ctx.db.user.findFirst({ where: { id: subject.sub, organizationId: access.organizationId }, select: { id: true } });
    return user?.id ?? null;
  }
  const user = await ctx.db.user.findFirst({ where: { email: subject.email, organizationId: access.organizationId }, select: { id: true } });
  return user?.id ?? null;
}

/**
 * Adds a subject (SSF 1.0 §8.1.3.2). The answer is the same whether or not the subject names a
 * user of the organization, so that a receiver cannot learn who has an account.
 */
export async function addSubject(ctx: Ctx, access: SsfAccess, input: z.infer<typeof SubjectWriteSchema>): Promise<void> {
  const stream = await requireStream(ctx, access, input.stream_id);
  const userId = await userOf(ctx, access, input.subject);
  const key = subjectKeyOf(input.subject);
  await ctx.transaction(async (tx) => {
    await tx.db.ssfSubject.upsert({
      where: { streamId_key: { streamId: stream.id, key } },
      create: { streamId: stream.id, format: input.subject.format, key, subject: input.subject, userId },
      update: { userId },
    });
    tx.audit(audited(access, "ssf_stream.updated", stream.id, { change: { subjectAdded: input.subject.format } }));
  });
}

export async function removeSubject(ctx: Ctx, access: SsfAccess, input: z.infer<typeof SubjectWriteSchema>): Promise<void> {
  const stream = await requireStream(ctx, access, input.stream_id);
  const key = subjectKeyOf(input.subject);
  await ctx.transaction(async (tx) => {
    const removed = await tx.db.ssfSubject.deleteMany({ where: { streamId: stream.id, key } });
    if (removed.count === 0) throw new SsfError(404, "not_found", "The stream has no such subject.");
    tx.audit(audited(access, "ssf_stream.updated", stream.id, { change: { subjectRemoved: input.subject.format } }));
  });
}

/**
 * A verification event (SSF 1.0 §8.1.4.2): a SET with the receiver's `state`, about the stream
 * itself, sent the way the stream delivers (pushed, or waiting for the next poll).
 */
export async function requestVerification(ctx: Ctx, access: SsfAccess, streamId: string, state: string | undefined): Promise<void> {
  const stream = await requireStream(ctx, access, streamId);
  if (stream.status !== "enabled") throw new SsfError(400, "invalid_request", "The stream is not enabled.");
  const jti = newUuidV7();
  await ctx.transaction(async (tx) => {
    await tx.db.ssfEvent.create({
      data: {
        id: jti,
        streamId: stream.id,
        claims: {
          iss: access.issuer,
          aud: stream.audience,
          iat: Math.floor(Date.now() / 1000),
          jti,
          sub_id: { format: "opaque", id: stream.id },
          events: { [VERIFICATION]: state !== undefined ? { state } : {} },
        },
      },
    });
    if (stream.deliveryMethod === PUSH) await tx.enqueue("ssf-push", { eventId: jti });
  });
}

const POLL_DEFAULT_MAX = 100;

/**
 * RFC 8936 poll: acknowledgements and errors first (an acknowledged SET is never sent again; one
 * the receiver reports an error for is dead with its `err`), then up to `maxEvents` SETs that
 * wait, oldest first. A SET sent but not acknowledged is sent again by the next poll. The answer
 * comes at once whatever `returnImmediately` says (§2.4 lets a transmitter not wait).
 */
export async function poll(ctx: Ctx, access: SsfAccess, streamId: string, input: z.infer<typeof PollSchema>) {
  const stream = await requireStream(ctx, access, streamId);
  if (stream.deliveryMethod !== POLL) throw new SsfError(400, "invalid_request", "The stream delivers by push, not poll.");
  const errored = Object.entries(input.setErrs);
  if (input.ack.length > 0 || errored.length > 0) {
    await ctx.transaction(async (tx) => {
      if (input.ack.length > 0) {
        await tx.db.ssfEvent.updateMany({ where: { streamId: stream.id, id: { in: input.ack.filter(isUuidText) }, status: { not: "acknowledged" } }, data: { status: "acknowledged", deliveredAt: new Date() } });
      }
      for (const [jti, error] of errored) {
        if (!isUuidText(jti)) continue;
        await tx.db.ssfEvent.updateMany({ where: { streamId: stream.id, id: jti, status: { not: "acknowledged" } }, data: { status: "dead", lastError: error.err } });
      }
    });
  }
  const max = input.maxEvents ?? POLL_DEFAULT_MAX;
  if (stream.status !== "enabled" || max === 0) return { sets: {}, moreAvailable: false };
  const waiting = await ctx.db.ssfEvent.findMany({
    where: { streamId: stream.id, status: { in: ["pending", "delivered"] } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    take: max + 1,
  });
  const page = waiting.slice(0, max);
  const sets: Record<string, string> = {};
  for (const event of page) sets[event.id] = await setOf(ctx, event, access.organizationId);
  const sent = page.filter((e) => e.status === "pending").map((e) => e.id);
  if (sent.length > 0) await ctx.db.ssfEvent.updateMany({ where: { id: { in: sent }, status: "pending" }, data: { status: "delivered", attempts: { increment: 1 } } });
  return { sets, moreAvailable: waiting.length > max };
}

const isUuidText = (value: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
