-- Who this database is (decision 070): one row, made with the schema. The shared cache's keys
-- carry the id and the cache epoch, which every start of Porta replaces, so that entries another
-- database wrote into the same Redis, or entries written after the backup this database was
-- restored from, are never read.
CREATE TABLE "Installation" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "cacheEpoch" UUID NOT NULL DEFAULT gen_random_uuid(),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Installation_pkey" PRIMARY KEY ("id")
);
INSERT INTO "Installation" DEFAULT VALUES;
