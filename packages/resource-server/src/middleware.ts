import type { IncomingMessage, ServerResponse } from "node:http";
import type { AuthInfo } from "./auth-info.js";
import { BearerError, IssuerUnavailableError } from "./errors.js";
import type { NextFunction } from "./metadata.js";
import { protectedResourceMetadataUrl } from "./metadata.js";
import type { Verifier } from "./verify.js";

export interface BearerAuthOptions {
  verifier: Verifier;
  /** Scopes every request must carry; a token without one of them is answered 403 `insufficient_scope`. */
  requiredScopes?: readonly string[];
  /** The RFC 9728 metadata URL named in every challenge. Default: the resource's own (path-inserted). */
  resourceMetadataUrl?: string;
}

/** The request after the middleware let it through. */
export type AuthenticatedRequest = IncomingMessage & { auth: AuthInfo };

/** A quoted-string of RFC 9110 §5.6.4. */
const quoted = (value: string) => `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

/** The RFC 6750 §3 challenge, with RFC 9728 §5.1's resource_metadata. */
export function bearerChallenge(parameters: { resourceMetadata: string; scope?: readonly string[]; error?: BearerError }): string {
  const parts = [`resource_metadata=${quoted(parameters.resourceMetadata)}`];
  if (parameters.scope && parameters.scope.length > 0) parts.push(`scope=${quoted(parameters.scope.join(" "))}`);
  if (parameters.error) parts.push(`error=${quoted(parameters.error.code)}`, `error_description=${quoted(parameters.error.message)}`);
  return `Bearer ${parts.join(", ")}`;
}

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The token of an `Authorization: Bearer` header; null without one; a BearerError for a malformed one. */
export function bearerTokenOf(header: string | undefined): string | null {
  if (header === undefined || !/^Bearer(?: |$)/i.test(header)) return null;
  const match = BEARER.exec(header);
  if (!match) throw new BearerError("invalid_request", "the Authorization header is not a well-formed bearer token");
  return match[1]!;
}

/**
 * Express or node:http middleware: a request with a valid token for the verifier's resource and
 * the required scopes goes on with `req.auth` set; any other is answered here.
 *   401 without a bearer token (a challenge without `error`, RFC 6750 §3.1), or with an invalid,
 *       expired or other resource's token (`invalid_token`);
 *   400 a malformed Authorization header (`invalid_request`);
 *   403 a valid token without a required scope (`insufficient_scope`, naming the scopes needed);
 *   503 the issuer's keys could not be read (the token is not at fault).
 * Every 401 and 403 names the resource's metadata, where an MCP client finds the issuer.
 */
export function requireBearerAuth(options: BearerAuthOptions) {
  const { verifier } = options;
  const requiredScopes = options.requiredScopes ?? [];
  const resourceMetadata = options.resourceMetadataUrl ?? protectedResourceMetadataUrl(verifier.resource);

  function refuse(res: ServerResponse, status: number, error?: BearerError) {
    const challenge = bearerChallenge({ resourceMetadata, scope: requiredScopes, error });
    const body = error ? JSON.stringify({ error: error.code, error_description: error.message }) : JSON.stringify({ error: "unauthorized", error_description: "a bearer token is required" });
    res.writeHead(status, { "www-authenticate": challenge, "content-type": "application/json; charset=utf-8", "cache-control": "no-store" }).end(body);
  }

  return (req: IncomingMessage & { auth?: AuthInfo }, res: ServerResponse, next: NextFunction): void => {
    let token: string | null;
    try {
      token = bearerTokenOf(req.headers.authorization);
    } catch (error) {
      return refuse(res, 400, error as BearerError);
    }
    if (token === null) return refuse(res, 401);
    verifier.verify(token, requiredScopes).then(
      (auth) => {
        req.auth = auth;
        next();
      },
      (error: unknown) => {
        if (error instanceof BearerError) return refuse(res, error.status, error);
        if (error instanceof IssuerUnavailableError) {
          res.writeHead(503, { "retry-after": "5", "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
          res.end(JSON.stringify({ error: "temporarily_unavailable", error_description: error.message }));
          return;
        }
        next(error);
      },
    );
  };
}
