import { createHash } from "node:crypto";
import type { Prisma } from "~/generated/prisma/client";
import { ASSET_KINDS, readStoredBranding } from "~/schemas/branding";
import type { PackageContent } from "~/schemas/transfer";

/**
 * Branding in packages: the stored JSON refers to uploaded assets by database id, which means
 * nothing in another database. A package refers to them by content hash and carries their
 * bytes; an import stores each asset once per organization and points the branding at it.
 */
type Branding = PackageContent["organization"]["branding"];
type Asset = PackageContent["organization"]["assets"][number];

/** The stored branding with asset references reduced to {sha256, contentType}. */
export function portableBranding(stored: unknown): Branding {
  const raw = stored && typeof stored === "object" && !Array.isArray(stored) ? { ...(stored as Branding) } : {};
  const refs = readStoredBranding(stored);
  for (const kind of ASSET_KINDS) {
    const ref = refs[kind];
    if (ref) raw[kind] = { sha256: ref.sha256, contentType: ref.contentType };
    else delete raw[kind];
  }
  return raw;
}

export async function exportBranding(db: Prisma.TransactionClient, organizationId: string, stored: unknown): Promise<{ branding: Branding; assets: Asset[] }> {
  const refs = readStoredBranding(stored);
  const ids = ASSET_KINDS.map((kind) => refs[kind]?.id).filter((id): id is string => Boolean(id));
  const rows = await db.brandingAsset.findMany({ where: { organizationId, id: { in: ids } } });
  const assets = rows.map((a) => ({ kind: a.kind as Asset["kind"], contentType: a.contentType as Asset["contentType"], sha256: a.sha256, data: Buffer.from(a.bytes).toString("base64") }));
  return { branding: portableBranding(stored), assets };
}

/** Problems with the package's assets, as field paths under package.content.organization. */
export function assetProblems(organization: PackageContent["organization"]): Array<{ field: string; message: string }> {
  const problems: Array<{ field: string; message: string }> = [];
  const hashes = new Set<string>();
  organization.assets.forEach((asset, i) => {
    const actual = createHash("sha256").update(Buffer.from(asset.data, "base64")).digest("hex");
    if (actual !== asset.sha256) problems.push({ field: `package.content.organization.assets.${i}.data`, message: "does not match its sha256" });
    hashes.add(asset.sha256);
  });
  for (const kind of ASSET_KINDS) {
    const ref = organization.branding[kind] as { sha256?: unknown } | undefined;
    if (ref && !hashes.has(String(ref.sha256))) problems.push({ field: `package.content.organization.branding.${kind}`, message: "refers to an asset the package does not carry" });
  }
  return problems;
}

/** Stores the package's assets in the organization (once per hash) and returns the branding to store. */
export async function materializeBranding(tx: Prisma.TransactionClient, organizationId: string, organization: PackageContent["organization"]): Promise<Prisma.InputJsonObject> {
  const stored: Record<string, unknown> = { ...organization.branding };
  for (const asset of organization.assets) {
    const existing = await tx.brandingAsset.findUnique({ where: { organizationId_sha256: { organizationId, sha256: asset.sha256 } }, select: { id: true } });
    const bytes = Buffer.from(asset.data, "base64");
    const id =
      existing?.id ??
      (await tx.brandingAsset.create({ data: { organizationId, kind: asset.kind, contentType: asset.contentType, sha256: asset.sha256, bytes, size: bytes.length } })).id;
    for (const kind of ASSET_KINDS) {
      const ref = organization.branding[kind] as { sha256?: unknown } | undefined;
      if (ref?.sha256 === asset.sha256) stored[kind] = { id, sha256: asset.sha256, contentType: asset.contentType };
    }
  }
  return stored as Prisma.InputJsonObject;
}
