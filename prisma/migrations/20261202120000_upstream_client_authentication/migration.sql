-- How Porta authenticates at an upstream OpenID provider's token endpoint (decision 082): a
-- chosen method (null: chosen from the upstream's discovery) and, for private_key_jwt, the
-- connection's own ES256 key, encrypted like the client secret.
ALTER TABLE "IdentityProvider" ADD COLUMN "tokenEndpointAuthMethod" TEXT;
ALTER TABLE "IdentityProvider" ADD COLUMN "clientKeyEncrypted" TEXT;
