-- Dynamic client registration per organization (issue 24 §3, decision 054): the organization's
-- policy (off until an administrator turns it on), the initial access tokens administrators
-- issue, and the hash of each self-registered client's registration access token (RFC 7592).
ALTER TABLE "Organization" ADD COLUMN "registrationPolicy" JSONB NOT NULL DEFAULT '{}';

ALTER TABLE "Client" ADD COLUMN "registrationAccessTokenHash" TEXT;
CREATE UNIQUE INDEX "Client_registrationAccessTokenHash_key" ON "Client"("registrationAccessTokenHash");

CREATE TABLE "RegistrationToken" (
    "id" UUID NOT NULL,
    "organizationId" UUID NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "hint" TEXT NOT NULL,
    "label" TEXT,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "maxUses" INTEGER,
    "uses" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revokedAt" TIMESTAMPTZ(3),
    CONSTRAINT "RegistrationToken_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "RegistrationToken_tokenHash_key" ON "RegistrationToken"("tokenHash");
CREATE INDEX "RegistrationToken_organizationId_createdAt_idx" ON "RegistrationToken"("organizationId", "createdAt");
ALTER TABLE "RegistrationToken" ADD CONSTRAINT "RegistrationToken_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
