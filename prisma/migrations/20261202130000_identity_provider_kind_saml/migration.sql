-- SAML connections are identity providers of kind "saml" (decision 081): the kind's check admits it.
ALTER TABLE "IdentityProvider" DROP CONSTRAINT "IdentityProvider_kind_check";
ALTER TABLE "IdentityProvider" ADD CONSTRAINT "IdentityProvider_kind_check" CHECK ("kind" IN ('oidc', 'google', 'microsoft', 'github', 'apple', 'saml'));
