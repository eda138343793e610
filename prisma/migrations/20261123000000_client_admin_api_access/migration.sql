-- Clients an operator marks may obtain access tokens for the Admin API (decision 017). Only
-- clients of the super-admin organization can be marked (the Admin API refuses others); the
-- shared admin client `porta-admin` is always one, and bootstrap marks it at every start.
ALTER TABLE "Client" ADD COLUMN "adminApiAccess" BOOLEAN NOT NULL DEFAULT false;
