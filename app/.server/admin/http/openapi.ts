import { z } from "zod";
import { adminOperations } from "./operation-table";
import type { Operation } from "./route";

/**
 * The OpenAPI 3.1 document of the Admin API, built from the very operations the API serves
 * (./operation-table.ts): their zod schemas validate requests and describe them here, so the
 * document cannot drift from the code.
 */

type JsonSchema = Record<string, unknown>;

/** Definitions hoisted out of the schemas (recursive ones such as JSON values) into components. */
const hoisted: Record<string, JsonSchema> = {};

function schemaOf(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const { $schema: _ignored, $defs, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as JsonSchema & {
    $defs?: Record<string, JsonSchema>;
  };
  if (!$defs) return rest;
  // Each schema numbers its own $defs; give them names unique across the document.
  const renames = new Map(Object.keys($defs).map((name) => [name, `Def${Object.keys(hoisted).length}_${name}`]));
  let text = JSON.stringify({ rest, $defs });
  for (const [from, to] of renames) text = text.replaceAll(`"#/$defs/${from}"`, `"#/components/schemas/${to}"`);
  const rewritten = JSON.parse(text) as { rest: JsonSchema; $defs: Record<string, JsonSchema> };
  for (const [from, to] of renames) hoisted[to] = rewritten.$defs[from]!;
  return rewritten.rest;
}

function parametersOf(schema: z.ZodType | undefined, location: "path" | "query") {
  if (!schema) return [];
  const json = schemaOf(schema, "input") as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: location,
    required: location === "path" || (json.required ?? []).includes(name),
    schema: property,
    ...(typeof property.description === "string" ? { description: property.description } : {}),
  }));
}

const ErrorSchema = z.object({
  error: z.object({
    code: z.string().meta({ examples: ["validation_failed"] }),
    message: z.string(),
    details: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
  }),
});

const ERROR_RESPONSES: Record<string, string> = {
  "400": "Malformed request",
  "401": "Missing or invalid admin token",
  "403": "The admin lacks the operation's permission",
  "404": "Not found",
  "409": "Stale If-Match or duplicate",
  "422": "Validation failed; `details` names each field",
  "429": "Rate limited",
};

/** OpenAPI 3.1 describes a binary body by its media type alone (contentMediaType, no format: binary). */
function rawRequestBody(contentTypes: readonly string[]) {
  return {
    required: true,
    content: Object.fromEntries(contentTypes.map((type) => [type, { schema: { type: "string", contentMediaType: type } }])),
  };
}

const RAW_BODY_RESPONSES: Record<string, string> = {
  "413": "The body is larger than the operation's limit",
  "415": "The Content-Type is not one the operation accepts",
};

/** `release`: the running Porta's release label (Services.release); the generated client does not carry one. */
export function buildOpenApiDocument(serverUrl: string, release = "unreleased", operations: readonly Operation[] = adminOperations()) {
  const paths: Record<string, Record<string, unknown>> = {};
  const errorRef = { $ref: "#/components/schemas/Error" };
  for (const op of operations) {
    const path = `/api/admin${op.path}`;
    const success = String(op.successStatus ?? 200);
    paths[path] ??= {};
    paths[path][op.method.toLowerCase()] = {
      operationId: op.operationId,
      summary: op.summary,
      tags: [op.tag],
      ...(op.permission === "public" ? { security: [] } : { security: [{ bearerAuth: [] }] }),
      ...(op.permission !== "public" && op.permission !== "authenticated" ? { "x-permission": op.permission } : {}),
      parameters: [
        ...parametersOf(op.params, "path"),
        ...parametersOf(op.query, "query"),
        ...(op.method === "PUT" || op.method === "POST" || op.method === "DELETE"
          ? [{ name: "If-Match", in: "header", required: false, schema: { type: "string", examples: ['"v3"'] }, description: "ETag from a previous read; a stale one gives 409" }]
          : []),
      ],
      ...(op.body ? { requestBody: { required: !op.body.safeParse(undefined).success, content: { "application/json": { schema: schemaOf(op.body, "input") } } } } : {}),
      ...(op.rawBody ? { requestBody: rawRequestBody(op.rawBody.contentTypes) } : {}),
      responses: {
        [success]: {
          description: success === "204" ? "Done" : "Success",
          ...(op.etag ? { headers: { ETag: { schema: { type: "string" }, description: "Version of the entity, for If-Match" } } } : {}),
          ...(op.response && success !== "204" ? { content: { "application/json": { schema: schemaOf(op.response, "output") } } } : {}),
        },
        ...Object.fromEntries(
          Object.entries({ ...ERROR_RESPONSES, ...(op.rawBody ? RAW_BODY_RESPONSES : {}) })
            .filter(([status]) => op.permission !== "public" || status === "400")
            .map(([status, description]) => [status, { description, content: { "application/json": { schema: errorRef } } }]),
        ),
      },
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Porta Admin API",
      version: release,
      description: "Manage organizations, applications, clients, users and everything else in Porta. Authenticate with an ES256 access token of the super-admin organization (see GET /api/admin/metadata).",
    },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT" } },
      schemas: { Error: schemaOf(ErrorSchema, "output"), ...hoisted },
    },
  };
}
