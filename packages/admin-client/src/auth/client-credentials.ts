import type { AuthProvider } from "./provider.js";
import { requestToken, tokenEndpointOf } from "./token-endpoint.js";

export interface ClientCredentialsOptions {
  /** The token endpoint, `{issuer}/token` or `{issuer}/auth/token`; or give `issuer`. */
  tokenEndpoint?: string;
  issuer?: string;
  clientId: string;
  clientSecret: string;
  scope?: string;
  /** Obtain a new token this many seconds before the cached one expires (default 30). */
  refreshSkewSeconds?: number;
  fetch?: typeof fetch;
}

/**
 * The OAuth client-credentials grant (client_secret_basic). The token is cached until shortly
 * before it expires; concurrent calls share one token request.
 */
export function clientCredentials(options: ClientCredentialsOptions): AuthProvider {
  const endpoint = options.tokenEndpoint ?? (options.issuer ? tokenEndpointOf(options.issuer) : undefined);
  if (!endpoint) throw new TypeError("clientCredentials needs tokenEndpoint or issuer");
  const skewMs = (options.refreshSkewSeconds ?? 30) * 1000;
  let cached: { token: string; expiresAt: number } | undefined;
  let pending: Promise<string> | undefined;

  async function obtain(signal?: AbortSignal): Promise<string> {
    const token = await requestToken(
      endpoint!,
      { grant_type: "client_credentials", ...(options.scope ? { scope: options.scope } : {}) },
      { basicAuth: { clientId: options.clientId, clientSecret: options.clientSecret }, signal, ...(options.fetch ? { fetch: options.fetch } : {}) },
    );
    cached = { token: token.access_token, expiresAt: Date.now() + (token.expires_in ?? 300) * 1000 };
    return token.access_token;
  }

  return {
    async getToken(signal) {
      if (cached && Date.now() < cached.expiresAt - skewMs) return cached.token;
      pending ??= obtain(signal).finally(() => {
        pending = undefined;
      });
      return pending;
    },
    invalidate() {
      cached = undefined;
      return true;
    },
  };
}
