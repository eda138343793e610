-- GitHub and Apple as upstream identity providers (issue 22, decision 055). GitHub speaks
-- OAuth 2.0 without OpenID Connect, so its endpoints are stored with the provider (the preset
-- fills github.com's; GitHub Enterprise Server has its own). Apple's client secret is a JWT
-- signed with a private key (kept encrypted like any client secret) under a team and key id.
ALTER TABLE "IdentityProvider" DROP CONSTRAINT "IdentityProvider_kind_check";
ALTER TABLE "IdentityProvider" ADD CONSTRAINT "IdentityProvider_kind_check" CHECK ("kind" IN ('oidc', 'google', 'microsoft', 'github', 'apple'));
ALTER TABLE "IdentityProvider" ADD COLUMN "endpoints" JSONB;
ALTER TABLE "IdentityProvider" ADD COLUMN "teamId" TEXT;
ALTER TABLE "IdentityProvider" ADD COLUMN "keyId" TEXT;
