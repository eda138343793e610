-- The audit log's actor filter (by id, or by an email or client name resolved to ids, decision
-- 039) reads the entries of a few actors, newest first, without scanning the whole log.
CREATE INDEX "AuditEntry_actorId_createdAt_idx" ON "AuditEntry"("actorId", "createdAt");
