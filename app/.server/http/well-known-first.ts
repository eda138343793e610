import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import { SLUG_PATTERN_ANY_CASE } from "~/schemas/slug";
import type { DocumentDirectory } from "../oidc/edge/document-directory";
import type { ProviderRegistry, TenantProvider } from "../oidc/provider/registry";
import { getReadyWellKnown, type WellKnownDocument, type WellKnownPath } from "../oidc/edge/well-known";
import { requestIdFrom } from "./request-id";
import { staticSecurityHeaders } from "./security-headers";

type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface WellKnownFirstOptions {
  registry: Pick<ProviderRegistry, "peek">;
  /** The documents of organizations whose provider is not in the pool (decision 062). */
  directory: Pick<DocumentDirectory, "get" | "fetch">;
  baseUrl: string;
  mode: "production" | "development";
  logger: Logger;
}

/** Exactly /{slug}/.well-known/openid-configuration or /jwks: no query, no trailing slash, no encoding. */
const WELL_KNOWN_URL = /^\/([^/]+)(\/\.well-known\/(?:openid-configuration|jwks))$/;

/**
 * RFC 8414 authorization server metadata, which MCP clients look for before anything else: the
 * path-inserted form of §3.1 (/.well-known/oauth-authorization-server/{slug}) and the form below
 * the issuer. Group 1 or 2 is the slug, group 3 whatever follows the address (a query, a slash).
 */
const METADATA_URL = /^(?:\/\.well-known\/oauth-authorization-server\/([^/?]+)|\/([^/?]+)\/\.well-known\/oauth-authorization-server)((?:[/?].*)?)$/;

/**
 * The discovery address an RFC 8414 metadata request stands for, or null. The metadata is the
 * discovery document itself (RFC 8414 §2 lets it carry OpenID's members; its `issuer` is the
 * organization's), so the request is answered as that one in every respect: this fast path,
 * and for a query, a trailing slash, another method or an unknown organization, the provider's
 * own path, with the same status.
 */
export function discoveryUrlOf(url: string): string | null {
  // Every request passes here: a plain substring test keeps the regular expression off the rest.
  if (!url.includes("/.well-known/oauth-authorization-server")) return null;
  const match = METADATA_URL.exec(url);
  if (!match) return null;
  const slug = (match[1] ?? match[2])!;
  return SLUG_PATTERN_ANY_CASE.test(slug) ? `/${slug}/.well-known/openid-configuration${match[3]!}` : null;
}

/** RFC 9110 §13.1.2: weak comparison; "*" matches any current representation. */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === "*") return true;
  return header.split(",").some((tag) => {
    const trimmed = tag.trim();
    return (trimmed.startsWith("W/") ? trimmed.slice(2) : trimmed) === etag;
  });
}

/**
 * Answers discovery and JWKS of an active organization from documents computed once per
 * provider (oidc/edge/well-known.ts), or from the directory of every organization's documents
 * (oidc/edge/document-directory.ts), before Express, Helmet and the provider run: these are the
 * most frequent requests a relying party makes, and each used to cost a pass through all three.
 * What the fast path answers is byte for byte what the provider answers, with the same
 * Cache-Control, CORS and security headers (without the per-request CSP nonce: no script runs
 * in JSON), plus a strong ETag and 304. Everything else (other paths and methods, a query
 * string, unknown or inactive organizations, a database that does not answer) is handed to
 * `next`, the Express app, unchanged.
 *
 * Each request still gets an X-Request-Id and one access-log line, as http/request-id.ts writes.
 */
export function wellKnownFirst(options: WellKnownFirstOptions, next: NodeHandler): NodeHandler {
  const { registry, directory, logger } = options;
  const security = staticSecurityHeaders(options.baseUrl, options.mode).flat();
  const fixedHeaders = new WeakMap<WellKnownDocument, { ok: string[]; notModified: string[] }>();

  function headersOf(document: WellKnownDocument) {
    let headers = fixedHeaders.get(document);
    if (!headers) {
      const cache = ["Cache-Control", document.cacheControl, "ETag", document.etag, "Vary", "Origin"];
      headers = {
        ok: [...security, ...cache, "Content-Type", document.contentType, "Content-Length", String(document.byteLength)],
        notModified: [...security, ...cache],
      };
      fixedHeaders.set(document, headers);
    }
    return headers;
  }

  function send(req: IncomingMessage, res: ServerResponse, document: WellKnownDocument, started: bigint, asked: string | undefined) {
    const requestId = requestIdFrom(req.headers["x-request-id"]);
    const fixed = headersOf(document);
    // As oidc-provider's CORS for open endpoints: the caller's origin, or any.
    const perRequest = ["Access-Control-Allow-Origin", req.headers.origin || "*", "X-Request-Id", requestId];
    if (noneMatch(req.headers["if-none-match"], document.etag)) {
      res.writeHead(304, [...fixed.notModified, ...perRequest]).end();
    } else {
      res.writeHead(200, [...fixed.ok, ...perRequest]);
      if (req.method === "HEAD") res.end();
      else res.end(document.body);
    }
    if (logger.isLevelEnabled("info")) {
      logger.info(
        { requestId, method: req.method, path: asked, status: res.statusCode, durationMs: Number((process.hrtime.bigint() - started) / 1_000n) / 1000 },
        "request",
      );
    }
  }

  function documentOf(tenant: TenantProvider | undefined, path: WellKnownPath) {
    return tenant && getReadyWellKnown(tenant)?.[path];
  }

  return (req, res) => {
    // The address as asked, for the access line: an RFC 8414 request is answered as discovery.
    const asked = req.url;
    const discovery = asked === undefined ? null : discoveryUrlOf(asked);
    if (discovery !== null) req.url = discovery;
    const match = req.method === "GET" || req.method === "HEAD" ? WELL_KNOWN_URL.exec(req.url ?? "") : null;
    if (!match || !SLUG_PATTERN_ANY_CASE.test(match[1]!)) return next(req, res);
    const slug = match[1]!;
    const path = match[2] as WellKnownPath;
    const started = process.hrtime.bigint();
    // A provider in the pool answers with its own documents (a replaced one brings new ones).
    const pooled = registry.peek(slug);
    const ready = pooled ? documentOf(pooled, path) : directory.get(slug, path);
    if (ready) {
      try {
        return send(req, res, ready, started, asked);
      } catch (error) {
        // Nothing a client sends should get here (Node's parser admits only header values that
        // can be echoed); if it does, the Express path answers rather than the process failing.
        logger.error({ err: error }, "the well-known fast path failed; Express answers");
        if (!res.headersSent) return next(req, res);
        return res.destroy();
      }
    }
    // First request for this provider: build it (or wait for it) and its documents. An unknown
    // or inactive organization, or any failure, is the Express path's to answer, as before.
    directory
      .fetch(slug, path, pooled !== undefined)
      .then(
        (document) => (document ? send(req, res, document, started, asked) : next(req, res)),
        () => next(req, res),
      )
      .catch((error: unknown) => {
        logger.error({ err: error }, "unhandled error");
        if (!res.headersSent) res.writeHead(500).end();
      });
  };
}
