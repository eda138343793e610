import { UuidSchema } from "~/schemas/uuid";
import { z } from "zod";
import { ExportManifestSchema, ExportPackageSchema, ImportPlanSchema, ImportRequestSchema, MAX_IMPORT_BYTES } from "~/schemas/transfer";
import { operation } from "../http/route";
import { exportManifest, exportOrganization } from "../transfer/export";
import { applyImport, previewImport } from "../transfer/import";

/** Exports and imports of whole organizations (see ../transfer). */
const OrgParams = z.object({ orgId: UuidSchema });

/** /organizations/{orgId}/export */
export const exportOperations = [
  operation({
    method: "GET",
    path: "/organizations/{orgId}/export",
    operationId: "exports.download",
    summary:
      "Download the organization as a signed, versioned package: settings, applications, clients (secret hashes), roles, permissions, claims and users (password hashes, sealed TOTP secrets, recovery-code hashes); never a plaintext secret",
    tag: "exports",
    permission: "admin:export:read",
    params: OrgParams,
    query: z.object({}).strict(),
    response: ExportPackageSchema,
    handler: async ({ ctx, params }) => {
      const pkg = await exportOrganization(ctx, params.orgId);
      // Hashes leave the system here: who took them is on record.
      ctx.audit({ eventType: "organization.exported", organizationId: params.orgId, targetType: "organization", targetId: params.orgId, data: { counts: pkg.counts } });
      const day = pkg.exportedAt.slice(0, 10);
      return { body: pkg, headers: { "Content-Disposition": `attachment; filename="porta-${pkg.content.organization.slug}-${day}.json"` } };
    },
  }),
];

/** /organizations/{orgId}/export/manifest */
export const exportManifestOperations = [
  operation({
    method: "GET",
    path: "/organizations/{orgId}/export/manifest",
    operationId: "exports.manifest",
    summary: "What an export of the organization would hold (counts per kind) and the fingerprint of the key that would sign it",
    tag: "exports",
    permission: "admin:export:read",
    params: OrgParams,
    query: z.object({}).strict(),
    response: ExportManifestSchema,
    handler: async ({ ctx, params }) => ({ body: await exportManifest(ctx, params.orgId) }),
  }),
];

/** /imports/preview */
export const importPreviewOperations = [
  operation({
    method: "POST",
    path: "/imports/preview",
    operationId: "imports.preview",
    summary: "Verify a package and list what applying it would create and update (writes nothing)",
    tag: "imports",
    permission: "admin:import:write",
    body: ImportRequestSchema,
    response: ImportPlanSchema,
    maxBodyBytes: MAX_IMPORT_BYTES,
    readOnly: true,
    handler: async ({ ctx, body }) => ({ body: await previewImport(ctx, body.package, { slug: body.slug, copy: body.copy }) }),
  }),
];

/** /imports/apply */
export const importApplyOperations = [
  operation({
    method: "POST",
    path: "/imports/apply",
    operationId: "imports.apply",
    summary: "Apply a package in one transaction: create what is missing, update what differs, delete nothing; applying it again changes nothing",
    tag: "imports",
    permission: "admin:import:write",
    body: ImportRequestSchema,
    response: ImportPlanSchema.extend({ organizationId: z.uuid() }),
    maxBodyBytes: MAX_IMPORT_BYTES,
    // A whole organization's package is applied in one write.
    transactionTimeoutMs: 600_000,
    handler: async ({ ctx, body }) => {
      const result = await applyImport(ctx, body.package, { slug: body.slug, copy: body.copy });
      ctx.audit({
        eventType: "organization.imported",
        organizationId: result.organizationId,
        targetType: "organization",
        targetId: result.organizationId,
        data: { source: body.package.source, exportedAt: body.package.exportedAt, summary: result.summary },
      });
      return { body: result };
    },
  }),
];
