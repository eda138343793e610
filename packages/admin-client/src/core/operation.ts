import { operations, type Operations } from "../generated/operations.js";
import type { CallOptions } from "./options.js";
import type { Transport } from "./request.js";

/**
 * Turns the generated operation table into callable namespaces: `client.organizations.list(query)`,
 * `client.users.get(orgId, userId)`. Arguments are the path parameters in path order, then the
 * body (or the query), then CallOptions.
 */
export type OperationId = keyof Operations;
/** One row of the generated operation table. */
export interface OperationSpec {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  pathParams: readonly string[];
  /** Where the input argument goes: a JSON body, a body sent as given (uploads), the query, or nowhere. */
  input: "body" | "raw" | "query" | "none";
  contentType?: string;
  etag: boolean;
  paging: "offset" | "cursor" | "none";
}

/** One field of an operation, from the OpenAPI document (`operationHelp`), for help texts. */
export interface FieldSpec {
  /** The name in the API (camelCase). */
  name: string;
  in: "path" | "query" | "body";
  /** The schema in a few words: `string (uuid)`, `web | native`, `integer 1–100`, `list of string`. */
  type: string;
  required: boolean;
  /** The server's default, as JSON text. */
  default?: string;
  description?: string;
}

export interface OperationHelp {
  summary: string;
  fields: readonly FieldSpec[];
}

/** An entity together with the ETag to send back as `ifMatch`. */
export interface WithEtag<T> {
  data: T;
  etag: string;
}

export type OperationResult<Id extends OperationId> = Operations[Id]["etag"] extends true ? WithEtag<Operations[Id]["response"]> : Operations[Id]["response"];
export type OperationFunction<Id extends OperationId> = (...args: Operations[Id]["args"]) => Promise<OperationResult<Id>>;

type NamespaceName = OperationId extends infer Id ? (Id extends `${infer N}.${string}` ? N : never) : never;
type ItemOf<Id extends OperationId> = Operations[Id]["response"] extends { data: Array<infer T> } ? T : never;

type ListAll<N extends string> = [Extract<`${N}.list`, OperationId>] extends [never]
  ? Record<never, never>
  : ListAllOf<Extract<`${N}.list`, OperationId>>;
type ListAllOf<Id extends OperationId> = (typeof operations)[Id]["paging"] extends "none"
  ? Record<never, never>
  : { listAll(...args: Operations[Id]["args"]): AsyncGenerator<ItemOf<Id>, void, undefined> };

export type Namespace<N extends string> = { [Id in OperationId as Id extends `${N}.${infer M}` ? M : never]: OperationFunction<Id> } & ListAll<N>;
export type Namespaces = { [N in NamespaceName]: Namespace<N> };

type AnyFunction = (...args: unknown[]) => unknown;

function fillPath(spec: OperationSpec, values: unknown[]): string {
  let path: string = spec.path;
  spec.pathParams.forEach((name, i) => {
    const value = values[i];
    if (typeof value !== "string" || value === "") throw new TypeError(`${name} must be a non-empty string`);
    path = path.replace(`{${name}}`, encodeURIComponent(value));
  });
  return path;
}

/** Splits positional arguments into path values, input and options, as the table says. */
function splitArgs(spec: OperationSpec, args: unknown[]) {
  const n = spec.pathParams.length;
  const input = spec.input === "none" ? undefined : args[n];
  const options = (spec.input === "none" ? args[n] : args[n + 1]) as CallOptions | undefined;
  return { path: fillPath(spec, args.slice(0, n)), pathValues: args.slice(0, n), input, options };
}

async function invoke(transport: Transport, spec: OperationSpec, args: unknown[]): Promise<unknown> {
  const { path, input, options } = splitArgs(spec, args);
  const res = await transport({
    method: spec.method,
    path,
    query: spec.input === "query" ? (input as Record<string, unknown> | undefined) : undefined,
    body: spec.input === "body" ? input : undefined,
    rawBody: spec.input === "raw" ? (input as BodyInit | undefined) : undefined,
    contentType: spec.contentType,
    options,
  });
  if (!spec.etag) return res.body;
  return { data: res.body, etag: res.headers.get("etag") ?? "" };
}

interface PageBody {
  data: unknown[];
  total?: number;
  /** `total` is only "at least": it cannot tell where the list ends. */
  totalIsLowerBound?: boolean;
  cursor?: string;
}

const ALL_PAGE_SIZE = 100;

/** Every item of a listing, page by page: cursor paging when the operation has it, else offset. */
async function* listAll(transport: Transport, spec: OperationSpec, args: unknown[]): AsyncGenerator<unknown, void, undefined> {
  const { path, input, options } = splitArgs(spec, args);
  const { page: _page, pageSize, cursor: firstCursor, limit, ...filters } = (input ?? {}) as Record<string, unknown>;
  if (spec.paging === "cursor") {
    let cursor = firstCursor as string | undefined;
    for (;;) {
      const res = await transport({ method: "GET", path, query: { ...filters, limit: limit ?? pageSize ?? ALL_PAGE_SIZE, cursor }, options });
      const body = res.body as PageBody;
      yield* body.data;
      if (!body.cursor || body.data.length === 0) return;
      cursor = body.cursor;
    }
  }
  const size = Number(pageSize ?? limit ?? ALL_PAGE_SIZE);
  for (let page = 1; ; page++) {
    const res = await transport({ method: "GET", path, query: { ...filters, page, pageSize: size }, options });
    const body = res.body as PageBody;
    yield* body.data;
    if (body.data.length < size || (body.total !== undefined && !body.totalIsLowerBound && page * size >= body.total)) return;
  }
}

export function buildNamespaces(transport: Transport): Namespaces {
  const namespaces: Record<string, Record<string, AnyFunction>> = {};
  for (const [id, spec] of Object.entries(operations) as Array<[OperationId, OperationSpec]>) {
    const dot = id.indexOf(".");
    const namespace = (namespaces[id.slice(0, dot)] ??= {});
    namespace[id.slice(dot + 1)] = (...args: unknown[]) => invoke(transport, spec, args);
    if (id.endsWith(".list") && spec.paging !== "none") namespace.listAll = (...args: unknown[]) => listAll(transport, spec, args);
  }
  return namespaces as unknown as Namespaces;
}

/** Calls any operation by its operationId (for generic tools such as the CLI). */
export function callOperation(transport: Transport, id: string, args: unknown[]): Promise<unknown> {
  const spec = (operations as Record<string, OperationSpec | undefined>)[id];
  if (!spec) throw new TypeError(`unknown operation ${id}`);
  return invoke(transport, spec, args);
}
