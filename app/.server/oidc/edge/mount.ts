import type { JWTPayload } from "jose";
import type { IncomingMessage, ServerResponse } from "node:http";
import express, { type Request, type RequestHandler, type Response } from "express";
import { isDatabaseUnavailable } from "../../db/errors";
import { answerTemporarilyUnavailable } from "./unavailable";
import { SLUG_PATTERN_ANY_CASE } from "~/schemas/slug";
import { findUnrepresentable, UNREPRESENTABLE_MESSAGE } from "~/schemas/text";
import { keptUserAgent } from "./request-device";
import { inRequestScope, type RequestScope } from "../../request-scope";
import type { KeyValueStore } from "../../cache/store";
import { parkPostedRequest, POSTABLE_PATHS, takePostedRequest } from "./posted-requests";
import type { ProviderRegistry, TenantProvider } from "../provider/registry";
import type { RateLimits } from "../../rate-limit/limiters";
import { deviceFlowRefusal } from "../features/device-flow";
import type { CodeEntryChallenges } from "../../sign-in/bot-challenge";
import { publicCacheControlOf } from "./well-known";
import { CLIENT_CORS_PATHS, type PreflightOrigins } from "./preflight";

/**
 * The protocol paths of an organization, relative to /{slug}. Only these reach oidc-provider;
 * every other /{slug}/* path belongs to Remix (a provider mounted on all of /{slug} would answer
 * those with its own 404).
 */
export const PROTOCOL_PATH =
  /^\/(?:\.well-known\/(?:openid-configuration|jwks)|auth\/(?:authorize|token|par)(?:\/[^/]+)?|token(?:\/introspection|\/revocation)?|me|session\/end(?:\/confirm|\/success)?|device(?:\/[^/]+)?)$/;

/**
 * The methods each protocol path takes, as the provider routes them (the first match counts). A
 * request with another method, or to a path below an endpoint that has none, is answered here
 * with the protocol's JSON error: the provider would send a bare "Not Found", or take
 * `GET /device/auth` for the resumption of a device sign-in.
 */
const PATH_METHODS: ReadonlyArray<readonly [RegExp, readonly string[]]> = [
  [/^\/(?:auth\/(?:token|par)|token\/(?:introspection|revocation)|device\/auth)$/, ["POST", "OPTIONS"]],
  [/^\/\.well-known\/(?:openid-configuration|jwks)$/, ["GET", "HEAD", "OPTIONS"]],
  [/^\/me$/, ["GET", "HEAD", "POST", "OPTIONS"]],
  [/^\/(?:auth\/authorize|session\/end|device)$/, ["GET", "HEAD", "POST"]],
  [/^\/session\/end\/confirm$/, ["POST"]],
  [/^\/(?:auth\/authorize\/[^/]+|session\/end\/success|device\/[^/]+)$/, ["GET", "HEAD"]],
];

/** The methods `path` (below /{slug}) takes; empty for a path no endpoint has. */
function methodsOf(path: string): readonly string[] {
  return PATH_METHODS.find(([pattern]) => pattern.test(path))?.[1] ?? [];
}

/** True for a path (below the origin) that oidc-provider serves: /{slug}/<protocol path>. */
export function isProtocolPath(path: string): boolean {
  const match = /^\/([^/]+)(\/.*)$/.exec(path);
  return Boolean(match && SLUG_PATTERN_ANY_CASE.test(match[1]!) && PROTOCOL_PATH.test(match[2]!));
}

const parseForm = express.urlencoded({ extended: false, limit: "56kb" });
const TOKEN_ENDPOINTS = new Set(["/token/introspection", "/token/revocation"]);

/** Stands in for a structured token that is not one of this organization's: no token has this id. */
const UNKNOWN_TOKEN = "porta-unknown-token";

/** A request as the protocol handler reads it: Node's, with the form it parsed and the mount it saw. */
export type ProtocolIncoming = IncomingMessage & { body?: Record<string, unknown>; originalUrl?: string };

