import { createHash } from "node:crypto";

/**
 * Turns the Admin API's OpenAPI 3.1 document into src/generated/operations.ts: a runtime table
 * (method, path, where the input goes, ETag, paging) and one type entry per operationId. The
 * client builds its namespaces from that table, so a new server operation appears in the library
 * by regenerating, never by hand-editing.
 */
export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  prefixItems?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  description?: string;
  format?: string;
  default?: unknown;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: JsonSchema;
  description?: string;
}

interface OpenApiOperation {
  operationId: string;
  summary?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
  responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema?: JsonSchema }> }>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

const API_PREFIX = "/api/admin";
const METHODS = ["get", "post", "put", "delete"] as const;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const key = (name: string) => (IDENTIFIER.test(name) ? name : JSON.stringify(name));

class TypeEmitter {
  /** Component name in the document → the name emitted (stable across renumbering). */
  private readonly names = new Map<string, string>();
  private readonly used = new Set<string>();

  constructor(private readonly components: Record<string, JsonSchema>) {
    for (const [name, schema] of Object.entries(components)) this.names.set(name, this.stableName(name, schema));
  }

  /** Hoisted definitions are numbered by the server in build order; name them by content instead. */
  private stableName(name: string, schema: JsonSchema): string {
    if (name === "Error") return "ErrorBody";
    const canonical = JSON.stringify(schema).replaceAll(`"#/components/schemas/${name}"`, '"#self"');
    const isJsonValue = ["string", "number", "boolean", "null"].every((t) => schema.anyOf?.some((s) => s.type === t)) && canonical.includes('"#self"');
    return isJsonValue ? "JsonValue" : `Schema_${createHash("sha256").update(canonical).digest("hex").slice(0, 10)}`;
  }

  type(schema: JsonSchema | undefined, indent = ""): string {
    if (!schema || Object.keys(schema).filter((k) => k !== "description").length === 0) return "unknown";
    if (schema.$ref) {
      const name = schema.$ref.replace("#/components/schemas/", "");
      this.used.add(name);
      return this.names.get(name) ?? "unknown";
    }
    if ("const" in schema) return JSON.stringify(schema.const);
    if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
    if (schema.anyOf ?? schema.oneOf) return this.union((schema.anyOf ?? schema.oneOf)!.map((s) => this.type(s, indent)));
    if (schema.allOf) return schema.allOf.map((s) => `(${this.type(s, indent)})`).join(" & ");
    if (Array.isArray(schema.type)) return this.union(schema.type.map((t) => this.type({ ...schema, type: t }, indent)));
    switch (schema.type) {
      case "string":
        return "string";
      case "number":
      case "integer":
        return "number";
      case "boolean":
        return "boolean";
      case "null":
        return "null";
      case "array":
        if (schema.prefixItems) return `[${schema.prefixItems.map((s) => this.type(s, indent)).join(", ")}]`;
        return `Array<${this.type(schema.items, indent)}>`;
      case "object":
        return this.object(schema, indent);
      default:
        return "unknown";
    }
  }

  private union(parts: string[]): string {
    const unique = [...new Set(parts)];
    return unique.includes("unknown") ? "unknown" : unique.map((p) => (p.includes("=>") ? `(${p})` : p)).join(" | ");
  }

  object(schema: JsonSchema, indent: string): string {
    const props = Object.entries(schema.properties ?? {});
    const extra = typeof schema.additionalProperties === "object" ? this.type(schema.additionalProperties, indent) : undefined;
    if (props.length === 0) return extra ? `{ [key: string]: ${extra} }` : schema.additionalProperties === false ? "Record<string, never>" : "Record<string, unknown>";
    const inner = `${indent}  `;
    const required = new Set(schema.required ?? []);
    const lines = props.map(([name, prop]) => {
      const doc = prop.description ? `${inner}/** ${prop.description.replaceAll("*/", "* /")} */\n` : "";
      return `${doc}${inner}${key(name)}${required.has(name) ? "" : "?"}: ${this.type(prop, inner)};`;
    });
    const body = `{\n${lines.join("\n")}\n${indent}}`;
    return extra ? `${body} & { [key: string]: ${extra} }` : body;
  }

  /** The named definitions referenced so far (and those they reference). */
  definitions(): string {
    const emitted = new Set<string>();
    const out: string[] = [];
    for (let pending = [...this.used]; pending.length > 0; pending = [...this.used].filter((n) => !emitted.has(n))) {
      for (const name of pending.sort()) {
        emitted.add(name);
        const emittedName = this.names.get(name)!;
        if (out.some((line) => line.startsWith(`export type ${emittedName} =`))) continue;
        out.push(`export type ${emittedName} = ${this.type(this.components[name], "")};`);
      }
    }
    return out.sort().join("\n\n");
  }
}

