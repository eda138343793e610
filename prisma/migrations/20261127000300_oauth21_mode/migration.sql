-- OAuth 2.1 mode per organization (issue 24 §3, decision 052): PKCE for every client. Existing
-- organizations keep their behaviour (false); the Admin API turns it on for new ones.
ALTER TABLE "Organization" ADD COLUMN "oauth21" BOOLEAN NOT NULL DEFAULT false;
