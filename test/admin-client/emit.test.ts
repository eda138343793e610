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