const JSON_VALUE_TYPES = ["string", "number", "boolean", "null", "array", "object"];

/**
 * A JSON schema in a few words for people reading `porta <area> <op> --help`: `string (uuid)`,
 * `web | native`, `integer 1–100`, `list of string`. Only the first level: nested objects are "object".
 */
export function describeSchema(schema: JsonSchema | undefined, components: Record<string, JsonSchema>, depth = 0, brief = false): string {
  if (!schema || depth > 4) return "any JSON value";
  if (schema.$ref) return describeSchema(components[schema.$ref.replace("#/components/schemas/", "")], components, depth + 1, brief);
  if ("const" in schema) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((v) => (typeof v === "string" ? v : JSON.stringify(v))).join(" | ");
  const alternatives = schema.anyOf ?? schema.oneOf ?? (Array.isArray(schema.type) ? schema.type.map((type) => ({ ...schema, type })) : undefined);
  if (alternatives) {
    const kinds = alternatives.map((a) => (typeof a.type === "string" ? a.type : undefined));
    if (JSON_VALUE_TYPES.every((t) => kinds.includes(t))) return "any JSON value";
    const parts = [...new Set(alternatives.filter((a) => a.type !== "null").map((a) => describeSchema(a, components, depth + 1, brief)))];
    const nullable = alternatives.length > parts.length && kinds.includes("null");
    return `${parts.join(" | ")}${nullable ? " or null" : ""}`;
  }
  if (schema.allOf) return "object";
  // Lengths and bounds in parentheses; a list's items say only their kind.
  const range = (min: number | undefined, max: number | undefined, unit: string) =>
    brief ? "" : min !== undefined && max !== undefined ? ` (${min}–${max}${unit})` : max !== undefined ? ` (up to ${max}${unit})` : min !== undefined ? ` (at least ${min}${unit})` : "";
  switch (schema.type) {
    case "string":
      return schema.format ? `string (${schema.format})` : `string${range(schema.minLength, schema.maxLength, " chars")}`;
    case "integer":
    case "number":
      return `${schema.type}${range(schema.minimum, schema.maximum, "")}`;
    case "boolean":
      return "boolean";
    case "array": {
      const item = describeSchema(schema.items, components, depth + 1, true);
      return `list of ${item.includes(" | ") ? `(${item})` : item}`;
    }
    case "object":
      return "object";
    default:
      return "any JSON value";
  }
}

/** One field an operation takes, for help texts (the CLI's `--help`). */
interface FieldRow {
  name: string;
  in: "path" | "query" | "body";
  type: string;
  required: boolean;
  default?: string;
  description?: string;
}

function fieldRows(path: string, op: OpenApiOperation, components: Record<string, JsonSchema>): FieldRow[] {
  const parameters = op.parameters ?? [];
  const rows: FieldRow[] = pathParamsOf(path).map((name) => {
    const declared = parameters.find((p) => p.in === "path" && p.name === name);
    return { name, in: "path", type: describeSchema(declared?.schema, components), required: true, ...(declared?.description ? { description: declared.description } : {}) };
  });
  const field = (name: string, where: FieldRow["in"], schema: JsonSchema | undefined, required: boolean, description: string | undefined): FieldRow => ({
    name,
    in: where,
    type: describeSchema(schema, components),
    required,
    ...(schema?.default !== undefined ? { default: JSON.stringify(schema.default) } : {}),
    ...(description ? { description } : {}),
  });
  for (const p of parameters.filter((p) => p.in === "query")) rows.push(field(p.name, "query", p.schema, p.required === true, p.description ?? p.schema?.description));
  const content = op.requestBody?.content ?? {};
  const json = content["application/json"]?.schema;
  const body = json?.$ref ? components[json.$ref.replace("#/components/schemas/", "")] : json;
  if (body) {
    const required = new Set(body.required ?? []);
    for (const [name, prop] of Object.entries(body.properties ?? {})) rows.push(field(name, "body", prop, required.has(name), prop.description));
  } else if (Object.keys(content).length > 0) {
    rows.push({ name: "file", in: "body", type: `file (${Object.keys(content).join(", ")})`, required: op.requestBody?.required === true });
  }
  return rows;
}

