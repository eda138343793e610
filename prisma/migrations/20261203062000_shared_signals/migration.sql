-- OpenID Shared Signals (decision 093): streams of an organization's receivers, the subjects each
-- asked for, and the Security Event Tokens the audit writer adds in the audit entry's transaction.
CREATE TABLE "SsfStream" (
    "id" UUID NOT NULL,
    "organizationId" UUID NOT NULL,
    "clientId" TEXT NOT NULL,
    "audience" TEXT NOT NULL,
    "eventsRequested" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "eventsDelivered" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "deliveryMethod" TEXT NOT NULL,
    "pushEndpointUrl" TEXT,
    "pushAuthorizationEncrypted" TEXT,
    "status" TEXT NOT NULL DEFAULT 'enabled',
    "reason" TEXT,
    "description" TEXT,
    "version" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "SsfStream_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "SsfStream_status_check" CHECK ("status" IN ('enabled', 'paused', 'disabled')),
    CONSTRAINT "SsfStream_deliveryMethod_check" CHECK ("deliveryMethod" IN ('urn:ietf:rfc:8935', 'urn:ietf:rfc:8936'))
);
CREATE INDEX "SsfStream_organizationId_clientId_idx" ON "SsfStream"("organizationId", "clientId");
ALTER TABLE "SsfStream" ADD CONSTRAINT "SsfStream_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "SsfSubject" (
    "id" UUID NOT NULL,
    "streamId" UUID NOT NULL,
    "format" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "subject" JSONB NOT NULL,
    "userId" UUID,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "SsfSubject_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "SsfSubject_streamId_key_key" ON "SsfSubject"("streamId", "key");
CREATE INDEX "SsfSubject_userId_idx" ON "SsfSubject"("userId");
ALTER TABLE "SsfSubject" ADD CONSTRAINT "SsfSubject_streamId_fkey" FOREIGN KEY ("streamId") REFERENCES "SsfStream"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "SsfEvent" (
    "id" UUID NOT NULL,
    "streamId" UUID NOT NULL,
    "auditEntryId" UUID,
    "claims" JSONB NOT NULL,
    "setJwt" TEXT,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "lastError" TEXT,
    "deliveredAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "SsfEvent_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "SsfEvent_status_check" CHECK ("status" IN ('pending', 'retrying', 'delivered', 'acknowledged', 'dead'))
);
CREATE INDEX "SsfEvent_streamId_status_createdAt_idx" ON "SsfEvent"("streamId", "status", "createdAt");
ALTER TABLE "SsfEvent" ADD CONSTRAINT "SsfEvent_streamId_fkey" FOREIGN KEY ("streamId") REFERENCES "SsfStream"("id") ON DELETE CASCADE ON UPDATE CASCADE;
