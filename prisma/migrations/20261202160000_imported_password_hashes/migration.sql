-- Imported password hashes (decision 085): an imported account keeps the algorithm, salt and
-- parameters of its old hash, never the hash; "passwordHash" wraps that algorithm's output. A
-- column without a password to wrap would mean nothing, so it never outlives "passwordHash".
ALTER TABLE "User" ADD COLUMN "legacyPassword" JSONB;
ALTER TABLE "User" ADD CONSTRAINT "User_legacyPassword_check"
  CHECK ("legacyPassword" IS NULL OR ("passwordHash" IS NOT NULL AND jsonb_typeof("legacyPassword") = 'object'));
