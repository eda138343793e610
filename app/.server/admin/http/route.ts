import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { z } from "zod";
import { UuidSchema } from "~/schemas/uuid";
import { findUnrepresentable, UNREPRESENTABLE_MESSAGE } from "~/schemas/text";
import { textNestsDeeperThan, TOO_DEEP_MESSAGE } from "~/schemas/json-depth";
import { inTransaction, withReadContext, type Actor, type AuditEntry, type FullContext } from "../../context";
import type { AdminPermission } from "../permissions";
import { readBodyLimited } from "./body";
import { AppError, badRequest, forbidden, validation, type FieldDetail } from "../../errors";
import { toAppError } from "../../db/errors";
import { etagOf, parseIfMatch } from "./etag";
import type { AdminUser } from "./require-admin";
import { authenticateServiceAdmin, type Authenticate } from "./caller";
import { requireWithinOrganization, type OrganizationScope } from "./organization-scope";

/**
 * One helper for every Admin API route: authentication (the seven checks), the operation's
 * permission, zod parsing of path, query and body (422 with field details), If-Match, the
 * handler, the audit record of every write, ETags and the error body. A route module only
 * declares its operations.
 */
export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

export interface OperationContext<P, Q, B> {
  /**
   * The unit of work: inside a write, `ctx.db` is the write's transaction and `ctx.audit`
   * records into it (context.ts). Reads get the database itself.
   */
  ctx: FullContext;
  admin: AdminUser;
  params: P;
  query: Q;
  body: B;
  /** The request body of an operation declaring `rawBody`, read within its byte limit. */
  rawBody: RawBody | undefined;
  /** The version named by If-Match, when the client sent one. */
  ifMatch: number | undefined;
  requestId: string;
  ip: string | null;
  /** Records an audit entry for this write, in its transaction (the same as `ctx.audit`). */
  audit(entry: AuditEntry): void;
  /**
   * Runs `work` in a transaction that commits when it returns, with the audit entries it records:
   * for a `readOnly` operation that commits in batches of its own. Inside a write it is the
   * write's own transaction.
   */
  transaction<T>(work: (ctx: FullContext) => Promise<T>): Promise<T>;
}

export interface OperationResult {
  body?: unknown;
  status?: number;
  /** The entity's version: sent as its ETag. */
  version?: number;
  headers?: Record<string, string>;
}

type Schema = z.ZodType;

export interface RawBody {
  /** The declared media type, without parameters, lower-cased. */
  contentType: string;
  bytes: Buffer;
}

/** A binary request body (uploads) instead of JSON. */
export interface RawBodyOption<Q> {
  /** Accepted Content-Types; any other is refused with 415. */
  contentTypes: readonly string[];
  /** The byte limit, which may depend on the query: larger bodies are refused with 413 without being read whole. */
  maxBytes(query: Q): number;
}

export interface Operation<PS extends Schema = Schema, QS extends Schema = Schema, BS extends Schema = Schema, RS extends Schema = Schema, Id extends string = string> {
  method: HttpMethod;
  /** OpenAPI path below /api/admin, e.g. "/organizations/{id}". */
  path: string;
  operationId: Id;
  summary: string;
  tag: string;
  /** "public" only for the metadata operation; "authenticated" needs an admin but no permission. */
  permission: AdminPermission | "public" | "authenticated";
  /**
   * Where the target names its organization (organization-scope.ts): what makes the operation
   * reachable for a caller bound to one organization. Without it, only service admins run it.
   */
  organizationScope?: readonly OrganizationScope[];
  params?: PS;
  query?: QS;
  body?: BS;
  rawBody?: RawBodyOption<z.output<QS>>;
  /** The success body: documented in OpenAPI, enforced outside production, and the console's typed result. */
  response?: RS;
  successStatus?: number;
  /** The operation answers with an ETag. */
  etag?: boolean;
  /** Largest JSON body accepted (default 1 MB). */
  maxBodyBytes?: number;
  /**
   * Not run in the request's transaction: a POST that only computes (a preview), or work that
   * commits in batches of its own (a rotation of every organization's key) and audits itself.
   */
  readOnly?: boolean;
  /** How long the write's transaction may stay open (default 60 s): for bulk runs and imports. */
  transactionTimeoutMs?: number;
  handler(ctx: OperationContext<z.output<PS>, z.output<QS>, z.output<BS>>): Promise<OperationResult>;
}

