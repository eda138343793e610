import type { AppLoadContext } from "@remix-run/node";
import { adminOperations, type OperationId, type OperationInput, type OperationOutput } from "../admin/http/operation-table";
import type { FieldDetail } from "../errors";
import { etagOf, versionOfEtag } from "../admin/http/etag";
import { runOperation, type Operation } from "../admin/http/route";
import type { Authenticate } from "../admin/http/caller";
import { nestsDeeperThan, TOO_DEEP_MESSAGE } from "~/schemas/json-depth";

/**
 * The console's only way to read or change anything: it runs the Admin API operation itself, in
 * process, with the session's access token as the bearer, so authentication, permissions, zod
 * validation, If-Match and audit are the Admin API's own.
 */
/** What the console sends an operation: its typed input, the version the person saw, or an upload. */
export type AdminInput<Id extends OperationId> = OperationInput<Id> & {
  /** The version the person saw (sent as If-Match). */
  ifMatch?: number | undefined;
  /** An upload, sent as the raw body of an operation that declares `rawBody`. */
  raw?: { contentType: string; bytes: ArrayBuffer };
};

export interface AdminError {
  code: string;
  message: string;
  details?: FieldDetail[];
}

export type AdminResult<T> =
  | { ok: true; status: number; body: T; version: number | undefined }
  | { ok: false; status: number; error: AdminError };

let byId: Map<string, Operation> | undefined;

function operationById(operationId: OperationId): Operation {
  byId ??= new Map(adminOperations().map((op) => [op.operationId, op]));
  const op = byId.get(operationId);
  if (!op) throw new Error(`unknown Admin API operation ${operationId}`);
  return op;
}

/**
 * Runs one Admin API operation for the console, typed by its id: TypeScript checks the id, the
 * input and the result against the operation's own schemas (operation-table.ts).
 */
export async function callAdmin<Id extends OperationId>(
  context: AppLoadContext,
  accessToken: string,
  operationId: Id,
  input: AdminInput<Id> = {},
  /** The door's authentication, for callers bound to one organization (the Admin API's by default). */
  authenticate?: Authenticate,
): Promise<AdminResult<OperationOutput<Id>>> {
  const op = operationById(operationId);
  // JSON a person typed or uploaded (a key set, a claim value, an import) is serialized here, which
  // recurses: a value nested too deep gets the Admin API's own answer instead of a stack overflow.
  if (input.body !== undefined && nestsDeeperThan(input.body)) return { ok: false, status: 400, error: { code: "bad_request", message: TOO_DEEP_MESSAGE } };
  const params = (input.params ?? {}) as Record<string, string>;
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ""));
  const url = new URL(`${context.services.config.baseUrl}/api/admin${path}`);
  for (const [key, value] of Object.entries((input.query ?? {}) as Record<string, unknown>)) {
    if (value !== undefined && value !== "") url.searchParams.set(key, String(value));
  }
  const headers = new Headers({ authorization: `Bearer ${accessToken}` });
  if (input.body !== undefined) headers.set("content-type", "application/json");
  if (input.raw) headers.set("content-type", input.raw.contentType);
  if (input.ifMatch !== undefined) headers.set("if-match", etagOf(input.ifMatch));
  const requestBody = input.raw ? input.raw.bytes : input.body === undefined ? undefined : JSON.stringify(input.body);
  const request = new Request(url, { method: op.method, headers, body: requestBody });
  const response = await runOperation(op, { request, params, context }, authenticate);
  const text = await response.text();
  const body: unknown = text ? JSON.parse(text) : undefined;
  if (response.ok) return { ok: true, status: response.status, body: body as OperationOutput<Id>, version: versionOfEtag(response.headers.get("etag")) };
  const error = (body as { error?: AdminError } | undefined)?.error ?? { code: "internal_error", message: "The Admin API gave no answer." };
  return { ok: false, status: response.status, error };
}
