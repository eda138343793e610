-- GitHub as an upstream identity provider (issue 22, decision 055): OAuth 2.0 without OpenID
-- Connect, so its endpoints are stored with the provider (the preset fills github.com's;
-- GitHub Enterprise Server has its own).
ALTER TABLE "IdentityProvider" DROP CONSTRAINT "IdentityProvider_kind_check";
ALTER TABLE "IdentityProvider" ADD CONSTRAINT "IdentityProvider_kind_check" CHECK ("kind" IN ('oidc', 'google', 'microsoft', 'github'));
ALTER TABLE "IdentityProvider" ADD COLUMN "endpoints" JSONB;
