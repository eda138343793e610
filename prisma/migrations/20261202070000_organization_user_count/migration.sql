-- The Admin API's user list answers with the organization's number of users (`total`); counting
-- them per request read a million index entries at a million users (~150 ms). The number is kept
-- here instead, by triggers on "User", so that every writer (the Admin API, imports, registration,
-- federation, invitations, raw SQL) keeps it exact in its own transaction, and a rolled-back
-- insert takes its increment with it.
CREATE TABLE "OrganizationUserCount" (
    "organizationId" UUID NOT NULL,
    "users" INTEGER NOT NULL DEFAULT 0,
    CONSTRAINT "OrganizationUserCount_pkey" PRIMARY KEY ("organizationId")
);
ALTER TABLE "OrganizationUserCount" ADD CONSTRAINT "OrganizationUserCount_organizationId_fkey"
    FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

INSERT INTO "OrganizationUserCount" ("organizationId", "users")
SELECT "organizationId", count(*) FROM "User" GROUP BY "organizationId";

-- Statement-level with transition tables: a set-based insert or delete (an import, an
-- organization's purge) adds its rows per organization once, not once per row.
CREATE FUNCTION "organization_user_count_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "OrganizationUserCount" AS c ("organizationId", "users")
  SELECT "organizationId", count(*) FROM "new_users" GROUP BY "organizationId"
  ON CONFLICT ("organizationId") DO UPDATE SET "users" = c."users" + EXCLUDED."users";
  RETURN NULL;
END $$;

CREATE FUNCTION "organization_user_count_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- An organization being deleted has already lost its row (or loses it in the same cascade):
  -- updating nothing is then right.
  UPDATE "OrganizationUserCount" AS c SET "users" = c."users" - d."users"
    FROM (SELECT "organizationId", count(*) AS "users" FROM "old_users" GROUP BY "organizationId") AS d
   WHERE c."organizationId" = d."organizationId";
  RETURN NULL;
END $$;

-- A user moved to another organization (no code path does it today, SQL might): one row, and
-- only when the column is written and changes, so that sign-ins' updates of "User" pay nothing.
CREATE FUNCTION "organization_user_count_move"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "OrganizationUserCount" SET "users" = "users" - 1 WHERE "organizationId" = OLD."organizationId";
  INSERT INTO "OrganizationUserCount" AS c ("organizationId", "users") VALUES (NEW."organizationId", 1)
  ON CONFLICT ("organizationId") DO UPDATE SET "users" = c."users" + 1;
  RETURN NULL;
END $$;

CREATE TRIGGER "User_count_insert" AFTER INSERT ON "User"
  REFERENCING NEW TABLE AS "new_users" FOR EACH STATEMENT EXECUTE FUNCTION "organization_user_count_insert"();
CREATE TRIGGER "User_count_delete" AFTER DELETE ON "User"
  REFERENCING OLD TABLE AS "old_users" FOR EACH STATEMENT EXECUTE FUNCTION "organization_user_count_delete"();
CREATE TRIGGER "User_count_move" AFTER UPDATE OF "organizationId" ON "User"
  FOR EACH ROW WHEN (OLD."organizationId" IS DISTINCT FROM NEW."organizationId") EXECUTE FUNCTION "organization_user_count_move"();
