import type { JWTPayload } from "jose";
import express, { type Request, type RequestHandler } from "express";
import { isDatabaseUnavailable } from "../db/errors";
import { answerTemporarilyUnavailable } from "./unavailable";
import { SLUG_PATTERN_ANY_CASE } from "~/schemas/slug";
import { findUnrepresentable, UNREPRESENTABLE_MESSAGE } from "~/schemas/text";
import { userinfoRequest } from "./internals";
import { keptUserAgent, requestDevice } from "./request-device";
import type { KeyValueStore } from "../cache/store";
import { parkPostedRequest, POSTABLE_PATHS, takePostedRequest } from "./posted-requests";
import type { ProviderRegistry, TenantProvider } from "./registry";
import { withVerifiedJwt } from "./verified-jwt";
import type { RateLimits } from "../rate-limit/limiters";
import { DEVICE_CODE_GRANT } from "~/schemas/client";
import { limitedCodeEntries, pollsTooSoon } from "./device-flow";
import { publicCacheControlOf } from "./well-known";

/**
 * The protocol paths of an organization, relative to /{slug}. Only these reach oidc-provider;
 * every other /{slug}/* path belongs to Remix (STACK-NOTES §3).
 */
export const PROTOCOL_PATH =
  /^\/(?:\.well-known\/(?:openid-configuration|jwks)|auth\/(?:authorize|token|par)(?:\/[^/]+)?|token(?:\/introspection|\/revocation)?|me|session\/end(?:\/confirm|\/success)?|device(?:\/[^/]+)?)$/;

/** True for a path (below the origin) that oidc-provider serves: /{slug}/<protocol path>. */
export function isProtocolPath(path: string): boolean {
  const match = /^\/([^/]+)(\/.*)$/.exec(path);
  return Boolean(match && SLUG_PATTERN_ANY_CASE.test(match[1]!) && PROTOCOL_PATH.test(match[2]!));
}

const parseForm = express.urlencoded({ extended: false, limit: "56kb" });
const TOKEN_ENDPOINTS = new Set(["/token/introspection", "/token/revocation"]);

/** Stands in for a structured token that is not one of this organization's: no token has this id. */
const UNKNOWN_TOKEN = "porta-unknown-token";

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
function parseProtocolForm(req: Request): Promise<Record<string, unknown> | undefined> {
  return new Promise((resolve, reject) => {
    parseForm(req, req.res!, (error?: unknown) => {
      if (error) {
        const type = (error as { type?: string }).type;
        return reject(
          type === "entity.too.large"
            ? new FormRefusal(413, "The request body is too large.")
            : new FormRefusal(400, "The request body is not a valid form."),
        );
      }
      const body = req.body as Record<string, unknown> | undefined;
      const bad = body ? findUnrepresentable(body) : undefined;
      if (bad !== undefined) return reject(new FormRefusal(400, `The parameter ${bad.split(".")[0]} ${UNREPRESENTABLE_MESSAGE}.`));
      resolve(body);
    });
  });
}

/**
 * oidc-provider refuses JWTs at introspection and revocation because it never stores them;
 * Porta does (internals.storeJwtAccessToken), under their jti. A JWT in the `token` field
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
 * RFC 8628 (decision 049): a device that polls the token endpoint again within the interval is
 * told `slow_down`; a browser that used up its code entries is handed to the provider without
 * a code, and the page says to wait (pages.ts).
 */
async function deviceFlowRefusal(req: Request, body: Record<string, unknown> | undefined, tenant: TenantProvider, store: KeyValueStore, limits: RateLimits | undefined): Promise<boolean> {
  if (req.path === "/auth/token" && body?.grant_type === DEVICE_CODE_GRANT && typeof body.device_code === "string" && body.device_code !== "") {
    if (!(await pollsTooSoon(store, tenant.organization.id, body.device_code))) return false;
    req.res!.status(400).setHeader("Cache-Control", "no-store").json({ error: "slow_down", error_description: "The device polls too often: wait 5 seconds longer between requests." });
    return true;
  }
  if (req.path === "/device" && limits && body && typeof body.user_code === "string" && body.confirm === undefined && body.abort === undefined) {
    const outcome = await limits.consume("deviceCodeEntryIp", `${tenant.organization.id}:${req.ip ?? "unknown"}`);
    if (!outcome.allowed) {
      body.user_code = "";
      limitedCodeEntries.add(req);
      req.res!.setHeader("Retry-After", String(outcome.retryAfterSeconds));
    }
  }
  return false;
}

/** Mount as `app.use("/:slug", protocolRoutes(registry, store, limits))`. */
export function protocolRoutes(registry: ProviderRegistry, store: KeyValueStore, limits?: RateLimits): RequestHandler {
  return (req, res, next) => {
    const slug = req.params.slug;
    if (!slug || !SLUG_PATTERN_ANY_CASE.test(slug) || !PROTOCOL_PATH.test(req.path)) return next();
    registry.get(slug).then(async (tenant) => {
      if (!tenant) {
        res.status(404).json({ error: "not_found", error_description: "There is no such organization." });
        return;
      }
      let presented: JWTPayload | undefined;
      if (req.method === "POST") {
        let body;
        try {
          body = await parseProtocolForm(req);
        } catch (error) {
          if (!(error instanceof FormRefusal)) throw error;
          if (error.status === 413) res.setHeader("Connection", "close");
          res.status(error.status).setHeader("Cache-Control", "no-store");
          res.json({ error: "invalid_request", error_description: error.description });
          return;
        }
        if (TOKEN_ENDPOINTS.has(req.path)) presented = await presentJwtsByJti(body, tenant);
        if (await deviceFlowRefusal(req, body, tenant, store, limits)) return;
        if (POSTABLE_PATHS.has(req.path)) {
          const next = await parkPostedRequest(store, tenant.organization.id, req.path, body);
          res.status(303).setHeader("Cache-Control", "no-store").setHeader("Location", `/${tenant.organization.slug}${next}`).end();
          return;
        }
      } else if (req.method === "GET" && POSTABLE_PATHS.has(req.path)) {
        const parked = await takePostedRequest(store, tenant.organization.id, new URLSearchParams(req.url.slice(req.path.length + 1)));
        if (parked !== null) req.url = parked ? `${req.path}?${parked}` : req.path;
      }
      // `/{slug}/token` is the admin client library's shape of the token endpoint.
      if (req.path === "/token") req.url = "/auth/token" + req.url.slice("/token".length);
      // The provider derives every URL it hands out (discovery endpoints, redirects to resume
      // an authorization, cookie paths) from the path it was reached at: it always sees the
      // canonical one, so /ACME/... behaves exactly like /acme/...
      req.originalUrl = `/${tenant.organization.slug}${req.url}`;
      const cacheControl = req.method === "GET" ? publicCacheControlOf(req.path) : undefined;
      if (cacheControl) res.setHeader("Cache-Control", cacheControl);
      const device = { ip: req.ip ?? null, userAgent: keptUserAgent(req.get("user-agent")) };
      if (req.path === "/me") {
        userinfoRequest.run(true, () => tenant.callback(req, res));
      } else {
        requestDevice.run(device, () => withVerifiedJwt(presented, () => tenant.callback(req, res)));
      }
    }).catch((error: unknown) => {
      if (!isDatabaseUnavailable(error) || res.headersSent) return next(error);
      answerTemporarilyUnavailable(res);
    });
  };
}
