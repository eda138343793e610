-- Branding assets: uploaded logos and favicons, served by content hash.
CREATE TABLE "BrandingAsset" (
    "id" UUID NOT NULL,
    "organizationId" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "contentType" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "bytes" BYTEA NOT NULL,
    "size" INTEGER NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "BrandingAsset_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "BrandingAsset_kind_check" CHECK ("kind" IN ('logo', 'favicon')),
    CONSTRAINT "BrandingAsset_contentType_check" CHECK ("contentType" IN ('image/png', 'image/jpeg', 'image/webp', 'image/svg+xml', 'image/x-icon'))
);
CREATE UNIQUE INDEX "BrandingAsset_organizationId_sha256_key" ON "BrandingAsset"("organizationId", "sha256");

ALTER TABLE "BrandingAsset" ADD CONSTRAINT "BrandingAsset_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
