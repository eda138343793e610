-- SAML connections (decision 081) are identity providers of kind "saml": the kind check allows it.
ALTER TABLE "IdentityProvider" DROP CONSTRAINT "IdentityProvider_kind_check";
ALTER TABLE "IdentityProvider" ADD CONSTRAINT "IdentityProvider_kind_check" CHECK ("kind" IN ('oidc', 'google', 'microsoft', 'github', 'apple', 'saml'));
