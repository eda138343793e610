-- PostgreSQL is the one store that must answer (decision 023): short-lived artifacts (OIDC
-- sessions, interactions, codes, replay detection, client-credentials records, PAR requests,
-- console sessions, sign-in state) live here with their time to live, and rate-limit counters
-- too. Redis, when configured, only accelerates (the read-through cache). Expired rows are
-- ignored on read and deleted by a sweeper.
CREATE TABLE "EphemeralEntry" (
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "expiresAt" TIMESTAMPTZ(3),

    CONSTRAINT "EphemeralEntry_pkey" PRIMARY KEY ("key")
);
CREATE INDEX "EphemeralEntry_expiresAt_idx" ON "EphemeralEntry"("expiresAt");

CREATE TABLE "EphemeralSetMember" (
    "setKey" TEXT NOT NULL,
    "member" TEXT NOT NULL,
    "expiresAt" TIMESTAMPTZ(3),

    CONSTRAINT "EphemeralSetMember_pkey" PRIMARY KEY ("setKey","member")
);
CREATE INDEX "EphemeralSetMember_expiresAt_idx" ON "EphemeralSetMember"("expiresAt");

-- rate-limiter-flexible's RateLimiterPrisma reads and writes this model.
CREATE TABLE "RateLimiterFlexible" (
    "key" TEXT NOT NULL,
    "points" INTEGER NOT NULL,
    "expire" TIMESTAMPTZ(3),

    CONSTRAINT "RateLimiterFlexible_pkey" PRIMARY KEY ("key")
);
CREATE INDEX "RateLimiterFlexible_expire_idx" ON "RateLimiterFlexible"("expire");
