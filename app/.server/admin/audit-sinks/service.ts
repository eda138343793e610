import { X509Certificate } from "node:crypto";
import type { AuditSink as SinkRow, Prisma } from "~/generated/prisma/client";
import {
  auditSinkUrlIssue,
  type AuditSink,
  type AuditSinkCreate,
  type AuditSinkDeadLetter,
  type AuditSinkKind,
  type AuditSinkTestResult,
  type AuditSinkUpdate,
} from "~/schemas/audit-sink";
import type { Context } from "../../context";
import { newUuidV7 } from "../../db/ids";
import { compareAndSet } from "../../db/compare-and-set";
import { notFound, validation } from "../../errors";
import { isSpecialUseHost } from "../../outbound/guard";
import { sendToSink } from "../../audit-stream/drain";
import { lastFourOf, sealSinkSecret } from "../../audit-stream/secrets";
import { requireOrganization } from "../organizations/service";
import { listMode, listPage, type ListQuery, type Page } from "../http/pagination";

/**
 * An organization's audit sinks (decision 092): where its audit trail is streamed as entries
 * commit. The secret (a token or API key) is stored sealed and never answered; the rows each
 * entry leaves for a sink are written by the audit writer (audit-stream/outbox.ts) and sent by the
 * `audit-stream` job. The deployment's own sinks come from AUDIT_SINKS and are not reached here.
 */
