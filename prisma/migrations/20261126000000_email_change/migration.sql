-- A person changes their own email address on the account page (issue 19 §2): the new address
-- is confirmed by a single-use link before it replaces the old one.
CREATE TABLE "EmailChangeToken" (
    "id" UUID NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "jobId" TEXT NOT NULL,
    "organizationId" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "newEmail" CITEXT NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "consumedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "EmailChangeToken_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "EmailChangeToken_tokenHash_key" ON "EmailChangeToken"("tokenHash");
CREATE UNIQUE INDEX "EmailChangeToken_jobId_key" ON "EmailChangeToken"("jobId");
CREATE INDEX "EmailChangeToken_userId_idx" ON "EmailChangeToken"("userId");
ALTER TABLE "EmailChangeToken" ADD CONSTRAINT "EmailChangeToken_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "EmailChangeToken" ADD CONSTRAINT "EmailChangeToken_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
