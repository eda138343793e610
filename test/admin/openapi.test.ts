import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { startTestPorta, type TestPorta } from "../support/porta";

/**
 * GET /api/admin/openapi.json is a well-formed OpenAPI 3.1 document of the whole Admin API:
 * every operation is complete, every $ref resolves, and every Admin API route module of
 * app/routes is in it (and nothing else is).
 */
interface OpenApiOperation {
  operationId?: string;
  summary?: string;
  tags?: string[];
  security?: unknown[];
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: unknown }>;
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>;
}
interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  servers?: Array<{ url: string }>;
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, unknown>; securitySchemes?: Record<string, unknown> };
}

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];
const ROUTES_DIR = fileURLToPath(new URL("../../app/routes/", import.meta.url));

let porta: TestPorta;
let doc: OpenApiDocument;

beforeAll(async () => {
  porta = await startTestPorta();
  const api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  const res = await api.get<OpenApiDocument>("/openapi.json");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/application\/json/);
  doc = res.body;
});
afterAll(async () => {
  await porta?.stop();
});

/** The URL path a Remix route module serves, from its file name. */
function routePathOf(file: string): string {
  const DOT = "\u0000";
  const segments = file
    .replace(/^api\.admin\./, "")
    .replace(/\.ts$/, "")
    .replace(/\[\.\]/g, DOT)
    .split(".")
    .map((segment) => segment.replace(/_$/, "").replace(/^\$(.+)$/, "{$1}").split(DOT).join("."));
  return `/api/admin/${segments.join("/")}`;
}

function operations(): Array<{ path: string; method: string; op: OpenApiOperation }> {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ path, method, op })),
  );
}

function resolvePointer(root: unknown, ref: string): unknown {
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (typeof node !== "object" || node === null || !(key in node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function collectRefs(node: unknown, at: string, out: Array<{ ref: string; at: string }>) {
  if (Array.isArray(node)) node.forEach((item, i) => collectRefs(item, `${at}/${i}`, out));
  else if (typeof node === "object" && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string") out.push({ ref: value, at });
      else collectRefs(value, `${at}/${key}`, out);
    }
  }
}

it("derives route paths from file names as Remix does", () => {
  expect(routePathOf("api.admin.organizations_.$id_.history.ts")).toBe("/api/admin/organizations/{id}/history");
  expect(routePathOf("api.admin.openapi[.]json.ts")).toBe("/api/admin/openapi.json");
  expect(routePathOf("api.admin.organizations_.$orgId_.users_.invite_.preview.ts")).toBe("/api/admin/organizations/{orgId}/users/invite/preview");
});

it("is an OpenAPI 3.1 document with the right top-level structure", () => {
  expect(doc.openapi).toBe("3.1.0");
  expect(typeof doc.info.title).toBe("string");
  expect(typeof doc.info.version).toBe("string");
  expect(doc.servers?.[0]?.url).toBe(porta.baseUrl);
  expect(doc.components?.securitySchemes?.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
  expect(Object.keys(doc.paths).length).toBeGreaterThan(20);
  for (const path of Object.keys(doc.paths)) expect(path).toMatch(/^\/api\/admin\/[A-Za-z0-9{}/._-]+$/);
});

it("gives every operation a unique operationId, responses with descriptions, and its path parameters", () => {
  const ids = new Set<string>();
  for (const { path, method, op } of operations()) {
    const where = `${method.toUpperCase()} ${path}`;
    expect(typeof op.operationId, where).toBe("string");
    expect(ids.has(op.operationId!), `${where}: duplicate operationId ${op.operationId}`).toBe(false);
    ids.add(op.operationId!);
    expect(op.responses && Object.keys(op.responses).length, where).toBeGreaterThan(0);
    expect(Object.keys(op.responses!).some((status) => /^2\d\d$/.test(status)), `${where}: a success response`).toBe(true);
    for (const [status, response] of Object.entries(op.responses!)) {
      expect(status, where).toMatch(/^([1-5]\d\d|[1-5]XX|default)$/);
      expect(typeof response.description, `${where} ${status}`).toBe("string");
    }
    // Every {param} of the path is declared as a required path parameter, and nothing more.
    const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
    const declared = (op.parameters ?? []).filter((p) => p.in === "path");
    expect(declared.map((p) => p.name).sort(), where).toEqual(templated);
    for (const p of declared) expect(p.required, `${where} ${p.name}`).toBe(true);
    for (const p of op.parameters ?? []) expect(["path", "query", "header", "cookie"], where).toContain(p.in);
    // Only the metadata operation is public.
    if (path === "/api/admin/metadata") expect(op.security).toEqual([]);
    else expect(op.security, where).toEqual([{ bearerAuth: [] }]);
  }
  expect(ids.size).toBe(operations().length);
});

it("resolves every $ref inside the document", () => {
  const refs: Array<{ ref: string; at: string }> = [];
  collectRefs(doc, "#", refs);
  expect(refs.length).toBeGreaterThan(0);
  for (const { ref, at } of refs) {
    expect(ref.startsWith("#/"), `${at}: ${ref} is not local`).toBe(true);
    expect(resolvePointer(doc, ref), `${at}: ${ref} does not resolve`).toBeDefined();
  }
});

it("lists every Admin API route module of app/routes, and no path that no module serves", () => {
  const files = readdirSync(ROUTES_DIR).filter((f) => /^api\.admin\..+\.ts$/.test(f));
  expect(files.length).toBeGreaterThan(20);
  const routePaths = new Set(files.map(routePathOf));
  const documented = new Set(Object.keys(doc.paths));
  const missing = [...routePaths].filter((p) => !documented.has(p));
  expect(missing, "route modules whose path the document lacks").toEqual([]);
  const unserved = [...documented].filter((p) => !routePaths.has(p));
  expect(unserved, "documented paths without a route module").toEqual([]);
});
