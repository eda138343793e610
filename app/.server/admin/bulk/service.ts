import type { PrismaClient } from "~/generated/prisma/client";
import type { BulkItemResult, BulkOperation, BulkRequest, BulkResult } from "~/schemas/bulk";
import { invalidateUser } from "../../directory/users";
import type { Services } from "../../services";
import { AppError, validation } from "../../errors";
import { toAppError } from "../../db/errors";
import { assignUserRole } from "../rbac/service";
import { activateUser, createUser, deactivateUser, deleteUser, getUser, requireOrganization, toUser, updateUser } from "../users/service";

/**
 * Bulk user operations. Each item runs through the same service function as its single-item
 * Admin API operation, so every rule (password policy, self-protection, role scope) applies
 * unchanged. All-or-nothing runs the items in one transaction and stops at the first failure;
 * best-effort runs each on its own and reports each.
 */
export interface BulkAudit {
  eventType: string;
  userId: string;
  change: Record<string, unknown>;
}

const EVENTS: Record<BulkOperation["op"], string> = {
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
  if ("password" in rest) {
    const { password, ...withoutPassword } = rest;
    return { ...withoutPassword, ...(password !== undefined ? { passwordSet: true } : {}) };
  }
  return rest;
}

async function runItem(services: Services, organizationId: string, adminId: string, item: BulkOperation) {
  if (item.op === "create") {
    const { op: _op, ...input } = item;
    return createUser(services, organizationId, input);
  }
  // Every other item names a user, who must belong to the batch's organization.
  const user = await getUser(services, item.userId, organizationId);
  switch (item.op) {
    case "update": {
      const { op: _op, userId, ...input } = item;
      return updateUser(services, userId, input, undefined);
    }
    case "activate":
      return activateUser(services, user, undefined);
    case "deactivate":
      return deactivateUser(services, user, adminId, undefined);
    case "delete":
      await deleteUser(services, user, adminId, undefined);
      return null;
    case "assignRole": {
      let roleId = item.roleId;
      if (item.roleName !== undefined) {
        const role = await services.db.prisma.role.findUnique({ where: { organizationId_name: { organizationId, name: item.roleName } }, select: { id: true } });
        if (!role) throw validation([{ field: "roleName", message: `no role named ${item.roleName} in this organization` }]);
        roleId = role.id;
      }
      await assignUserRole(services, user.id, roleId!);
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

/** Services whose database client is the transaction: the service functions then write inside it. */
function inTransaction(services: Services, tx: unknown): Services {
  // An interactive transaction client has every model delegate the service functions use.
  return { ...services, db: { ...services.db, prisma: tx as PrismaClient } };
}

class RolledBack extends Error {}

export async function executeBulk(services: Services, request: BulkRequest, adminId: string): Promise<{ result: BulkResult; audits: BulkAudit[] }> {
  await requireOrganization(services, request.organizationId);
  // Read before any transaction opens: the embedded database has a single connection.
  await services.settings.get("auth.passwordMinLength");
  const results: BulkItemResult[] = [];
  const audits: BulkAudit[] = [];
  const record = (index: number, item: BulkOperation, row: Awaited<ReturnType<typeof runItem>>, userId: string) => {
    results.push({ index, op: item.op, status: "succeeded", ...(row ? { user: toUser(row) } : {}) });
    audits.push({ eventType: EVENTS[item.op], userId, change: changeOf(item) });
  };

  if (request.mode === "best_effort") {
    for (const [index, item] of request.operations.entries()) {
      try {
        const row = await runItem(services, request.organizationId, adminId, item);
        record(index, item, row, row?.id ?? (item as { userId: string }).userId);
      } catch (error) {
        results.push({ index, op: item.op, status: "failed", error: failureOf(error, index) });
      }
    }
    const succeeded = results.filter((r) => r.status === "succeeded").length;
    return { result: { mode: request.mode, applied: succeeded > 0, succeeded, failed: results.length - succeeded, results }, audits };
  }

  let failure: { index: number; error: NonNullable<BulkItemResult["error"]> } | undefined;
  try {
    await services.db.prisma.$transaction(
      async (tx) => {
        const scoped = inTransaction(services, tx);
        for (const [index, item] of request.operations.entries()) {
          try {
            const row = await runItem(scoped, request.organizationId, adminId, item);
            record(index, item, row, row?.id ?? (item as { userId: string }).userId);
          } catch (error) {
            failure = { index, error: failureOf(error, index) };
            throw new RolledBack();
          }
        }
      },
      { maxWait: 10_000, timeout: 5 * 60_000 },
    );
  } catch (error) {
    if (!(error instanceof RolledBack)) throw error;
  }
  if (failure) {
    const { index, error } = failure;
    throw new AppError(
      error.status,
      error.code,
      `Operation ${index} (${request.operations[index]!.op}) failed: ${error.message} Nothing was changed.`,
      error.details ?? [{ field: `operations.${index}`, message: error.message }],
    );
  }
  // Entries dropped inside the transaction could have been read back before it committed.
  for (const userId of new Set(audits.map((a) => a.userId))) await invalidateUser(services.cache, userId);
  return { result: { mode: request.mode, applied: true, succeeded: results.length, failed: 0, results }, audits };
}
