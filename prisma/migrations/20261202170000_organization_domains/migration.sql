-- An organization's email domains, proved by a DNS TXT record (decision 086): pending until the
-- record is found, verified after, lapsed when the daily re-check fails enough times in a row.
CREATE TABLE "OrganizationDomain" (
    "id" UUID NOT NULL,
    "organizationId" UUID NOT NULL,
    "domain" TEXT NOT NULL,
    "verificationToken" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "verifiedAt" TIMESTAMPTZ(3),
    "lastCheckedAt" TIMESTAMPTZ(3),
    "lastError" TEXT,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "failingSince" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "OrganizationDomain_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "OrganizationDomain_status_check" CHECK ("status" IN ('pending', 'verified', 'lapsed')),
    CONSTRAINT "OrganizationDomain_failures_check" CHECK ("failures" >= 0)
);

CREATE UNIQUE INDEX "OrganizationDomain_organizationId_domain_key" ON "OrganizationDomain"("organizationId", "domain");
CREATE INDEX "OrganizationDomain_status_lastCheckedAt_idx" ON "OrganizationDomain"("status", "lastCheckedAt");

ALTER TABLE "OrganizationDomain" ADD CONSTRAINT "OrganizationDomain_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
