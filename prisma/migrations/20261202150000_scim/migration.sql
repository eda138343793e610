-- SCIM 2.0 provisioning per organization (decision 084): the provisioning client's own ids of
-- users and of roles (its groups), found by filter, and the organization's bearer tokens, kept
-- as SHA-256 only.
ALTER TABLE "User" ADD COLUMN "scimExternalId" TEXT;
CREATE INDEX "User_scimExternalId_idx" ON "User"("scimExternalId");
ALTER TABLE "Role" ADD COLUMN "scimExternalId" TEXT;

CREATE TABLE "ScimToken" (
    "id" UUID NOT NULL,
    "organizationId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "revokedAt" TIMESTAMPTZ(3),
    "lastUsedAt" TIMESTAMPTZ(3),
    "createdBy" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ScimToken_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "ScimToken_tokenHash_key" ON "ScimToken"("tokenHash");
CREATE INDEX "ScimToken_organizationId_createdAt_idx" ON "ScimToken"("organizationId", "createdAt");
ALTER TABLE "ScimToken" ADD CONSTRAINT "ScimToken_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
