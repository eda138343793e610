-- Per-client PKCE (decision 073): 'inherit' follows the organization's OAuth 2.1 mode,
-- 'required' always asks for PKCE, 'not_required' lets a confidential client skip it (public
-- clients always need it; the Admin API refuses the combination, the provider ignores it).
ALTER TABLE "Client" ADD COLUMN "pkce" TEXT NOT NULL DEFAULT 'inherit';
ALTER TABLE "Client" ADD CONSTRAINT "Client_pkce_check" CHECK ("pkce" IN ('inherit', 'required', 'not_required'));
