-- What operators set per client beyond redirect URIs (issue 20, decision 036): browser origins
-- allowed to call the token endpoints, consent skipped for first-party clients, and token
-- lifetimes that override the organization's (NULL: the default applies).
ALTER TABLE "Client" ADD COLUMN "allowedCorsOrigins" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];
ALTER TABLE "Client" ADD COLUMN "skipConsent" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "Client" ADD COLUMN "accessTokenTtlSeconds" INTEGER;
ALTER TABLE "Client" ADD COLUMN "refreshTokenTtlSeconds" INTEGER;
