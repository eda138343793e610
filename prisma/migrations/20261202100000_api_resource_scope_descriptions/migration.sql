-- What each scope of an API resource lets a client do, in words for people (decision 077):
-- a JSON object from scope token to description; scopes without one are absent.
ALTER TABLE "ApiResource" ADD COLUMN "scopeDescriptions" JSONB NOT NULL DEFAULT '{}';
