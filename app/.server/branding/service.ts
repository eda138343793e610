import { createHash } from "node:crypto";
import type { BrandingAsset as AssetRow, Organization, Prisma } from "~/generated/prisma/client";
import {
  assetPath,
  readStoredBranding,
  type AssetContentType,
  type AssetKind,
  type AssetRef,
  type BrandingAsset,
  type BrandingSettings,
  type BrandingStored,
  type BrandingUpdate,
} from "~/schemas/branding";
import { invalidateOrganization } from "../directory/organizations";
import type { Context, Db } from "../context";
import { assertVersion, compareAndSet } from "../db/compare-and-set";
import { notFound, validation } from "../errors";
import { sniffContentType } from "./content-type";
import { sanitizeSvg, SvgRefusedError } from "./svg";

/**
 * Branding settings (Organization.branding, shaped by app/schemas/branding.ts) and their
 * uploaded assets. Every write bumps the organization's version and drops its cached record, so
 * the login pages show the change on their next request.
 */
async function liveOrganization(ctx: Context, organizationId: string): Promise<Organization> {
  const row = await ctx.db.organization.findUnique({ where: { id: organizationId } });
  if (!row || row.status === "deleted") throw notFound("organization");
  return row;
}

const absolute = (ctx: Context<"config">, path: string) => new URL(path, ctx.config.baseUrl).toString();

function assetView(ctx: Context<"config">, organizationId: string, ref: AssetRef | undefined) {
  return ref ? { assetId: ref.id, url: absolute(ctx, assetPath(organizationId, ref)), contentType: ref.contentType } : null;
}

export function toBrandingSettings(ctx: Context<"config">, organization: Organization): BrandingSettings {
  const stored = readStoredBranding(organization.branding);
  return {
    organizationId: organization.id,
    displayName: stored.displayName ?? stored.name ?? null,
    primaryColor: stored.primaryColor ?? null,
    backgroundColor: stored.backgroundColor ?? null,
    textColor: stored.textColor ?? null,
    footerText: stored.footerText ?? null,
    logo: assetView(ctx, organization.id, stored.logo),
    favicon: assetView(ctx, organization.id, stored.favicon),
  };
}

export function requireBranding(ctx: Context, organizationId: string): Promise<Organization> {
  return liveOrganization(ctx, organizationId);
}

const refOf = (asset: Pick<AssetRow, "id" | "sha256" | "contentType">): AssetRef => ({
  id: asset.id,
  sha256: asset.sha256,
  contentType: asset.contentType as AssetContentType,
});

/** Writes the new branding JSON if the organization is still at If-Match's version, else the one read; the cached record goes once it has committed. */
async function writeBranding(ctx: Context<"cache">, organization: Organization, next: BrandingStored, expectedVersion: number | undefined): Promise<Organization> {
  const prisma = ctx.db;
  await compareAndSet({ ifMatch: expectedVersion, read: organization.version }, (guard) =>
    prisma.organization.updateMany({ where: { id: organization.id, ...guard }, data: { branding: next as Prisma.InputJsonObject, version: { increment: 1 } } }),
  );
  ctx.afterCommit(() => invalidateOrganization(ctx.cache, organization));
  return prisma.organization.findUniqueOrThrow({ where: { id: organization.id } });
}

async function assetRefFor(ctx: Context, organizationId: string, assetId: string, kind: AssetKind, field: string): Promise<AssetRef> {
  const asset = await ctx.db.brandingAsset.findFirst({
    where: { id: assetId, organizationId },
    select: { id: true, sha256: true, contentType: true },
  });
  if (!asset) throw validation([{ field, message: `is not a ${kind} uploaded to this organization` }]);
  return refOf(asset);
}

const TEXT_AND_COLOURS = ["displayName", "primaryColor", "backgroundColor", "textColor", "footerText"] as const;

/** Absent fields stay as they are; null removes a value. */
export async function updateBranding(ctx: Context<"cache">, organizationId: string, update: BrandingUpdate, ifMatch: number | undefined): Promise<Organization> {
  const organization = await liveOrganization(ctx, organizationId);
  const next: BrandingStored = readStoredBranding(organization.branding);
  for (const key of TEXT_AND_COLOURS) {
    const value = update[key];
    if (value === undefined) continue;
    if (value === null) delete next[key];
    else next[key] = value;
  }
  if (update.displayName !== undefined) delete next.name;
  for (const [field, slot, kind] of [["logoAssetId", "logo", "logo"], ["faviconAssetId", "favicon", "favicon"]] as const) {
    const assetId = update[field];
    if (assetId === undefined) continue;
    if (slot === "logo") delete next.logoUrl;
    if (assetId === null) delete next[slot];
    else next[slot] = await assetRefFor(ctx, organizationId, assetId, kind, field);
  }
  return writeBranding(ctx, organization, next, ifMatch);
}

export function toBrandingAsset(ctx: Context<"config">, asset: AssetRow): BrandingAsset {
  return {
    id: asset.id,
    organizationId: asset.organizationId,
    kind: asset.kind as AssetKind,
    contentType: asset.contentType as AssetContentType,
    sha256: asset.sha256,
    size: asset.size,
    url: absolute(ctx, assetPath(asset.organizationId, refOf(asset))),
    createdAt: asset.createdAt.toISOString(),
  };
}

/** The bytes to store: checked against the declared type, SVGs rebuilt by the sanitizer. */
export function verifiedAssetBytes(declared: AssetContentType, bytes: Buffer): Buffer {
  const actual = sniffContentType(bytes);
  if (actual !== declared) {
    throw validation([{ field: "body", message: actual ? `is ${actual}, not the declared ${declared}` : `is not a ${declared} file` }]);
  }
  if (declared !== "image/svg+xml") return bytes;
  try {
    return Buffer.from(sanitizeSvg(bytes.toString("utf8")), "utf8");
  } catch (error) {
    if (error instanceof SvgRefusedError) throw validation([{ field: "body", message: error.message }]);
    throw error;
  }
}

/** Stores an upload (the same bytes twice are one asset) and makes it the organization's logo or favicon. */
export async function uploadAsset(
  ctx: Context<"cache">,
  input: { organizationId: string; kind: AssetKind; contentType: AssetContentType; bytes: Buffer; ifMatch: number | undefined },
): Promise<{ asset: AssetRow; organization: Organization }> {
  const organization = await liveOrganization(ctx, input.organizationId);
  // Checked before the asset is stored, so that a stale upload leaves nothing behind.
  assertVersion(input.ifMatch, organization.version);
  const bytes = verifiedAssetBytes(input.contentType, input.bytes);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const asset = await ctx.db.brandingAsset.upsert({
    where: { organizationId_sha256: { organizationId: organization.id, sha256 } },
    create: { organizationId: organization.id, kind: input.kind, contentType: input.contentType, sha256, bytes: new Uint8Array(bytes), size: bytes.length },
    update: {},
  });
  const next = readStoredBranding(organization.branding);
  next[input.kind] = refOf(asset);
  if (input.kind === "logo") delete next.logoUrl;
  const updated = await writeBranding(ctx, organization, next, input.ifMatch);
  return { asset, organization: updated };
}

/** The asset a public URL names, or null; only assets of a live organization are served. */
export async function findServedAsset(db: Db, organizationId: string, sha256: string): Promise<AssetRow | null> {
  const asset = await db.brandingAsset.findUnique({ where: { organizationId_sha256: { organizationId, sha256 } } });
  if (!asset) return null;
  const organization = await db.organization.findUnique({ where: { id: organizationId }, select: { status: true } });
  return organization?.status === "active" ? asset : null;
}
