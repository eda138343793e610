-- A proof-of-work challenge on an organization's sign-in forms (decision 091): off until an
-- administrator turns it on, with the cost a browser pays to solve one.
ALTER TABLE "Organization" ADD COLUMN "botChallenge" TEXT NOT NULL DEFAULT 'off';
ALTER TABLE "Organization" ADD COLUMN "botChallengeCost" INTEGER NOT NULL DEFAULT 50000;