export function toAuditSink(row: SinkRow, counts: { pending: number; dead: number }): AuditSink {
  return {
    id: row.id,
    organizationId: row.organizationId,
    name: row.name,
    kind: row.kind as AuditSinkKind,
    url: row.url,
    headerName: row.headerName,
    hasSecret: row.secretEncrypted !== null,
    secretLast4: row.secretLast4,
    hasCaPem: row.caPem !== null,
    eventFamilies: row.eventFamilies,
    enabled: row.enabled,
    pending: counts.pending,
    dead: counts.dead,
    deliveredCount: row.deliveredCount,
    lastDeliveredAt: row.lastDeliveredAt?.toISOString() ?? null,
    lastError: row.lastError,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

async function countsOf(ctx: Context, sinkIds: string[]): Promise<Map<string, { pending: number; dead: number }>> {
  const groups = await ctx.db.auditSinkEvent.groupBy({ by: ["sinkId", "status"], where: { sinkId: { in: sinkIds } }, _count: { _all: true } });
  const counts = new Map(sinkIds.map((id) => [id, { pending: 0, dead: 0 }]));
  for (const group of groups) {
    const entry = counts.get(group.sinkId)!;
    if (group.status === "dead") entry.dead = group._count._all;
    else entry.pending = group._count._all;
  }
  return counts;
}

export async function describeAuditSink(ctx: Context, row: SinkRow): Promise<AuditSink> {
  return toAuditSink(row, (await countsOf(ctx, [row.id])).get(row.id)!);
}

/**
 * The URL suits the kind, and its host is not a special-use address unless the operator allows
 * private networks (OUTBOUND_ALLOW_PRIVATE_NETWORKS); names are checked again at each delivery,
 * after they resolve. Plain http only on such closed networks.
 */
function assertAllowedTarget(ctx: Context<"config">, kind: AuditSinkKind, value: string | undefined): void {
  const issue = auditSinkUrlIssue(kind, value);
  if (issue) throw validation([{ field: "url", message: issue }]);
  if (kind === "otlp") {
    if (!ctx.config.tracing.endpoint) throw validation([{ field: "kind", message: "otlp needs the tracing endpoint (OTEL_EXPORTER_OTLP_ENDPOINT) configured" }]);
    return;
  }
  const url = new URL(value!);
  const allowPrivate = ctx.config.outboundAllowPrivateNetworks;
  if (!allowPrivate && (url.protocol === "http:" || url.protocol === "tcp:")) {
    throw validation([{ field: "url", message: kind === "syslog" ? "must be tls://host:port" : "must be an https URL" }]);
  }
  if (!allowPrivate && isSpecialUseHost(url)) throw validation([{ field: "url", message: "must not point to a private, loopback or special-use address" }]);
}

function assertFieldsFitKind(kind: AuditSinkKind, input: { headerName?: string | null | undefined; caPem?: string | null | undefined; secret?: string | null | undefined }): void {
  if (input.headerName && kind !== "jsonl") throw validation([{ field: "headerName", message: "is only for jsonl sinks" }]);
  if (input.caPem && kind !== "syslog") throw validation([{ field: "caPem", message: "is only for syslog sinks" }]);
  if (input.secret && (kind === "syslog" || kind === "otlp")) throw validation([{ field: "secret", message: `is not used by ${kind} sinks` }]);
  if (input.caPem) {
    try {
      new X509Certificate(input.caPem);
    } catch {
      throw validation([{ field: "caPem", message: "must be a PEM certificate" }]);
    }
  }
}

export async function listAuditSinks(ctx: Context, organizationId: string, query: ListQuery): Promise<Page<AuditSink>> {
  await requireOrganization(ctx, organizationId);
  const where: Prisma.AuditSinkWhereInput = { organizationId };
  const order = query.order ?? "asc";
  const page = await listPage(listMode(query), {
    count: () => ctx.db.auditSink.count({ where }),
    offset: (skip, take) => ctx.db.auditSink.findMany({ where, orderBy: [{ createdAt: order }, { id: order }], skip, take }),
    after: (afterId, take) =>
      ctx.db.auditSink.findMany({ where: { ...where, ...(afterId ? { id: order === "asc" ? { gt: afterId } : { lt: afterId } } : {}) }, orderBy: { id: order }, take }),
  });
  const counts = await countsOf(ctx, page.data.map((row) => row.id));
  return { ...page, data: page.data.map((row) => toAuditSink(row, counts.get(row.id)!)) };
}

/** An organization's sink; another organization's (or the deployment's) is one that does not exist. */
export async function requireAuditSink(ctx: Context, organizationId: string, id: string): Promise<SinkRow> {
  const row = await ctx.db.auditSink.findFirst({ where: { id, organizationId } });
  if (!row) throw notFound("audit sink");
  return row;
}

export async function createAuditSink(ctx: Context<"config" | "encrypter">, organizationId: string, input: AuditSinkCreate): Promise<SinkRow> {
  await requireOrganization(ctx, organizationId);
  assertAllowedTarget(ctx, input.kind, input.url);
  assertFieldsFitKind(input.kind, input);
  const id = newUuidV7();
  return ctx.db.auditSink.create({
    data: {
      id,
      organizationId,
      name: input.name,
      kind: input.kind,
      url: input.url ?? "",
      headerName: input.headerName ?? null,
      caPem: input.caPem ?? null,
      eventFamilies: input.eventFamilies ?? [],
      enabled: input.enabled ?? true,
      secretEncrypted: input.secret ? sealSinkSecret(ctx.encrypter, id, input.secret) : null,
      secretLast4: input.secret ? lastFourOf(input.secret) : null,
    },
  });
}

export async function updateAuditSink(
  ctx: Context<"config" | "encrypter">,
  organizationId: string,
  id: string,
  input: AuditSinkUpdate,
  expectedVersion: number | undefined,
): Promise<SinkRow> {
  const current = await requireAuditSink(ctx, organizationId, id);
  const kind = current.kind as AuditSinkKind;
  if (input.url !== undefined) assertAllowedTarget(ctx, kind, input.url);
  assertFieldsFitKind(kind, input);
  const data: Prisma.AuditSinkUpdateManyMutationInput = {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.url !== undefined ? { url: input.url } : {}),
    ...(input.headerName !== undefined ? { headerName: input.headerName } : {}),
    ...(input.caPem !== undefined ? { caPem: input.caPem } : {}),
    ...(input.eventFamilies !== undefined ? { eventFamilies: input.eventFamilies } : {}),
    ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
    ...(input.secret !== undefined
      ? { secretEncrypted: input.secret ? sealSinkSecret(ctx.encrypter, id, input.secret) : null, secretLast4: input.secret ? lastFourOf(input.secret) : null }
      : {}),
  };
  await compareAndSet({ ifMatch: expectedVersion, read: current.version }, (guard) =>
    ctx.db.auditSink.updateMany({ where: { id, ...guard }, data: { ...data, version: { increment: 1 } } }),
  );
  return requireAuditSink(ctx, organizationId, id);
}

export async function deleteAuditSink(ctx: Context, organizationId: string, id: string, expectedVersion: number | undefined): Promise<SinkRow> {
  const current = await requireAuditSink(ctx, organizationId, id);
  await compareAndSet({ ifMatch: expectedVersion, read: current.version }, (guard) => ctx.db.auditSink.deleteMany({ where: { id, ...guard } }));
  return current;
}

export async function listDeadLetters(ctx: Context, organizationId: string, sinkId: string, query: ListQuery): Promise<Page<AuditSinkDeadLetter>> {
  await requireAuditSink(ctx, organizationId, sinkId);
  const where: Prisma.AuditSinkEventWhereInput = { sinkId, status: "dead" };
  const order = query.order ?? "asc";
  const page = await listPage(listMode(query), {
    count: () => ctx.db.auditSinkEvent.count({ where }),
    offset: (skip, take) => ctx.db.auditSinkEvent.findMany({ where, orderBy: [{ auditEntryId: order }], skip, take }),
    after: (afterId, take) =>
      ctx.db.auditSinkEvent.findMany({ where: { ...where, ...(afterId ? { id: order === "asc" ? { gt: afterId } : { lt: afterId } } : {}) }, orderBy: { id: order }, take }),
  });
  return {
    ...page,
    data: page.data.map((row) => ({
      id: row.id,
      auditEntryId: row.auditEntryId,
      eventType: row.eventType,
      attempts: row.attempts,
      lastError: row.lastError,
      createdAt: row.createdAt.toISOString(),
    })),
  };
}

/** Puts the sink's dead entries back in line (at their place by id) on a fresh retry schedule, and asks for a drain. */
export async function replayDeadLetters(ctx: Context, organizationId: string, sinkId: string): Promise<number> {
  await requireAuditSink(ctx, organizationId, sinkId);
  const { count } = await ctx.db.auditSinkEvent.updateMany({ where: { sinkId, status: "dead" }, data: { status: "pending", attempts: 0, lastError: null, nextAttemptAt: null } });
  if (count > 0) {
    // The replayed entries are first in line and due now, whatever retry the line was waiting for.
    await ctx.db.auditSink.update({ where: { id: sinkId }, data: { blockedUntil: null } });
    await ctx.enqueue("audit-stream", { sinkId });
  }
  return count;
}

/** Sends one sample event (type `audit_sink.test`, not an entry of the trail) now, and says how it went. */
export async function testAuditSink(ctx: Context<"config" | "encrypter">, organizationId: string, sinkId: string): Promise<AuditSinkTestResult> {
  const sink = await requireAuditSink(ctx, organizationId, sinkId);
  const result = await sendToSink(ctx, sink, [
    {
      id: newUuidV7(),
      eventType: "audit_sink.test",
      organizationId,
      actorType: ctx.actor.type,
      actorId: ctx.actor.id ?? null,
      targetType: "audit_sink",
      targetId: sink.id,
      requestId: ctx.actor.requestId ?? null,
      data: { test: true },
      createdAt: new Date(),
    },
  ]);
  const delivered = result.statusCode === null ? result.error === null : result.statusCode >= 200 && result.statusCode < 300;
  return { delivered, statusCode: result.statusCode, error: delivered ? null : (result.error ?? `HTTP_${result.statusCode}`), durationMs: result.durationMs };
}
