-- Per-organization login figures (GET /api/admin/stats/organizations/{orgId}) count one event
-- type of one organization over a time window.
CREATE INDEX "AuditEntry_organizationId_eventType_createdAt_idx" ON "AuditEntry"("organizationId", "eventType", "createdAt");
