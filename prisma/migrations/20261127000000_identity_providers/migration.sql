-- Sign in with another identity provider (issue 22, decision 046): a fourth primary login method
-- `federated`, the organization's upstream providers and the users' links to them.
ALTER TABLE "Organization" DROP CONSTRAINT "Organization_defaultLoginMethods_check";
ALTER TABLE "Organization" ADD CONSTRAINT "Organization_defaultLoginMethods_check" CHECK (cardinality("defaultLoginMethods") > 0 AND "defaultLoginMethods" <@ ARRAY['password', 'magic_link', 'passkey', 'federated']::TEXT[]);
ALTER TABLE "Client" DROP CONSTRAINT "Client_loginMethods_check";
ALTER TABLE "Client" ADD CONSTRAINT "Client_loginMethods_check" CHECK ("loginMethods" <@ ARRAY['password', 'magic_link', 'passkey', 'federated']::TEXT[]);

CREATE TABLE "IdentityProvider" (
    "id" UUID NOT NULL,
    "organizationId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL DEFAULT 'oidc',
    "issuer" TEXT NOT NULL,
    "clientId" TEXT NOT NULL,
    "clientSecretEncrypted" TEXT,
    "scopes" TEXT[] NOT NULL DEFAULT ARRAY['openid', 'email', 'profile']::TEXT[],
    "claimMapping" JSONB NOT NULL DEFAULT '{}',
    "domains" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "createAccounts" BOOLEAN NOT NULL DEFAULT false,
    "trustUpstreamMfa" TEXT NOT NULL DEFAULT 'when_asserted',
    "version" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "IdentityProvider_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "IdentityProvider_kind_check" CHECK ("kind" IN ('oidc', 'google', 'microsoft')),
    CONSTRAINT "IdentityProvider_trustUpstreamMfa_check" CHECK ("trustUpstreamMfa" IN ('when_asserted', 'always', 'never'))
);
CREATE UNIQUE INDEX "IdentityProvider_organizationId_name_key" ON "IdentityProvider"("organizationId", "name");
CREATE INDEX "IdentityProvider_organizationId_idx" ON "IdentityProvider"("organizationId");
ALTER TABLE "IdentityProvider" ADD CONSTRAINT "IdentityProvider_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "FederatedIdentity" (
    "id" UUID NOT NULL,
    "organizationId" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "providerId" UUID NOT NULL,
    "subject" TEXT NOT NULL,
    "email" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastUsedAt" TIMESTAMPTZ(3),
    CONSTRAINT "FederatedIdentity_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "FederatedIdentity_providerId_subject_key" ON "FederatedIdentity"("providerId", "subject");
CREATE INDEX "FederatedIdentity_userId_idx" ON "FederatedIdentity"("userId");
ALTER TABLE "FederatedIdentity" ADD CONSTRAINT "FederatedIdentity_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "FederatedIdentity" ADD CONSTRAINT "FederatedIdentity_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "FederatedIdentity" ADD CONSTRAINT "FederatedIdentity_providerId_fkey" FOREIGN KEY ("providerId") REFERENCES "IdentityProvider"("id") ON DELETE CASCADE ON UPDATE CASCADE;
