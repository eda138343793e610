-- Signing keys per organization (docs/decisions/016-signing-keys-per-organization.md).
-- The keys that exist now were shared by every organization: they keep a NULL organizationId.
-- The first start of this version takes them out of signing in one statement (retiring until
-- every token they signed has expired); organizations get keys of their own when they are
-- created, or, for those that exist now, when they are first used. Nothing here runs per
-- organization, so the migration costs the same for ten organizations or a hundred thousand.
ALTER TABLE "SigningKey" ADD COLUMN "organizationId" UUID;

ALTER TABLE "SigningKey" ADD CONSTRAINT "SigningKey_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The published keys of one organization (its own, by status) and the shared ones still
-- retiring (organizationId IS NULL) are each one range of this index.
CREATE INDEX "SigningKey_organizationId_status_idx" ON "SigningKey"("organizationId", "status");

-- Sweeping the keys whose retiring period is over reads only those, however many organizations
-- rotated within the last token lifetime (the status index alone would read every retiring key).
DROP INDEX "SigningKey_status_idx";
CREATE INDEX "SigningKey_status_retireAfter_idx" ON "SigningKey"("status", "retireAfter");
