-- Admin API user lists at scale: cursor walks go by (organizationId, id) and the default
-- offset sort by (organizationId, createdAt, id), each a range scan of one index instead of
-- a scan and sort of every user of the organization.
CREATE INDEX "User_organizationId_id_idx" ON "User"("organizationId", "id");
CREATE INDEX "User_organizationId_createdAt_id_idx" ON "User"("organizationId", "createdAt", "id");
