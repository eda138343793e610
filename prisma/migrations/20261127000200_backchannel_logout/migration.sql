-- Back-channel logout (issue 24 §3, decision 048): where a client receives logout tokens, and
-- whether it needs each token to name the session (sid).
ALTER TABLE "Client" ADD COLUMN "backchannelLogoutUri" TEXT;
ALTER TABLE "Client" ADD COLUMN "backchannelLogoutSessionRequired" BOOLEAN NOT NULL DEFAULT false;
