/**
 * What the provider fetches itself: a client's `jwks_uri` (issue 24 §2). oidc-provider already
 * refuses special-use addresses (loopback, private, link-local; checked on the connected socket,
 * so DNS rebinding cannot slip through) and gives up after 2.5 s; Porta adds a size limit and,
 * only when an operator allows it (OUTBOUND_ALLOW_PRIVATE_NETWORKS, for tests and closed
 * networks), lets requests reach private addresses.
 */
export const JWKS_URI_MAX_BYTES = 64 * 1024;

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export function outboundFetch(allowPrivateNetworks: boolean): Fetch {
  return (input, init = {}) => {
    // A key set that redirects elsewhere is refused, not followed to wherever it points.
    if (!allowPrivateNetworks) return globalThis.fetch(input, { ...init, redirect: "error" });
    // The provider's guard is its dispatcher; without it, undici's default one connects anywhere.
    const { dispatcher: _guard, ...rest } = init as RequestInit & { dispatcher?: unknown };
    return globalThis.fetch(input, { ...rest, redirect: "error" });
  };
}
