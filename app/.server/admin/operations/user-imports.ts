import { UuidSchema } from "~/schemas/uuid";
import { z } from "zod";
import { MAX_IMPORT_BYTES } from "~/schemas/transfer";
import { UserImportReportSchema, UserImportRequestSchema } from "~/schemas/user-import";
import { operation } from "../http/route";
import { applyUserImport, planUserImport } from "../transfer/user-import";

/** Imports of users from a Keycloak realm export, an Auth0 user export or a CSV/JSON user list (see ../transfer/user-import.ts). */
const OrgParams = z.object({ orgId: UuidSchema });
const NoQuery = z.object({}).strict();

/** /organizations/{orgId}/user-imports/preview */
export const userImportPreviewOperations = [
  operation({
    method: "POST",
    path: "/organizations/{orgId}/user-imports/preview",
    operationId: "userImports.preview",
    summary: "Read a Keycloak realm export, an Auth0 user export or a CSV/JSON user list and report what importing it would create, update and skip, with a reason per skipped row (writes nothing)",
    tag: "user-imports",
    permission: "admin:user:write",
    organizationScope: [{ in: "path", param: "orgId" }],
    params: OrgParams,
    query: NoQuery,
    body: UserImportRequestSchema,
    response: UserImportReportSchema,
    maxBodyBytes: MAX_IMPORT_BYTES,
    readOnly: true,
    handler: async ({ ctx, params, body }) => ({ body: (await planUserImport(ctx, params.orgId, body)).report }),
  }),
];

/** /organizations/{orgId}/user-imports/apply */
export const userImportApplyOperations = [
  operation({
    method: "POST",
    path: "/organizations/{orgId}/user-imports/apply",
    operationId: "userImports.apply",
    summary:
      "Import the users of a Keycloak realm export (and its clients), an Auth0 user export or a CSV/JSON user list: new addresses become users (old password hashes and TOTP secrets imported), existing ones keep their password and status and only gain names, verification and roles; applying it again changes nothing",
    tag: "user-imports",
    permission: "admin:user:write",
    organizationScope: [{ in: "path", param: "orgId" }],
    params: OrgParams,
    query: NoQuery,
    body: UserImportRequestSchema,
    response: UserImportReportSchema,
    maxBodyBytes: MAX_IMPORT_BYTES,
    // Outside the request's transaction: the import commits in batches of its own, each with its
    // one audit entry, rather than holding a hundred thousand users' rows in one transaction.
    readOnly: true,
    transactionTimeoutMs: 600_000,
    handler: async ({ ctx, params, body, admin, transaction }) => ({ body: await applyUserImport(ctx, { transaction }, params.orgId, body, admin.id) }),
  }),
];
