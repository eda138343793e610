/**
 * What a verified access token grants, in the shape of the MCP TypeScript SDK's `AuthInfo`
 * (`@modelcontextprotocol/sdk/server/auth/types.js`), so that an MCP server's request handlers
 * find it at `req.auth` as they would with the SDK's own middleware.
 */
export interface AuthInfo {
  /** The access token as presented. Never log it. */
  token: string;
  /** The `client_id` claim: the OAuth client the token was issued to. */
  clientId: string;
  /** The token's scopes (its space-separated `scope` claim). */
  scopes: string[];
  /** Expiry in seconds since the epoch (the `exp` claim). */
  expiresAt?: number;
  /** The resource the token was verified for (one of its audiences). */
  resource?: URL;
  /** The other claims: `sub`, `iss`, `aud`, `jti`, `iat`, and whatever the issuer added. */
  extra?: Record<string, unknown>;
}
