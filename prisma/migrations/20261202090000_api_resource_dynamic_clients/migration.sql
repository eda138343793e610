-- An API resource may be open to clients that registered themselves at the organization's
-- registration endpoint (RFC 7591), as MCP clients do: they have no grant an administrator could
-- have made beforehand. Off by default; the Admin API accepts it only with consentRequired.
ALTER TABLE "ApiResource" ADD COLUMN "openToDynamicClients" BOOLEAN NOT NULL DEFAULT false;
