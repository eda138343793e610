import { z } from "zod";
import { UuidSchema } from "~/schemas/uuid";
import type { AuditEventType } from "~/schemas/audit-events";
import {
  AuditSinkCreateSchema,
  AuditSinkDeadLetterSchema,
  AuditSinkReplaySchema,
  AuditSinkSchema,
  AuditSinkTestResultSchema,
  AuditSinkUpdateSchema,
} from "~/schemas/audit-sink";
import type { AuditSink as SinkRow } from "~/generated/prisma/client";
import type { AuditEntry } from "../../context";
import {
  createAuditSink,
  deleteAuditSink,
  describeAuditSink,
  listAuditSinks,
  listDeadLetters,
  replayDeadLetters,
  requireAuditSink,
  testAuditSink,
  updateAuditSink,
} from "../audit-sinks/service";
import { pageOf } from "../http/openapi-shapes";
import type { OrganizationScope } from "../http/organization-scope";
import { ListQuerySchema } from "../http/pagination";
import { operation, type OperationContext } from "../http/route";

/**
 * Audit streaming operations of the Admin API (decision 092): an organization's sinks, a test
 * event, and the dead letters with their replay. An organization's administrators reach them
 * through their own door; a sink id of another organization answers as one that does not exist.
 */
const NoQuery = z.object({}).strict();
const OrgParams = z.object({ orgId: UuidSchema });
const SinkParams = z.object({ orgId: UuidSchema, id: UuidSchema });
const IN_ORGANIZATION: OrganizationScope[] = [{ in: "path", param: "orgId" }];

type Audit = OperationContext<unknown, unknown, unknown>["audit"];

/** Every sink change is recorded on the sink; its secret never reaches the audit log (only that one was set). */
function auditSink(audit: Audit, eventType: AuditEventType, sink: SinkRow, data: Record<string, unknown> = {}, changes?: AuditEntry["changes"]) {
  audit({ eventType, organizationId: sink.organizationId, targetType: "audit_sink", targetId: sink.id, data, ...(changes ? { changes } : {}) });
}

/** A request body as recorded: the secret and CA named, never valued. */
function recorded(body: { secret?: string | null | undefined; caPem?: string | null | undefined } & Record<string, unknown>): Record<string, unknown> {
  const { secret, caPem, ...rest } = body;
  return { ...rest, ...(secret !== undefined ? { secret: secret === null ? null : "[set]" } : {}), ...(caPem !== undefined ? { caPem: caPem === null ? null : "[set]" } : {}) };
}

export const auditSinksOperations = [
  operation({
    method: "GET",
    path: "/organizations/{orgId}/audit-sinks",
    operationId: "auditSinks.list",
    summary: "List an organization's audit sinks, each with what waits and what is dead",
    tag: "audit-sinks",
    permission: "admin:audit_sink:read",
    organizationScope: IN_ORGANIZATION,
    params: OrgParams,
    query: ListQuerySchema,
    response: pageOf(AuditSinkSchema),
    handler: async ({ ctx, params, query }) => ({ body: await listAuditSinks(ctx, params.orgId, query) }),
  }),
  operation({
    method: "POST",
    path: "/organizations/{orgId}/audit-sinks",
    operationId: "auditSinks.create",
    summary: "Stream the organization's audit trail to a SIEM: syslog over TLS, JSON lines, Splunk HEC, Datadog or OTLP logs",
    tag: "audit-sinks",
    permission: "admin:audit_sink:write",
    organizationScope: IN_ORGANIZATION,
    params: OrgParams,
    query: NoQuery,
    body: AuditSinkCreateSchema,
    response: AuditSinkSchema,
    successStatus: 201,
    etag: true,
    handler: async ({ ctx, params, body }) => {
      const sink = await createAuditSink(ctx, params.orgId, body);
      auditSink(ctx.audit, "audit_sink.created", sink, { change: recorded(body) });
      return { body: await describeAuditSink(ctx, sink), version: sink.version };
    },
  }),
];

