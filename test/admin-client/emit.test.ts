import { expect, it } from "vitest";
import { emitClient, type OpenApiDocument } from "../../packages/admin-client/scripts/emit";

/**
 * Shapes the current Admin API does not have yet but the areas being added will (uploads and
 * downloads): the emitter must still produce a usable table and types for them.
 */
const doc: OpenApiDocument = {
  paths: {
    "/api/admin/organizations/{orgId}/branding/assets": {
      post: {
        operationId: "branding.uploadAsset",
        summary: "Upload a logo",
        requestBody: { required: true, content: { "multipart/form-data": { schema: { type: "object" } } } },
        responses: { "201": { content: { "application/json": { schema: { type: "object", properties: { url: { type: "string" } }, required: ["url"] } } } } },
      },
    },
    "/api/admin/organizations/{orgId}/export": {
      get: {
        operationId: "exports.download",
        summary: "Download an export",
        parameters: [{ name: "orgId", in: "path", required: true, schema: { type: "string" } }],
        responses: { "200": { content: { "application/gzip": {} } } },
      },
    },
    "/api/admin/imports/preview": {
      post: {
        operationId: "imports.preview",
        summary: "Preview an import",
        requestBody: { required: true, content: { "application/octet-stream": {} } },
        responses: { "200": { content: { "application/json": { schema: { type: "object", properties: { counts: { type: "object", additionalProperties: { type: "integer" } } } } } } } },
      },
    },
  },
};

it("emits uploads as raw bodies with their content type and binary downloads as Blob", () => {
  const out = emitClient(doc);
  expect(out).toContain(
    `"branding.uploadAsset": { method: "POST", path: "/organizations/{orgId}/branding/assets", pathParams: ["orgId"], input: "raw", contentType: "multipart/form-data", etag: false, paging: "none" }`,
  );
  expect(out).toContain(`args: [orgId: string, body: FormData, options?: CallOptions];`);
  expect(out).toContain(`"exports.download": {\n    args: [orgId: string, options?: CallOptions];\n    response: Blob;`);
  expect(out).toContain(`args: [body: Blob | Uint8Array | string, options?: CallOptions];`);
  expect(out).toContain(`counts?: { [key: string]: number };`);
});

it("emits each operation's fields with their types, defaults and which are required (the CLI's --help)", () => {
  const out = emitClient({
    paths: {
      "/api/admin/organizations/{orgId}/clients": {
        post: {
          operationId: "clients.create",
          summary: "Create a client",
          parameters: [{ name: "orgId", in: "path", required: true, schema: { type: "string", format: "uuid" } }],
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  properties: {
                    name: { type: "string", minLength: 1, maxLength: 200 },
                    clientType: { type: "string", enum: ["confidential", "public"] },
                    applicationType: { type: "string", enum: ["web", "native"], default: "web" },
                    grantTypes: { type: "array", items: { type: "string", enum: ["authorization_code", "client_credentials"] } },
                    applicationId: { anyOf: [{ type: "string", format: "uuid" }, { type: "null" }] },
                    limit: { type: "integer", minimum: 1, maximum: 100 },
                  },
                  required: ["name", "clientType"],
                },
              },
            },
          },
          responses: { "201": { content: { "application/json": { schema: { type: "object" } } } } },
        },
      },
    },
  });
  const help = out.slice(out.indexOf("export const operationHelp"));
  expect(help).toContain(`summary: "Create a client"`);
  for (const field of [
    { name: "orgId", in: "path", type: "string (uuid)", required: true },
    { name: "name", in: "body", type: "string (1–200 chars)", required: true },
    { name: "clientType", in: "body", type: "confidential | public", required: true },
    { name: "applicationType", in: "body", type: "web | native", required: false, default: '"web"' },
    { name: "grantTypes", in: "body", type: "list of (authorization_code | client_credentials)", required: false },
    { name: "applicationId", in: "body", type: "string (uuid) or null", required: false },
    { name: "limit", in: "body", type: "integer (1–100)", required: false },
  ]) {
    expect(help).toContain(JSON.stringify(field));
  }
});
