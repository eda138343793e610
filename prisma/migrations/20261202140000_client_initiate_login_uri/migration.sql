-- Where an application starts its own sign-in (OpenID Connect third-party initiated login),
-- where an IdP-initiated SAML sign-in sends the browser (decision 083).
ALTER TABLE "Client" ADD COLUMN "initiateLoginUri" TEXT;
