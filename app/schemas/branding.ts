import { z } from "zod";

/**
 * The one description of an organization's branding: the Admin API validates with it, the
 * stored JSON (Organization.branding) is read through it, and the login pages render only what
 * it accepted. Every value is either a strict hex colour, short plain text (React escapes it), or
 * a reference to an uploaded asset, so nothing here can break out of CSS or point elsewhere.
 */
export const HEX_COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/;

export const HexColorSchema = z.string().max(9).regex(HEX_COLOR, { message: "must be a hex colour: #rgb, #rgba, #rrggbb or #rrggbbaa" });
export const DisplayNameSchema = z.string().trim().min(1).max(100);
export const FooterTextSchema = z.string().trim().min(1).max(300);

export const ASSET_KINDS = ["logo", "favicon"] as const;
export type AssetKind = (typeof ASSET_KINDS)[number];

export const ASSET_CONTENT_TYPES = ["image/png", "image/jpeg", "image/webp", "image/svg+xml", "image/x-icon"] as const;
export type AssetContentType = (typeof ASSET_CONTENT_TYPES)[number];

/** Largest accepted upload per kind (documented in docs/decisions/011-svg-sanitizing.md). */
export const ASSET_MAX_BYTES: Record<AssetKind, number> = { logo: 1024 * 1024, favicon: 256 * 1024 };

export const ASSET_EXTENSIONS: Record<AssetContentType, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/webp": "webp",
  "image/svg+xml": "svg",
  "image/x-icon": "ico",
};

const Sha256Schema = z.string().regex(/^[0-9a-f]{64}$/);

/** How the stored JSON points at an uploaded asset: enough to build its URL without a query. */
export const AssetRefSchema = z.object({ id: z.uuid(), sha256: Sha256Schema, contentType: z.enum(ASSET_CONTENT_TYPES) }).strict();
export type AssetRef = z.infer<typeof AssetRefSchema>;

/** The body of PUT /organizations/{orgId}/branding: absent = unchanged, null = removed. */
export const BrandingUpdateSchema = z
  .object({
    displayName: DisplayNameSchema.nullable().optional().describe("Shown instead of the organization's name"),
    primaryColor: HexColorSchema.nullable().optional().describe("Buttons, links, focus rings"),
    backgroundColor: HexColorSchema.nullable().optional().describe("Page background"),
    textColor: HexColorSchema.nullable().optional().describe("Body text"),
    footerText: FooterTextSchema.nullable().optional().describe("Plain text below the card"),
    logoAssetId: z.uuid({ message: "must be the id of an uploaded logo" }).nullable().optional(),
    faviconAssetId: z.uuid({ message: "must be the id of an uploaded favicon" }).nullable().optional(),
  })
  .strict();
export type BrandingUpdate = z.infer<typeof BrandingUpdateSchema>;

/**
 * Organization.branding as stored. `name` and `logoUrl` were written before the Admin API
 * existed (by seeding and tests); they are still honoured, and an update of displayName or the
 * logo removes them.
 */
export const BrandingStoredSchema = z.object({
  displayName: DisplayNameSchema.optional(),
  primaryColor: HexColorSchema.optional(),
  backgroundColor: HexColorSchema.optional(),
  textColor: HexColorSchema.optional(),
  footerText: FooterTextSchema.optional(),
  logo: AssetRefSchema.optional(),
  favicon: AssetRefSchema.optional(),
  name: DisplayNameSchema.optional(),
  logoUrl: z.string().max(2048).optional(),
});
export type BrandingStored = z.infer<typeof BrandingStoredSchema>;

/**
 * Reads stored branding field by field: a value that fails its schema is dropped alone, so one
 * bad value (hand-edited JSON) never takes the rest of the branding with it.
 */
export function readStoredBranding(raw: unknown): BrandingStored {
  const source = raw && typeof raw === "object" && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const result: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(BrandingStoredSchema.shape)) {
    if (!(key in source)) continue;
    const parsed = schema.safeParse(source[key]);
    if (parsed.success && parsed.data !== undefined) result[key] = parsed.data;
  }
  return result as BrandingStored;
}

/** The public address of an asset; the hash makes it immutable. */
export function assetPath(organizationId: string, ref: { sha256: string; contentType: AssetContentType }): string {
  return `/assets/branding/${organizationId}/${ref.sha256}.${ASSET_EXTENSIONS[ref.contentType]}`;
}

const AssetViewSchema = z.object({ assetId: z.uuid(), url: z.string(), contentType: z.enum(ASSET_CONTENT_TYPES) });

/** GET/PUT response: the settings with asset URLs. */
export const BrandingSettingsSchema = z.object({
  organizationId: z.uuid(),
  displayName: z.string().nullable(),
  primaryColor: z.string().nullable(),
  backgroundColor: z.string().nullable(),
  textColor: z.string().nullable(),
  footerText: z.string().nullable(),
  logo: AssetViewSchema.nullable(),
  favicon: AssetViewSchema.nullable(),
});
export type BrandingSettings = z.infer<typeof BrandingSettingsSchema>;

export const BrandingAssetSchema = z.object({
  id: z.uuid(),
  organizationId: z.uuid(),
  kind: z.enum(ASSET_KINDS),
  contentType: z.enum(ASSET_CONTENT_TYPES),
  sha256: z.string(),
  size: z.number().int(),
  url: z.string(),
  createdAt: z.string(),
});
export type BrandingAsset = z.infer<typeof BrandingAssetSchema>;

/**
 * An organization's branding for its login pages and emails, read from the organization record
 * through the schema above (app/.server/branding/pages.ts, `brandingOf`) and reduced to values that cannot break
 * out of CSS or point anywhere unexpected.
 */
export interface Branding {
  name: string;
  logoUrl: string | null;
  faviconUrl?: string | null;
  footerText?: string | null;
  /** CSS custom properties applied to the page (all prefixed --porta-). */
  cssVariables: Record<string, string>;
}

/**
 * What a page about a flow that ended shows (an expired sign-in, a used link, an accepted
 * invitation, a changed password): whose it was and the next step. `branding` is null when
 * nothing names an active organization; `home` (app/.server/auth/application-home.ts) and `clientName` only for
 * an active client of that organization, never an address from the request.
 */
export interface FlowEnd {
  branding: Branding | null;
  home: string | null;
  clientName: string | null;
  /** The organization's default language, for a page that has no `ui_locales` to go by. */
  defaultLocale: string | null;
}
