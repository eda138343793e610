-- A client's public keys (issue 24 §2): inline as a JWK Set, or published at a URI, for
-- private_key_jwt client authentication and signed request objects.
ALTER TABLE "Client" ADD COLUMN "jwks" JSONB;
ALTER TABLE "Client" ADD COLUMN "jwksUri" TEXT;
-- A confidential client may authenticate with a key of its own (private_key_jwt).
ALTER TABLE "Client" DROP CONSTRAINT "Client_tokenEndpointAuthMethod_check";
ALTER TABLE "Client" ADD CONSTRAINT "Client_tokenEndpointAuthMethod_check" CHECK ("tokenEndpointAuthMethod" IN ('none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'));
