-- Two-factor authentication: TOTP, recovery codes, email one-time codes.
ALTER TABLE "User" ADD COLUMN "emailOtpEnabled" BOOLEAN NOT NULL DEFAULT false;

CREATE TABLE "TotpCredential" (
    "userId" UUID NOT NULL,
    "secretEncrypted" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "lastUsedStep" BIGINT NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "enrolledAt" TIMESTAMPTZ(3),
    CONSTRAINT "TotpCredential_pkey" PRIMARY KEY ("userId"),
    CONSTRAINT "TotpCredential_status_check" CHECK ("status" IN ('pending', 'enrolled'))
);

CREATE TABLE "RecoveryCode" (
    "id" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "codeHash" TEXT NOT NULL,
    "usedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "RecoveryCode_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "RecoveryCode_userId_idx" ON "RecoveryCode"("userId");

CREATE TABLE "EmailOtpCode" (
    "id" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "codeHash" TEXT NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "usedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "EmailOtpCode_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "EmailOtpCode_userId_createdAt_idx" ON "EmailOtpCode"("userId", "createdAt");

ALTER TABLE "TotpCredential" ADD CONSTRAINT "TotpCredential_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "RecoveryCode" ADD CONSTRAINT "RecoveryCode_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "EmailOtpCode" ADD CONSTRAINT "EmailOtpCode_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
