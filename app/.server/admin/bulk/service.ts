import type { AuditEventType } from "~/schemas/audit-events";
import type { BulkItemResult, BulkOperation, BulkRequest, BulkResult } from "~/schemas/bulk";
import type { Context } from "../../context";
import { AppError, validation } from "../../errors";
import { toAppError } from "../../db/errors";
import { assignUserRole } from "../rbac/service";
import { activateUser, createUser, deactivateUser, deleteUser, requireUser, requireManagedOrganization, toUser, updateUser } from "../users/service";

/**
 * Bulk user operations. Each item runs through the same service function as its single-item
 * Admin API operation, so every rule (password policy, self-protection, role scope) applies
 * unchanged. Both run in the write's transaction: all-or-nothing stops at the first failure and
 * the write rolls back; best-effort runs each item under a savepoint, so a failed item leaves no
 * trace while the others commit, and reports each.
 */
export interface BulkAudit {
  eventType: AuditEventType;
  userId: string;
  change: Record<string, unknown>;
  /** An update's user before and after, for the field-by-field change (decision 039). */
  changes?: { before: object; after: object };
}

const EVENTS: Record<BulkOperation["op"], AuditEventType> = {
  create: "user.created",
  update: "user.updated",
  activate: "user.activated",
  deactivate: "user.deactivated",
  delete: "user.deleted",
  assignRole: "user.role_assigned",
};

/** The change an audit entry records: the item without its password. */
function changeOf(item: BulkOperation): Record<string, unknown> {
  const { op: _op, ...rest } = item;
  if ("password" in rest || "importedPasswordHash" in rest) {
    // An imported hash is named, never recorded (decision 085); the audit's secret-field rule would
    // only redact it, and these names keep what an auditor needs.
    const { password, importedPasswordHash, allowWeakLegacyHashes, ...withoutPassword } = rest as Record<string, unknown>;
    return {
      ...withoutPassword,
      ...(password !== undefined ? { passwordSet: true } : {}),
      ...(importedPasswordHash !== undefined ? { imported: true, weakImportAllowed: allowWeakLegacyHashes === true } : {}),
    };
  }
  return rest;
}

/** What every item may need: the user writes' collaborators and the store for ending sessions. */
type BulkContext = Context<"settings" | "passwords" | "cache" | "store" | "logoutNotices">;

/** Each updated user as it was, by id, for the audit entry's change. */
type BeforeStates = Map<string, object>;

async function runItem(ctx: BulkContext, organizationId: string, adminId: string, item: BulkOperation, before: BeforeStates) {
  if (item.op === "create") {
    const { op: _op, ...input } = item;
    return createUser(ctx, organizationId, input);
  }
  // Every other item names a user, who must belong to the batch's organization.
  const user = await requireUser(ctx, item.userId, organizationId);
  switch (item.op) {
    case "update": {
      const { op: _op, userId, ...input } = item;
      before.set(userId, toUser(user));
      return updateUser(ctx, user, input, undefined);
    }
    case "activate":
      return activateUser(ctx, user, undefined);
    case "deactivate":
      return deactivateUser(ctx, user, adminId, undefined);
    case "delete":
      await deleteUser(ctx, user, adminId, undefined);
      return null;
    case "assignRole": {
      let roleId = item.roleId;
      if (item.roleName !== undefined) {
        const role = await ctx.db.role.findUnique({ where: { organizationId_name: { organizationId, name: item.roleName } }, select: { id: true } });
        if (!role) throw validation([{ field: "roleName", message: `no role named ${item.roleName} in this organization` }]);
        roleId = role.id;
      }
      await assignUserRole(ctx, user.id, roleId!);
      return user;
    }
  }
}

function failureOf(error: unknown, index: number): NonNullable<BulkItemResult["error"]> {
  const apiError = toAppError(error);
  if (!apiError) throw error;
  return {
    status: apiError.status,
    code: apiError.code,
    message: apiError.message,
    ...(apiError.details ? { details: apiError.details.map((d) => ({ field: `operations.${index}.${d.field}`, message: d.message })) } : {}),
  };
}

const SAVEPOINT = "bulk_item";

/**
 * Runs one best-effort item under a savepoint of the write. A failed item is rolled back to it,
 * and the effects it asked for after the commit (cache drops, ending sessions) are dropped with it.
 */
async function underSavepoint<T>(ctx: BulkContext, work: (itemCtx: BulkContext) => Promise<T>): Promise<T> {
  const effects: Array<() => unknown> = [];
  await ctx.db.$executeRawUnsafe(`SAVEPOINT ${SAVEPOINT}`);
  try {
    const value = await work({ ...ctx, afterCommit: (effect) => void effects.push(effect) });
    await ctx.db.$executeRawUnsafe(`RELEASE SAVEPOINT ${SAVEPOINT}`);
    for (const effect of effects) ctx.afterCommit(effect);
    return value;
  } catch (error) {
    // A failed statement aborts the whole transaction on PostgreSQL until it rolls back to here.
    await ctx.db.$executeRawUnsafe(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`);
    await ctx.db.$executeRawUnsafe(`RELEASE SAVEPOINT ${SAVEPOINT}`);
    throw error;
  }
}

export async function executeBulk(ctx: BulkContext, request: BulkRequest, adminId: string): Promise<{ result: BulkResult; audits: BulkAudit[] }> {
  await requireManagedOrganization(ctx, request.organizationId);
  const results: BulkItemResult[] = [];
  const audits: BulkAudit[] = [];
  const before: BeforeStates = new Map();
  const record = (index: number, item: BulkOperation, row: Awaited<ReturnType<typeof runItem>>, userId: string) => {
    results.push({ index, op: item.op, status: "succeeded", ...(row ? { user: toUser(row) } : {}) });
    const was = item.op === "update" && row ? before.get(userId) : undefined;
    audits.push({ eventType: EVENTS[item.op], userId, change: changeOf(item), ...(was && row ? { changes: { before: was, after: toUser(row) } } : {}) });
  };

  if (request.mode === "best_effort") {
    for (const [index, item] of request.operations.entries()) {
      try {
        const row = await underSavepoint(ctx, (itemCtx) => runItem(itemCtx, request.organizationId, adminId, item, before));
        record(index, item, row, row?.id ?? (item as { userId: string }).userId);
      } catch (error) {
        results.push({ index, op: item.op, status: "failed", error: failureOf(error, index) });
      }
    }
    const succeeded = results.filter((r) => r.status === "succeeded").length;
    return { result: { mode: request.mode, applied: succeeded > 0, succeeded, failed: results.length - succeeded, results }, audits };
  }

  // All or nothing: the first failure is thrown, and the write rolls back every item before it.
  for (const [index, item] of request.operations.entries()) {
    let row: Awaited<ReturnType<typeof runItem>>;
    try {
      row = await runItem(ctx, request.organizationId, adminId, item, before);
    } catch (error) {
      const failure = failureOf(error, index);
      throw new AppError(
        failure.status,
        failure.code,
        `Operation ${index} (${item.op}) failed: ${failure.message} Nothing was changed.`,
        failure.details ?? [{ field: `operations.${index}`, message: failure.message }],
      );
    }
    record(index, item, row, row?.id ?? (item as { userId: string }).userId);
  }
  return { result: { mode: request.mode, applied: true, succeeded: results.length, failed: 0, results }, audits };
}