/** Where a protocol request was sent, as the caller (Express, or the lane before it) routed it. */
export interface ProtocolTarget {
  slug: string;
  /** Below /{slug}, without the query; one that PROTOCOL_PATH admits. */
  path: string;
  /** The query string without its "?" ("" for none). */
  search: string;
  /** The client's address under TRUST_PROXY. */
  ip: string | undefined;
}

/** Serves one protocol request; rejects only with errors that are not the database's absence. */
export type ProtocolHandler = (req: ProtocolIncoming, res: ServerResponse, target: ProtocolTarget) => Promise<void>;

function sendJson(res: ServerResponse, status: number, body: unknown) {
  res.statusCode = status;
  res.setHeader("Cache-Control", "no-store");
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.end(JSON.stringify(body));
}

/** Why a protocol form was refused before the provider saw it; the provider's own error body. */
class FormRefusal extends Error {
  constructor(
    readonly status: 400 | 413,
    readonly description: string,
  ) {
    super(description);
  }
}

/**
 * Every form posted to a protocol endpoint is parsed here, within the provider's own 56 kB
 * limit (a larger one is 413, not the provider's 500), and refused with 400 invalid_request when
 * a value holds text PostgreSQL cannot store (~/schemas/text). The provider then reads the
 * parsed form (it logs once that it found one).
 */
function parseProtocolForm(req: ProtocolIncoming, res: ServerResponse): Promise<Record<string, unknown> | undefined> {
  return new Promise((resolve, reject) => {
    parseForm(req as Request, res as Response, (error?: unknown) => {
      if (error) {
        const type = (error as { type?: string }).type;
        return reject(
          type === "entity.too.large"
            ? new FormRefusal(413, "The request body is too large.")
            : new FormRefusal(400, "The request body is not a valid form."),
        );
      }
      const body = req.body;
      const bad = body ? findUnrepresentable(body) : undefined;
      if (bad !== undefined) return reject(new FormRefusal(400, `The parameter ${bad.split(".")[0]} ${UNREPRESENTABLE_MESSAGE}.`));
      resolve(body);
    });
  });
}

/**
 * oidc-provider refuses JWTs at introspection and revocation because it never stores them;
 * Porta does (storage/jwt-access-tokens.ts), under their jti. A JWT in the `token` field
 * whose signature verifies for this organization is therefore replaced by its jti before the
 * provider sees the (pre-parsed) form. Any other structured value (another organization's
 * token, a forgery) becomes a value no token has: unknown here, so inactive at introspection
 * (RFC 7662 §2.2) and ignored at revocation (RFC 7009 §2.2), instead of a 400.
 * Porta's opaque tokens never contain a dot.
 */
async function presentJwtsByJti(body: Record<string, unknown> | undefined, tenant: TenantProvider): Promise<JWTPayload | undefined> {
  const token = body?.token;
  if (typeof token !== "string" || !token.includes(".")) return undefined;
  const claims = token.split(".").length === 3 ? await tenant.claimsOfSignedJwt(token) : undefined;
  body!.token = (claims?.jti as string | undefined) ?? UNKNOWN_TOKEN;
  return claims;
}

/**
 * Hands a protocol request to its organization's provider: the form parsed and checked, JWTs
 * presented by their jti, device polling paced (features/device-flow.ts), form posts to authorize/end-session parked, and
 * the provider shown the canonical /{slug} it is mounted at. Node's request and response only,
 * so that Express (protocolRoutes) and the lane before it (http/protocol-first.ts) share it.
 */