/** Declares an operation with its types inferred from its schemas (and its id kept literal, for typed callers). */
export function operation<
  const Id extends string,
  PS extends Schema = z.ZodObject<Record<string, never>>,
  QS extends Schema = z.ZodObject<Record<string, never>>,
  BS extends Schema = z.ZodUndefined,
  RS extends Schema = z.ZodUnknown,
>(op: Operation<PS, QS, BS, RS, Id>): Operation<PS, QS, BS, RS, Id> {
  return op;
}

const MAX_BODY_BYTES = 1_000_000;

function details(error: z.ZodError, prefix = ""): FieldDetail[] {
  return error.issues.map((issue) => {
    const path = issue.path.map(String).join(".");
    const unknownKeys = issue.code === "unrecognized_keys" ? issue.keys.join(", ") : "";
    return {
      field: [prefix, path || unknownKeys].filter(Boolean).join(".") || prefix || "body",
      message: issue.code === "unrecognized_keys" ? "is not a known field" : issue.message,
    };
  });
}

function parse<S extends Schema>(schema: S | undefined, value: unknown, where: string): z.output<S> {
  if (!schema) return undefined as z.output<S>;
  const result = schema.safeParse(value);
  if (!result.success) throw validation(details(result.error, where === "body" ? "" : where));
  return result.data;
}

async function readJson(request: Request, maxBytes: number): Promise<unknown> {
  const text = (await readBodyLimited(request, maxBytes)).toString("utf8");
  if (text.trim() === "") return undefined;
  if (!(request.headers.get("content-type") ?? "").includes("application/json")) throw badRequest("Send the body as application/json.");
  // Measured before it is parsed (deep nesting is slow to parse) or walked (zod, the text check
  // and JSON.stringify recurse).
  if (textNestsDeeperThan(text)) throw badRequest(TOO_DEEP_MESSAGE);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest("The body is not valid JSON.");
  }
  // JSON may carry \u0000 or an unpaired \ud800 that no text column can hold.
  const bad = findUnrepresentable(value);
  if (bad !== undefined) throw validation([{ field: bad || "body", message: UNREPRESENTABLE_MESSAGE }]);
  return value;
}

async function readRaw<Q>(request: Request, option: RawBodyOption<Q>, query: Q): Promise<RawBody> {
  const contentType = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (!option.contentTypes.includes(contentType)) {
    throw new AppError(415, "unsupported_media_type", `Send the body as one of: ${option.contentTypes.join(", ")}.`);
  }
  return { contentType, bytes: await readBodyLimited(request, option.maxBytes(query)) };
}

function json(body: unknown, status: number, headers: Record<string, string> = {}) {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: { ...(body === undefined ? {} : { "Content-Type": "application/json; charset=utf-8" }), "Cache-Control": "no-store", ...headers },
  });
}

/**
 * The one error body. The X-Request-Id header is not set here: http/request-id.ts has already
 * set it on the response, and Remix's Express adapter appends a Response's headers to it, so a
 * second one here would make the header "id, id".
 */
export function errorResponse(error: AppError) {
  return json({ error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) } }, error.status, { ...error.headers });
}

/**
 * Outside production every success body is checked against the operation's declared response
 * schema, so the OpenAPI document (built from the same schemas) can never describe a response
 * the API does not give; tests fail on a mismatch.
 */
