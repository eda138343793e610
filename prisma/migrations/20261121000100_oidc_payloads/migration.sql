-- Long-lived oidc-provider artifacts: AccessToken, RefreshToken, Grant.
CREATE TABLE "OidcPayload" (
    "model" TEXT NOT NULL,
    "idHash" TEXT NOT NULL,
    "organizationId" UUID NOT NULL,
    "payload" JSONB NOT NULL,
    "grantId" TEXT,
    "accountId" TEXT,
    "expiresAt" TIMESTAMPTZ(3),
    "consumedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "OidcPayload_pkey" PRIMARY KEY ("model", "idHash"),
    CONSTRAINT "OidcPayload_model_check" CHECK ("model" IN ('AccessToken', 'RefreshToken', 'Grant'))
);
CREATE INDEX "OidcPayload_grantId_idx" ON "OidcPayload"("grantId");
CREATE INDEX "OidcPayload_organizationId_accountId_idx" ON "OidcPayload"("organizationId", "accountId");
CREATE INDEX "OidcPayload_expiresAt_idx" ON "OidcPayload"("expiresAt");
