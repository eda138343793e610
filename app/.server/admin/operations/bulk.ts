import { BulkRequestSchema, BulkResultSchema } from "~/schemas/bulk";
import { executeBulk } from "../bulk/service";
import { operation } from "../http/route";

/** /bulk */
export const bulkOperations = [
  operation({
    method: "POST",
    path: "/bulk",
    operationId: "bulk.execute",
    summary:
      "Run up to 500 user operations (create, update, activate, deactivate, delete, assignRole) in one organization: all_or_nothing (one transaction; the first failure answers with its error, prefixed operations.N, and nothing changes) or best_effort (a result per item)",
    tag: "bulk",
    permission: "admin:bulk:execute",
    body: BulkRequestSchema,
    response: BulkResultSchema,
    maxBodyBytes: 2_000_000,
    // 500 creates hash 500 passwords (Argon2id) inside the one write.
    transactionTimeoutMs: 300_000,
    handler: async ({ ctx, body, admin }) => {
      const { result, audits } = await executeBulk(ctx, body, admin.id);
      for (const entry of audits) {
        ctx.audit({ eventType: entry.eventType, organizationId: body.organizationId, targetType: "user", targetId: entry.userId, data: { change: entry.change, bulk: true }, ...(entry.changes ? { changes: entry.changes } : {}) });
      }
      ctx.audit({
        eventType: "bulk.executed",
        organizationId: body.organizationId,
        targetType: "organization",
        targetId: body.organizationId,
        data: { mode: body.mode, operations: body.operations.length, succeeded: result.succeeded, failed: result.failed },
      });
      return { body: result };
    },
  }),
];