export function createProtocolHandler(
  registry: ProviderRegistry,
  store: KeyValueStore,
  limits?: RateLimits,
  preflightOrigins?: PreflightOrigins,
  codeEntryChallenges?: CodeEntryChallenges,
): ProtocolHandler {
  async function serve(req: ProtocolIncoming, res: ServerResponse, target: ProtocolTarget): Promise<void> {
    const tenant = await registry.get(target.slug);
    if (!tenant) return sendJson(res, 404, { error: "not_found", error_description: "There is no such organization." });
    let { path, search } = target;
    // `/{slug}/token` is the admin client library's shape of the token endpoint: the same endpoint in every check below.
    if (path === "/token") path = "/auth/token";
    const methods = methodsOf(path);
    if (!methods.includes(req.method ?? "")) {
      if (methods.length === 0) return sendJson(res, 404, { error: "not_found", error_description: "There is no such endpoint." });
      res.setHeader("Allow", methods.join(", "));
      return sendJson(res, 405, { error: "invalid_request", error_description: `This endpoint takes ${methods.filter((m) => m !== "HEAD" && m !== "OPTIONS").join(" or ")} requests.` });
    }
    // The provider answers a preflight of these endpoints for any origin: its per-client check
    // runs only on the request itself, which names the client. Here the organization's clients
    // decide; an origin none of them registered gets no CORS headers (decision 071).
    const origin = req.headers.origin;
    if (req.method === "OPTIONS" && preflightOrigins && typeof origin === "string" && CLIENT_CORS_PATHS.has(path)) {
      if (!(await preflightOrigins(tenant.organization.id, origin))) {
        res.setHeader("Vary", "Origin");
        return sendJson(res, 403, { error: "invalid_request", error_description: "This origin is not registered for any client of this organization." });
      }
    }
    let presented: JWTPayload | undefined;
    if (req.method === "POST") {
      let body;
      try {
        body = await parseProtocolForm(req, res);
      } catch (error) {
        if (!(error instanceof FormRefusal)) throw error;
        if (error.status === 413) res.setHeader("Connection", "close");
        return sendJson(res, error.status, { error: "invalid_request", error_description: error.description });
      }
      if (TOKEN_ENDPOINTS.has(path)) presented = await presentJwtsByJti(body, tenant);
      const refusal = await deviceFlowRefusal(req, res, { ...target, path }, tenant, store, limits, codeEntryChallenges);
      if (refusal) return sendJson(res, refusal.status, refusal.body);
      if (POSTABLE_PATHS.has(path)) {
        const next = await parkPostedRequest(store, tenant.organization.id, path, body);
        res.statusCode = 303;
        res.setHeader("Cache-Control", "no-store");
        res.setHeader("Location", `/${tenant.organization.slug}${next}`);
        res.end();
        return;
      }
    } else if (req.method === "GET" && POSTABLE_PATHS.has(path)) {
      const parked = await takePostedRequest(store, tenant.organization.id, new URLSearchParams(search));
      if (parked !== null) search = parked;
    } else if (req.method === "GET" && path === "/device") {
      // The code entry page's challenge, when the organization's bot protection asks for one.
      await deviceFlowRefusal(req, res, { ...target, path }, tenant, store, limits, codeEntryChallenges);
    }
    req.url = search ? `${path}?${search}` : path;
    // The provider derives every URL it hands out (discovery endpoints, redirects to resume
    // an authorization, cookie paths) from the path it was reached at: it always sees the
    // canonical one, so /ACME/... behaves exactly like /acme/...
    req.originalUrl = `/${tenant.organization.slug}${req.url}`;
    const cacheControl = req.method === "GET" ? publicCacheControlOf(path) : undefined;
    if (cacheControl) res.setHeader("Cache-Control", cacheControl);
    const device = { ip: target.ip ?? null, userAgent: keptUserAgent(req.headers["user-agent"]) };
    const prefetchedGrants: NonNullable<RequestScope["prefetchedGrants"]> = new Map();
    inRequestScope(path === "/me" ? { userinfo: true, prefetchedGrants } : { device, verifiedJwt: presented, prefetchedGrants }, () => tenant.callback(req, res));
  }
  return (req, res, target) =>
    serve(req, res, target).catch((error: unknown) => {
      if (!isDatabaseUnavailable(error) || res.headersSent) throw error;
      answerTemporarilyUnavailable(res);
    });
}

/** Mount as `app.use("/:slug", protocolRoutes(handler))`. */
export function protocolRoutes(serve: ProtocolHandler): RequestHandler {
  return (req, res, next) => {
    const slug = req.params.slug;
    if (!slug || !SLUG_PATTERN_ANY_CASE.test(slug) || !PROTOCOL_PATH.test(req.path)) return next();
    const q = req.url.indexOf("?");
    serve(req, res, { slug, path: req.path, search: q === -1 ? "" : req.url.slice(q + 1), ip: req.ip }).catch(next);
  };
}
