import type { IncomingMessage, ServerResponse } from "node:http";

/** RFC 9728 §3: the well-known suffix of protected resource metadata. */
export const PROTECTED_RESOURCE_WELL_KNOWN = "/.well-known/oauth-protected-resource";

/**
 * The path of a resource's metadata on its own host (RFC 9728 §3.1): the well-known suffix
 * inserted between the host and the resource's path, the query kept, a lone "/" dropped.
 * `http://localhost:3961/mcp` → `/.well-known/oauth-protected-resource/mcp`.
 */
export function protectedResourceMetadataPath(resource: string | URL): string {
  const url = new URL(resource);
  const path = url.pathname === "/" ? "" : url.pathname;
  return `${PROTECTED_RESOURCE_WELL_KNOWN}${path}${url.search}`;
}

/** The absolute URL of a resource's metadata: what `resource_metadata` in a 401's challenge names. */
export function protectedResourceMetadataUrl(resource: string | URL): string {
  return new URL(protectedResourceMetadataPath(resource), new URL(resource).origin).href;
}

export interface ProtectedResourceMetadataOptions {
  /** The resource identifier, exactly as registered in Porta. */
  resource: string;
  /** The organization's issuer (the one authorization server). */
  issuer: string;
  /** The scopes the resource defines, as registered in Porta. */
  scopesSupported?: readonly string[];
  /** A name people read, e.g. on a consent page. */
  resourceName?: string;
  /** Where a developer reads about the resource. */
  resourceDocumentation?: string;
}

export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported?: string[];
  bearer_methods_supported: ["header"];
  resource_name?: string;
  resource_documentation?: string;
}

/** The RFC 9728 document: the token goes in the Authorization header only (this package reads nothing else). */
export function protectedResourceMetadata(options: ProtectedResourceMetadataOptions): ProtectedResourceMetadata {
  return {
    resource: options.resource,
    authorization_servers: [options.issuer],
    ...(options.scopesSupported ? { scopes_supported: [...options.scopesSupported] } : {}),
    bearer_methods_supported: ["header"],
    ...(options.resourceName ? { resource_name: options.resourceName } : {}),
    ...(options.resourceDocumentation ? { resource_documentation: options.resourceDocumentation } : {}),
  };
}

export type NextFunction = (error?: unknown) => void;

/**
 * Serves the metadata at its RFC 9728 path (GET and HEAD, readable from any origin, like the
 * issuer's own discovery document) and hands every other request to `next`; without a `next`
 * (plain node:http), answers them 404. Mount it before the bearer middleware.
 */
export function protectedResourceMetadataHandler(options: ProtectedResourceMetadataOptions) {
  const path = protectedResourceMetadataPath(options.resource);
  const body = JSON.stringify(protectedResourceMetadata(options));
  return (req: IncomingMessage, res: ServerResponse, next?: NextFunction): void => {
    // Express hands a mounted middleware a shortened req.url; originalUrl is the address asked.
    const asked = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? "/";
    if (asked !== path) {
      if (next) return next();
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("Not Found");
      return;
    }
    if (req.method === "OPTIONS") {
      res.writeHead(204, { "access-control-allow-origin": "*", "access-control-allow-methods": "GET, HEAD", "access-control-allow-headers": "mcp-protocol-version" }).end();
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD, OPTIONS" }).end();
      return;
    }
    res.writeHead(200, {
      "content-type": "application/json; charset=utf-8",
      "content-length": Buffer.byteLength(body),
      "cache-control": "public, max-age=300",
      "access-control-allow-origin": "*",
    });
    res.end(req.method === "HEAD" ? undefined : body);
  };
}
