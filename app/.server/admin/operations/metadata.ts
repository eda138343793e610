import { z } from "zod";
import { ADMIN_CLIENT_ID } from "../permissions";
import { buildOpenApiDocument } from "../http/openapi";
import { operation } from "../http/route";

/** api.admin.metadata */
export const metadataOperations = [
  operation({
    method: "GET",
    path: "/metadata",
    operationId: "metadata.get",
    summary: "Issuer, slug and client id of the super-admin organization (no authentication)",
    tag: "metadata",
    permission: "public",
    response: z.object({ issuer: z.url(), orgSlug: z.string(), clientId: z.string() }),
    handler: async ({ ctx }) => ({
      body: {
        issuer: `${ctx.config.baseUrl}/${ctx.config.superAdminSlug}`,
        orgSlug: ctx.config.superAdminSlug,
        clientId: ADMIN_CLIENT_ID,
      },
    }),
  }),
];

/** api.admin.openapi[.]json */
export const openapiJsonOperations = [
  operation({
    method: "GET",
    path: "/openapi.json",
    operationId: "openapi.get",
    summary: "This OpenAPI 3.1 document",
    tag: "metadata",
    permission: "authenticated",
    response: z.record(z.string(), z.unknown()),
    handler: async ({ ctx }) => ({ body: buildOpenApiDocument(ctx.config.baseUrl) }),
  }),
];
