-- Token exchange (RFC 8693, issue 24 §3, decision 053): the audiences a client may exchange an
-- access token for. Empty: the client may not use the grant.
ALTER TABLE "Client" ADD COLUMN "tokenExchangeAudiences" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];
