-- Setup links (decision 089): a customer's IT person configures one organization's SSO
-- connections, SCIM tokens and domains through a time-limited link bound to the first browser
-- that opens it. The token and the browser's secret are kept as SHA-256 only.
CREATE TABLE "SetupLink" (
    "id" UUID NOT NULL,
    "organizationId" UUID NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "note" TEXT,
    "createdById" TEXT,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "openedAt" TIMESTAMPTZ(3),
    "openedSessionHash" TEXT,
    "finishedAt" TIMESTAMPTZ(3),
    "revokedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SetupLink_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "SetupLink_tokenHash_key" ON "SetupLink"("tokenHash");
CREATE UNIQUE INDEX "SetupLink_openedSessionHash_key" ON "SetupLink"("openedSessionHash");
CREATE INDEX "SetupLink_organizationId_createdAt_idx" ON "SetupLink"("organizationId", "createdAt");
ALTER TABLE "SetupLink" ADD CONSTRAINT "SetupLink_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