function assertDeclaredResponse(op: Operation, result: OperationResult, nodeEnv: string) {
  if (nodeEnv === "production" || !op.response || result.body === undefined) return;
  const checked = op.response.safeParse(JSON.parse(JSON.stringify(result.body)));
  if (!checked.success) {
    throw new Error(`${op.operationId} answered a body its response schema does not describe: ${checked.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  }
}

type RunArgs = Pick<LoaderFunctionArgs | ActionFunctionArgs, "request" | "params" | "context">;

/**
 * Runs one operation: the Admin API's splat route after matching the table (./serve.ts), the
 * console in process, and the doors of callers bound to one organization (so that no rule exists
 * twice). `params` are the path's parameters; `authenticate` is the door's (caller.ts).
 */
export async function runOperation(op: Operation, args: RunArgs, authenticate: Authenticate = authenticateServiceAdmin): Promise<Response> {
  const { request, params, context } = args;
  const { services, requestId } = context;
  const method = request.method.toUpperCase() as HttpMethod;
  try {
    const caller = op.permission === "public" ? undefined : await authenticate(services, request);
    const admin = caller?.admin ?? (undefined as unknown as AdminUser);
    if (caller && !caller.may(op)) throw forbidden(op.permission);
    const url = new URL(request.url);
    const query = parse(op.query, Object.fromEntries(url.searchParams), "query");
    const pathParams = parse(op.params, params, "path");
    const body = op.body ? parse(op.body, await readJson(request, op.maxBodyBytes ?? MAX_BODY_BYTES), "body") : undefined;
    const rawBody = op.rawBody ? await readRaw(request, op.rawBody, query) : undefined;
    const ifMatch = parseIfMatch(request.headers.get("if-match"));
    const ip = context.req.ip ?? null;
    const actor: Actor = caller ? { type: caller.actorType, id: caller.admin.id, ip, requestId } : { type: "anonymous", id: null, ip, requestId };
    const writes = method !== "GET" && !op.readOnly;
    const handle = async (ctx: FullContext) => {
      let audited = 0;
      const audit = (entry: AuditEntry) => {
        audited += 1;
        ctx.audit(entry);
      };
      if (caller?.organizationId) {
        await requireWithinOrganization(ctx.db, caller.organizationId, op.organizationScope ?? [], { params: pathParams, query, body });
      }
      const transaction = <T>(work: (unit: FullContext) => Promise<T>) =>
        writes ? work({ ...ctx, audit }) : inTransaction(services, actor, work, { timeoutMs: op.transactionTimeoutMs });
      const result = await op.handler({ ctx: { ...ctx, audit }, admin, params: pathParams, query, body, rawBody, ifMatch, requestId, ip, audit, transaction });
      if (writes && audited === 0 && services.config.nodeEnv !== "production") {
        throw new Error(`${op.operationId} changed data without an audit record`);
      }
      return result;
    };
    // A write, its audit entries and its jobs commit together (or none of them does).
    const result = writes
      ? await inTransaction(services, actor, handle, { timeoutMs: op.transactionTimeoutMs })
      : await withReadContext(services, actor, handle);
    assertDeclaredResponse(op, result, services.config.nodeEnv);
    const headers: Record<string, string> = { ...result.headers };
    if (result.version !== undefined) headers.ETag = etagOf(result.version);
    return json(result.body, result.status ?? op.successStatus ?? 200, headers);
  } catch (error) {
    const apiError = toAppError(error);
    if (apiError?.status === 503) services.logger.warn({ operationId: op.operationId, requestId }, "database unavailable: answered 503");
    if (apiError) return errorResponse(apiError);
    services.logger.error({ err: error, operationId: op.operationId }, "admin api error");
    return errorResponse(new AppError(500, "internal_error", "Something went wrong. Quote the request id when you report it."));
  }
}

/** Path parameter schemas shared by routes. */
export const IdParams = z.object({ id: UuidSchema });

