import type { RequestHandler } from "express";

/**
 * Every URL Porta publishes (discovery, JWKS, redirects, Remix's request URL, cookie security)
 * is built from BASE_URL, never from what a client or proxy claims. Before anything reads them,
 * Host and the forwarding headers are replaced with BASE_URL's values; oidc-provider (which
 * trusts X-Forwarded-* because Porta sets `proxy = true`) and Remix then see the public origin.
 *
 * The client's address is decided once here by Express under TRUST_PROXY, and handed on as
 * the only X-Forwarded-For entry, so every later reader (rate limits, audit, the provider)
 * agrees on it.
 */
export function publicOrigin(baseUrl: string): RequestHandler {
  const base = new URL(baseUrl);
  const proto = base.protocol.slice(0, -1);
  return (req, res, next) => {
    const ip = req.ip;
    // Kept only to recognise a same-origin form post from a browser on another host name (edge-guard.ts).
    res.locals.requestHost = req.headers.host;
    req.headers.host = base.host;
    req.headers["x-forwarded-host"] = base.host;
    req.headers["x-forwarded-proto"] = proto;
    delete req.headers["x-forwarded-port"];
    delete req.headers.forwarded;
    if (ip) req.headers["x-forwarded-for"] = ip;
    else delete req.headers["x-forwarded-for"];
    // Express would still take the scheme from the socket when the peer is no trusted proxy.
    Object.defineProperty(req, "protocol", { value: proto, configurable: true });
    Object.defineProperty(req, "hostname", { value: base.hostname, configurable: true });
    next();
  };
}
