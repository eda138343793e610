import { UuidSchema } from "~/schemas/uuid";
import { z } from "zod";
import {
  ASSET_CONTENT_TYPES,
  ASSET_KINDS,
  ASSET_MAX_BYTES,
  BrandingAssetSchema,
  BrandingSettingsSchema,
  BrandingUpdateSchema,
  type AssetContentType,
} from "~/schemas/branding";
import { requireBranding, toBrandingAsset, toBrandingSettings, updateBranding, uploadAsset } from "../../branding/service";
import { operation } from "../http/route";

/** Branding settings and assets of an organization's login pages. */
const OrgParams = z.object({ orgId: UuidSchema });
const AssetQuery = z.object({ kind: z.enum(ASSET_KINDS).describe("logo (at most 1 MiB) or favicon (at most 256 KiB)") }).strict();

/** /organizations/{orgId}/branding */
export const brandingOperations = [
  operation({
    method: "GET",
    path: "/organizations/{orgId}/branding",
    operationId: "branding.getSettings",
    summary: "The organization's branding: display name, colours, footer text, logo and favicon URLs",
    tag: "branding",
    permission: "admin:branding:read",
    organizationScope: [{ in: "path", param: "orgId" }],
    params: OrgParams,
    response: BrandingSettingsSchema,
    etag: true,
    handler: async ({ ctx, params }) => {
      const organization = await requireBranding(ctx, params.orgId);
      return { body: toBrandingSettings(ctx, organization), version: organization.version };
    },
  }),
  operation({
    method: "PUT",
    path: "/organizations/{orgId}/branding",
    operationId: "branding.updateSettings",
    summary: "Change branding settings: absent fields stay, null removes; logo and favicon name uploaded assets (If-Match guards against lost updates)",
    tag: "branding",
    permission: "admin:branding:write",
    organizationScope: [{ in: "path", param: "orgId" }],
    params: OrgParams,
    body: BrandingUpdateSchema,
    response: BrandingSettingsSchema,
    etag: true,
    handler: async ({ ctx, params, body, ifMatch }) => {
      const before = toBrandingSettings(ctx, await requireBranding(ctx, params.orgId));
      const organization = await updateBranding(ctx, params.orgId, body, ifMatch);
      const after = toBrandingSettings(ctx, organization);
      ctx.audit({ eventType: "organization.branding.updated", organizationId: organization.id, targetType: "organization", targetId: organization.id, data: { change: body }, changes: { before, after } });
      return { body: toBrandingSettings(ctx, organization), version: organization.version };
    },
  }),
];

/** /organizations/{orgId}/branding/assets */
export const brandingAssetOperations = [
  operation({
    method: "POST",
    path: "/organizations/{orgId}/branding/assets",
    operationId: "branding.uploadAsset",
    summary: "Upload a logo or favicon (the raw file as the body) and make it the organization's current one; SVGs are sanitized",
    tag: "branding",
    permission: "admin:branding:write",
    organizationScope: [{ in: "path", param: "orgId" }],
    params: OrgParams,
    query: AssetQuery,
    rawBody: { contentTypes: ASSET_CONTENT_TYPES, maxBytes: (query) => ASSET_MAX_BYTES[query.kind] },
    response: BrandingAssetSchema,
    successStatus: 201,
    etag: true,
    handler: async ({ ctx, params, query, rawBody, ifMatch }) => {
      const { asset, organization } = await uploadAsset(ctx, {
        organizationId: params.orgId,
        kind: query.kind,
        contentType: rawBody!.contentType as AssetContentType,
        bytes: rawBody!.bytes,
        ifMatch,
      });
      ctx.audit({
        eventType: "organization.branding.asset_uploaded",
        organizationId: organization.id,
        targetType: "organization",
        targetId: organization.id,
        data: { change: { [query.kind]: { assetId: asset.id, contentType: asset.contentType, sha256: asset.sha256, size: asset.size } } },
      });
      return { body: toBrandingAsset(ctx, asset), version: organization.version };
    },
  }),
];
