-- Passkeys (issue 21, decision 041): a third primary login method, a fourth second factor, and
-- the public part of each user's WebAuthn credentials.
ALTER TABLE "Organization" DROP CONSTRAINT "Organization_defaultLoginMethods_check";
ALTER TABLE "Organization" ADD CONSTRAINT "Organization_defaultLoginMethods_check" CHECK (cardinality("defaultLoginMethods") > 0 AND "defaultLoginMethods" <@ ARRAY['password', 'magic_link', 'passkey']::TEXT[]);
ALTER TABLE "Client" DROP CONSTRAINT "Client_loginMethods_check";
ALTER TABLE "Client" ADD CONSTRAINT "Client_loginMethods_check" CHECK ("loginMethods" <@ ARRAY['password', 'magic_link', 'passkey']::TEXT[]);
ALTER TABLE "Organization" DROP CONSTRAINT "Organization_twoFactorPolicy_check";
ALTER TABLE "Organization" ADD CONSTRAINT "Organization_twoFactorPolicy_check" CHECK ("twoFactorPolicy" IN ('optional', 'required_email', 'required_totp', 'required_passkey', 'required_any'));

CREATE TABLE "Passkey" (
    "id" UUID NOT NULL,
    "organizationId" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "credentialId" TEXT NOT NULL,
    "userHandle" TEXT NOT NULL,
    "publicKey" BYTEA NOT NULL,
    "counter" BIGINT NOT NULL DEFAULT 0,
    "transports" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "deviceType" TEXT NOT NULL,
    "backedUp" BOOLEAN NOT NULL DEFAULT false,
    "aaguid" TEXT,
    "name" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastUsedAt" TIMESTAMPTZ(3),
    CONSTRAINT "Passkey_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "Passkey_deviceType_check" CHECK ("deviceType" IN ('singleDevice', 'multiDevice'))
);
CREATE UNIQUE INDEX "Passkey_organizationId_credentialId_key" ON "Passkey"("organizationId", "credentialId");
CREATE INDEX "Passkey_userId_idx" ON "Passkey"("userId");
ALTER TABLE "Passkey" ADD CONSTRAINT "Passkey_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Passkey" ADD CONSTRAINT "Passkey_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
