-- Wrong codes in a row per user and second factor, across rate-limit windows (NIST SP 800-63B
-- §5.2.2, decision 067): the per-window limits alone let someone who has the password guess a
-- six-digit code window after window. A right code of the factor deletes its row; at the
-- configured limit (at most 100) the factor is refused until the person signs in with a
-- recovery code or a passkey, or an administrator clears it.
CREATE TABLE "SecondFactorFailureCount" (
    "userId" UUID NOT NULL,
    "factor" TEXT NOT NULL,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "lastFailedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "SecondFactorFailureCount_pkey" PRIMARY KEY ("userId", "factor"),
    CONSTRAINT "SecondFactorFailureCount_factor_check" CHECK ("factor" IN ('totp', 'email'))
);
ALTER TABLE "SecondFactorFailureCount" ADD CONSTRAINT "SecondFactorFailureCount_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
