-- SAML connections are identity providers of kind "saml" (decision 081): their settings in one
-- JSON column, emails of the connection's domains optionally taken as verified, and the IDs of
-- assertions already used, kept until they expire so that a replay fails in every process.
ALTER TABLE "IdentityProvider" ADD COLUMN "saml" JSONB;
ALTER TABLE "IdentityProvider" ADD COLUMN "assumeVerifiedEmails" BOOLEAN NOT NULL DEFAULT false;

CREATE TABLE "SamlAssertionUse" (
    "providerId" UUID NOT NULL,
    "assertionId" TEXT NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SamlAssertionUse_pkey" PRIMARY KEY ("providerId","assertionId")
);

CREATE INDEX "SamlAssertionUse_expiresAt_idx" ON "SamlAssertionUse"("expiresAt");

ALTER TABLE "SamlAssertionUse" ADD CONSTRAINT "SamlAssertionUse_providerId_fkey" FOREIGN KEY ("providerId") REFERENCES "IdentityProvider"("id") ON DELETE CASCADE ON UPDATE CASCADE;
