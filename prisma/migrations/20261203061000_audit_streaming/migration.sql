-- The audit trail streamed to SIEMs (decision 092): sinks per organization or per deployment, and
-- the outbox row each entry leaves for each sink in the entry's own transaction.
CREATE TABLE "AuditSink" (
    "id" UUID NOT NULL,
    "organizationId" UUID,
    "configName" TEXT,
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "url" TEXT NOT NULL DEFAULT '',
    "headerName" TEXT,
    "secretEncrypted" TEXT,
    "secretLast4" TEXT,
    "caPem" TEXT,
    "eventFamilies" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "lastDeliveredAt" TIMESTAMPTZ(3),
    "lastError" TEXT,
    "deliveredCount" INTEGER NOT NULL DEFAULT 0,
    "blockedUntil" TIMESTAMPTZ(3),
    "drainLease" TEXT,
    "drainingUntil" TIMESTAMPTZ(3),
    "version" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "AuditSink_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "AuditSink_kind_check" CHECK ("kind" IN ('syslog', 'jsonl', 'splunk_hec', 'datadog', 'otlp'))
);
CREATE UNIQUE INDEX "AuditSink_configName_key" ON "AuditSink"("configName");
CREATE INDEX "AuditSink_organizationId_idx" ON "AuditSink"("organizationId");
ALTER TABLE "AuditSink" ADD CONSTRAINT "AuditSink_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "AuditSinkEvent" (
    "id" UUID NOT NULL,
    "sinkId" UUID NOT NULL,
    "auditEntryId" UUID NOT NULL,
    "organizationId" UUID,
    "eventType" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "lastError" TEXT,
    "nextAttemptAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "AuditSinkEvent_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "AuditSinkEvent_status_check" CHECK ("status" IN ('pending', 'dead'))
);
CREATE UNIQUE INDEX "AuditSinkEvent_sinkId_auditEntryId_key" ON "AuditSinkEvent"("sinkId", "auditEntryId");
CREATE INDEX "AuditSinkEvent_sinkId_status_auditEntryId_idx" ON "AuditSinkEvent"("sinkId", "status", "auditEntryId");
CREATE INDEX "AuditSinkEvent_status_nextAttemptAt_idx" ON "AuditSinkEvent"("status", "nextAttemptAt");
ALTER TABLE "AuditSinkEvent" ADD CONSTRAINT "AuditSinkEvent_sinkId_fkey" FOREIGN KEY ("sinkId") REFERENCES "AuditSink"("id") ON DELETE CASCADE ON UPDATE CASCADE;
