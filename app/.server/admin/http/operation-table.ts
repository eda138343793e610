import type { Operation } from "./route";

/**
 * The Admin API's one table of operations. Each module in ../operations exports arrays of
 * operations; this gathers them, and the router, the OpenAPI document, the console gateway and
 * the generated client all read it.
 */
const modules = import.meta.glob<Record<string, unknown>>("../operations/*.ts", { eager: true });

function isOperationList(value: unknown): value is Operation[] {
  return Array.isArray(value) && value.every((v) => typeof v === "object" && v !== null && "operationId" in v && "handler" in v);
}

let table: Operation[] | undefined;

export function adminOperations(): Operation[] {
  table ??= Object.values(modules).flatMap((mod) => Object.values(mod).filter(isOperationList).flat());
  return table;
}
