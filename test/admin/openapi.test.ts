import { readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { startTestPorta, type TestPorta } from "../support/porta";

/**
 * GET /api/admin/openapi.json is a well-formed OpenAPI 3.1 document of the whole Admin API:
 * every operation is complete, every $ref resolves, and every operation it lists is served at
 * its path and method by the one Admin API route (and nothing else is).
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

it("is an OpenAPI 3.1 document with the right top-level structure", () => {
  expect(doc.openapi).toBe("3.1.0");
  expect(typeof doc.info.title).toBe("string");
  // The running release (package.json's version), as /health and /api/admin/metadata name it.
  expect(doc.info.version).toBe((JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version);
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

it("serves every documented operation at its path and method, and nothing else", async () => {
  const anonymous = adminApi(porta, undefined);
  for (const { path, method } of operations()) {
    // Any value fits a parameter: the route is found before the parameters are validated.
    const concrete = path.replace("/api/admin", "").replace(/\{[^}]+\}/g, "00000000-0000-4000-8000-000000000000");
    const res = await anonymous.call(method.toUpperCase(), concrete);
    const where = `${method.toUpperCase()} ${path}`;
    if (path === "/api/admin/metadata") expect(res.status, where).toBe(200);
    else expect(res.status, where).toBe(401);
  }
  const unknown = await anonymous.get("/no-such-operation");
  expect(unknown.status).toBe(404);
  expect(unknown.body).toMatchObject({ error: { code: "not_found" } });
  const emptyParameter = await anonymous.get("/organizations//history");
  expect(emptyParameter.status).toBe(404);
  const wrongMethod = await anonymous.call("PATCH", "/organizations");
  expect(wrongMethod.status).toBe(405);
  expect(wrongMethod.headers.get("allow")).toBe("GET, POST");
});
