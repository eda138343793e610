-- API resources per organization (decision 077): the APIs a client may ask access tokens for
-- with RFC 8707's resource parameter, and which client may ask for which of them with which
-- scopes. The identifier is plain TEXT: resource indicators compare exactly, case included.
CREATE TABLE "ApiResource" (
    "id" UUID NOT NULL,
    "organizationId" UUID NOT NULL,
    "identifier" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "scopes" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "accessTokenTtlSeconds" INTEGER,
    "consentRequired" BOOLEAN NOT NULL DEFAULT true,
    "status" TEXT NOT NULL DEFAULT 'active',
    "version" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ApiResource_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "ApiResource_status_check" CHECK ("status" IN ('active', 'inactive'))
);
CREATE UNIQUE INDEX "ApiResource_organizationId_identifier_key" ON "ApiResource"("organizationId", "identifier");
ALTER TABLE "ApiResource" ADD CONSTRAINT "ApiResource_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- One row per client and resource: the scopes of the resource the client may ask for.
CREATE TABLE "ClientResourceGrant" (
    "clientId" TEXT NOT NULL,
    "resourceId" UUID NOT NULL,
    "scopes" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ClientResourceGrant_pkey" PRIMARY KEY ("clientId", "resourceId")
);
CREATE INDEX "ClientResourceGrant_resourceId_idx" ON "ClientResourceGrant"("resourceId");
ALTER TABLE "ClientResourceGrant" ADD CONSTRAINT "ClientResourceGrant_clientId_fkey" FOREIGN KEY ("clientId") REFERENCES "Client"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "ClientResourceGrant" ADD CONSTRAINT "ClientResourceGrant_resourceId_fkey" FOREIGN KEY ("resourceId") REFERENCES "ApiResource"("id") ON DELETE CASCADE ON UPDATE CASCADE;