function pathParamsOf(path: string): string[] {
  return [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
}

interface Row {
  id: string;
  method: string;
  path: string;
  pathParams: string[];
  input: "body" | "raw" | "query" | "none";
  contentType: string | undefined;
  etag: boolean;
  paging: "offset" | "cursor" | "none";
  argsType: string;
  responseType: string;
  summary: string;
  fields: FieldRow[];
}

export function emitClient(document: OpenApiDocument): string {
  const emitter = new TypeEmitter(document.components?.schemas ?? {});
  const rows: Row[] = [];
  for (const [fullPath, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const path = fullPath.startsWith(API_PREFIX) ? fullPath.slice(API_PREFIX.length) : fullPath;
      const pathParams = pathParamsOf(path);
      const query = (op.parameters ?? []).filter((p) => p.in === "query");
      const bodySchema = op.requestBody?.content?.["application/json"]?.schema;
      // A body that is not JSON (an upload) is passed through as given, with its declared type.
      const rawContentType = !bodySchema ? Object.keys(op.requestBody?.content ?? {})[0] : undefined;
      const [status, success] = Object.entries(op.responses).find(([s]) => s.startsWith("2")) ?? ["200", undefined];
      const responseSchema = success?.content?.["application/json"]?.schema;
      const otherResponse = !responseSchema ? Object.keys(success?.content ?? {})[0] : undefined;
      const queryNames = new Set(query.map((p) => p.name));
      const responseType =
        status === "204" ? "void" : otherResponse ? (otherResponse.startsWith("text/") ? "string" : "Blob") : emitter.type(responseSchema, "      ");
      const listsData = /\bdata: Array</.test(responseType);
      const paging = !listsData ? "none" : queryNames.has("cursor") && queryNames.has("limit") ? "cursor" : queryNames.has("page") && queryNames.has("pageSize") ? "offset" : "none";
      const args = pathParams.map((p) => `${key(p)}: string`);
      let input: Row["input"] = "none";
      if (bodySchema) {
        input = "body";
        args.push(`body${op.requestBody?.required ? "" : "?"}: ${emitter.type(bodySchema, "      ")}`);
      } else if (rawContentType) {
        input = "raw";
        args.push(`body${op.requestBody?.required ? "" : "?"}: ${rawContentType.startsWith("multipart/") ? "FormData" : "Blob | Uint8Array | string"}`);
      } else if (query.length > 0) {
        input = "query";
        const querySchema: JsonSchema = {
          type: "object",
          properties: Object.fromEntries(query.map((p) => [p.name, { ...p.schema, ...(p.description ? { description: p.description } : {}) }])),
          required: query.filter((p) => p.required).map((p) => p.name),
          additionalProperties: false,
        };
        args.push(`query${query.some((p) => p.required) ? "" : "?"}: ${emitter.type(querySchema, "      ")}`);
      }
      args.push("options?: CallOptions");
      rows.push({
        id: op.operationId,
        method: method.toUpperCase(),
        path,
        pathParams,
        input,
        contentType: rawContentType,
        etag: Boolean(success?.headers && "ETag" in success.headers),
        paging,
        argsType: `[${args.join(", ")}]`,
        responseType,
        summary: op.summary ?? "",
        fields: fieldRows(path, op, document.components?.schemas ?? {}),
      });
    }
  }
  rows.sort((a, b) => a.id.localeCompare(b.id));

  const table = rows
    .map((r) => `  ${JSON.stringify(r.id)}: { method: ${JSON.stringify(r.method)}, path: ${JSON.stringify(r.path)}, pathParams: ${JSON.stringify(r.pathParams)}, input: ${JSON.stringify(r.input)}, ${r.contentType ? `contentType: ${JSON.stringify(r.contentType)}, ` : ""}etag: ${r.etag}, paging: ${JSON.stringify(r.paging)} },`)
    .join("\n");
  const types = rows
    .map(
      (r) =>
        `  /** ${r.summary.replaceAll("*/", "* /")} */\n  ${JSON.stringify(r.id)}: {\n    args: ${r.argsType};\n    response: ${r.responseType};\n    etag: ${r.etag};\n  };`,
    )
    .join("\n");
  const help = rows
    .map((r) => `  ${JSON.stringify(r.id)}: {\n    summary: ${JSON.stringify(r.summary)},\n    fields: [${r.fields.map((f) => `\n      ${JSON.stringify(f)},`).join("")}${r.fields.length ? "\n    " : ""}],\n  },`)
    .join("\n");
  return `// Generated by \`npm run generate:client\` from the Admin API's OpenAPI document. Do not edit.
import type { CallOptions } from "../core/options.js";
import type { OperationHelp } from "../core/operation.js";

export const operations = {
${table}
} as const;

export interface Operations {
${types}
}

/** Each operation's summary and fields (path, query, body) with their types, for help texts. */
export const operationHelp: Record<string, OperationHelp> = {
${help}
};

${emitter.definitions()}
`;
}
