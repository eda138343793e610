import { z } from "zod";
import { ADMIN_CLIENT_ID } from "../permissions";
import { operation } from "../http/route";

/** /metadata */
export const metadataOperations = [
  operation({
    method: "GET",
    path: "/metadata",
    operationId: "metadata.get",
    summary: "Issuer, slug and client id of the super-admin organization, and the release label of this Porta (no authentication)",
    tag: "metadata",
    permission: "public",
    response: z.object({ issuer: z.url(), orgSlug: z.string(), clientId: z.string(), release: z.string() }),
    handler: async ({ ctx }) => ({
      body: {
        issuer: `${ctx.config.baseUrl}/${ctx.config.superAdminSlug}`,
        orgSlug: ctx.config.superAdminSlug,
        clientId: ADMIN_CLIENT_ID,
        release: ctx.release,
      },
    }),
  }),
];

/** /openapi.json */
export const openapiJsonOperations = [
  operation({
    method: "GET",
    path: "/openapi.json",
    operationId: "openapi.get",
    summary: "This OpenAPI 3.1 document",
    tag: "metadata",
    permission: "authenticated",
    response: z.record(z.string(), z.unknown()),
    handler: async ({ ctx }) => {
      // The document describes the operation table, which holds this very operation: loaded on
      // first use rather than at start, the two modules do not need each other to load.
      const { buildOpenApiDocument } = await import("../http/openapi");
      return { body: buildOpenApiDocument(ctx.config.baseUrl, ctx.release) };
    },
  }),
];
