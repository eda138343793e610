-- Admin search of users (`q=`, a substring of the email, the given or the family name) read every
-- user of the organization, twice per request (the count and the page): 1.1–1.6 s p95 at 100,000
-- users. Trigram indexes answer each half of the search as Prisma writes it: `"email"::text LIKE
-- '%q%'` (emails are stored lower-case, so the service lower-cases q; citext is binary-coercible
-- to text, so the column takes the text operator class as it is) and `"givenName" ILIKE '%q%'`,
-- `"familyName" ILIKE '%q%'`; the planner ORs the three bitmaps. Queries shorter than three
-- characters have no trigram and still read every row (as for organizations, decision 030).
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX "User_email_idx" ON "User" USING GIN ("email" gin_trgm_ops);
CREATE INDEX "User_givenName_idx" ON "User" USING GIN ("givenName" gin_trgm_ops);
CREATE INDEX "User_familyName_idx" ON "User" USING GIN ("familyName" gin_trgm_ops);
-- Statistics on "email"::text (the expression the search filters on), so that the planner
-- estimates a selective search as selective and takes the indexes (see the organizations' index).
CREATE STATISTICS "User_email_text_stats" ON (("email"::text)) FROM "User";