export const auditSinksIdOperations = [
  operation({
    method: "GET",
    path: "/organizations/{orgId}/audit-sinks/{id}",
    operationId: "auditSinks.get",
    summary: "Get an audit sink with its state (pending, dead, last delivery, last error)",
    tag: "audit-sinks",
    permission: "admin:audit_sink:read",
    organizationScope: IN_ORGANIZATION,
    params: SinkParams,
    query: NoQuery,
    response: AuditSinkSchema,
    etag: true,
    handler: async ({ ctx, params }) => {
      const row = await requireAuditSink(ctx, params.orgId, params.id);
      return { body: await describeAuditSink(ctx, row), version: row.version };
    },
  }),
  operation({
    method: "PUT",
    path: "/organizations/{orgId}/audit-sinks/{id}",
    operationId: "auditSinks.update",
    summary: "Change an audit sink (its kind stays); `secret: null` removes the secret; If-Match guards against lost updates",
    tag: "audit-sinks",
    permission: "admin:audit_sink:write",
    organizationScope: IN_ORGANIZATION,
    params: SinkParams,
    query: NoQuery,
    body: AuditSinkUpdateSchema,
    response: AuditSinkSchema,
    etag: true,
    handler: async ({ ctx, params, body, ifMatch }) => {
      const before = await describeAuditSink(ctx, await requireAuditSink(ctx, params.orgId, params.id));
      const row = await updateAuditSink(ctx, params.orgId, params.id, body, ifMatch);
      const after = await describeAuditSink(ctx, row);
      auditSink(ctx.audit, "audit_sink.updated", row, { change: recorded(body) }, { before, after });
      return { body: after, version: row.version };
    },
  }),
  operation({
    method: "DELETE",
    path: "/organizations/{orgId}/audit-sinks/{id}",
    operationId: "auditSinks.delete",
    summary: "Delete an audit sink; entries not yet sent to it, and its dead letters, are dropped",
    tag: "audit-sinks",
    permission: "admin:audit_sink:write",
    organizationScope: IN_ORGANIZATION,
    params: SinkParams,
    query: NoQuery,
    successStatus: 204,
    handler: async ({ ctx, params, ifMatch }) => {
      const row = await deleteAuditSink(ctx, params.orgId, params.id, ifMatch);
      auditSink(ctx.audit, "audit_sink.deleted", row, { change: { name: row.name, kind: row.kind, url: row.url } });
      return {};
    },
  }),
];

export const auditSinksIdActionsOperations = [
  operation({
    method: "POST",
    path: "/organizations/{orgId}/audit-sinks/{id}/test",
    operationId: "auditSinks.test",
    summary: "Send one sample event (type audit_sink.test) to the sink now and answer how it went",
    tag: "audit-sinks",
    permission: "admin:audit_sink:write",
    organizationScope: IN_ORGANIZATION,
    params: SinkParams,
    query: NoQuery,
    response: AuditSinkTestResultSchema,
    // The request to the sink is not made inside a database transaction.
    readOnly: true,
    handler: async ({ ctx, params }) => ({ body: await testAuditSink(ctx, params.orgId, params.id) }),
  }),
  operation({
    method: "GET",
    path: "/organizations/{orgId}/audit-sinks/{id}/dead-letters",
    operationId: "auditSinks.listDeadLetters",
    summary: "The entries the sink never took after the last attempt, in their order",
    tag: "audit-sinks",
    permission: "admin:audit_sink:read",
    organizationScope: IN_ORGANIZATION,
    params: SinkParams,
    query: ListQuerySchema,
    response: pageOf(AuditSinkDeadLetterSchema),
    handler: async ({ ctx, params, query }) => ({ body: await listDeadLetters(ctx, params.orgId, params.id, query) }),
  }),
  operation({
    method: "POST",
    path: "/organizations/{orgId}/audit-sinks/{id}/dead-letters/replay",
    operationId: "auditSinks.replayDeadLetters",
    summary: "Put every dead entry back in line, at its place, on a fresh retry schedule",
    tag: "audit-sinks",
    permission: "admin:audit_sink:write",
    organizationScope: IN_ORGANIZATION,
    params: SinkParams,
    query: NoQuery,
    response: AuditSinkReplaySchema,
    handler: async ({ ctx, params }) => {
      const replayed = await replayDeadLetters(ctx, params.orgId, params.id);
      const row = await requireAuditSink(ctx, params.orgId, params.id);
      auditSink(ctx.audit, "audit_sink.dead_letters_replayed", row, { replayed });
      return { body: { replayed } };
    },
  }),
];
