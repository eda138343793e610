import type { IncomingHttpHeaders } from "node:http";
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
  const toPublic = rewriteToPublicOrigin(baseUrl);
  const base = new URL(baseUrl);
  return (req, res, next) => {
    // Kept only to recognise a same-origin form post from a browser on another host name (edge-guard.ts).
    res.locals.requestHost = req.headers.host;
    toPublic(req.headers, req.ip);
    // Express would still take the scheme from the socket when the peer is no trusted proxy.
    Object.defineProperty(req, "protocol", { value: base.protocol.slice(0, -1), configurable: true });
    Object.defineProperty(req, "hostname", { value: base.hostname, configurable: true });
    next();
  };
}

/** The header rewrite itself, for the lane before Express too (http/protocol-first.ts). */
export function rewriteToPublicOrigin(baseUrl: string): (headers: IncomingHttpHeaders, ip: string | undefined) => void {
  const base = new URL(baseUrl);
  const proto = base.protocol.slice(0, -1);
  return (headers, ip) => {
    headers.host = base.host;
    headers["x-forwarded-host"] = base.host;
    headers["x-forwarded-proto"] = proto;
    delete headers["x-forwarded-port"];
    delete headers.forwarded;
    if (ip) headers["x-forwarded-for"] = ip;
    else delete headers["x-forwarded-for"];
  };
}
