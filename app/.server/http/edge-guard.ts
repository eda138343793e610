import type { Request, RequestHandler, Response } from "express";
import type { Logger } from "pino";
import { isRepresentableText, UNREPRESENTABLE_MESSAGE } from "~/schemas/text";
import { isAdminApiPath } from "../admin/paths";
import { isProtocolPath } from "../oidc/edge/mount";
import { isRegistrationPath } from "../registration/paths";
import { isScimPath } from "../scim/paths";
import { isSsfPath } from "../ssf/paths";

/**
 * Input no handler can use is refused before routing, with the error body of the area it was
 * sent to, and logged as one line: a malformed percent-encoding in the path or query, text
 * PostgreSQL cannot store (see ~/schemas/text), a cross-origin form post, or a page form that
 * is not a form. Bodies are checked where they are parsed: the Admin API's JSON in its route
 * helper, protocol forms in oidc/edge/mount.ts.
 */
type Area = "admin" | "protocol" | "scim" | "page";

const areaOf = (path: string): Area =>
  isAdminApiPath(path) ? "admin" : isProtocolPath(path) || isRegistrationPath(path) || isSsfPath(path) ? "protocol" : isScimPath(path) ? "scim" : "page";

interface Refusal {
  status: 400 | 403 | 415 | 422;
  reason: "malformed_path" | "malformed_query" | "unrepresentable_query" | "unrepresentable_path" | "cross_origin" | "not_a_form";
  message: string;
  field?: string;
}

const PAGE_TEXT: Record<Refusal["status"], { en: string; de: string }> = {
  400: { en: "The address of this page is not valid.", de: "Die Adresse dieser Seite ist ungültig." },
  403: { en: "This form was sent from another site and was refused.", de: "Dieses Formular wurde von einer anderen Website gesendet und abgelehnt." },
  415: { en: "This page accepts forms only.", de: "Diese Seite nimmt nur Formulare an." },
  422: { en: "The address of this page contains characters that are not allowed.", de: "Die Adresse dieser Seite enthält nicht erlaubte Zeichen." },
};

function send(req: Request, res: Response, area: Area, refusal: Refusal) {
  res.status(refusal.status).setHeader("Cache-Control", "no-store");
  if (area === "admin") {
    const code = refusal.status === 422 ? "validation_failed" : refusal.status === 403 ? "cross_origin" : refusal.status === 415 ? "unsupported_media_type" : "bad_request";
    const details = refusal.field ? { details: [{ field: refusal.field, message: UNREPRESENTABLE_MESSAGE }] } : {};
    res.json({ error: { code, message: refusal.message, ...details } });
  } else if (area === "scim") {
    // RFC 7644 §3.12: a SCIM client reads the error body; text that cannot be stored is an invalid value.
    const scimType = refusal.reason.startsWith("unrepresentable") ? "invalidValue" : "invalidSyntax";
    res
      .status(400)
      .type("application/scim+json")
      .send(JSON.stringify({ schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"], status: "400", scimType, detail: refusal.message }));
  } else if (area === "protocol") {
    // RFC 6749 §4.1.2.1/§5.2: a malformed request is invalid_request.
    res.status(refusal.status === 422 ? 400 : refusal.status).json({ error: "invalid_request", error_description: refusal.message });
  } else {
    const de = /^de\b/i.test(req.get("accept-language") ?? "");
    const text = PAGE_TEXT[refusal.status][de ? "de" : "en"];
    res
      .type("html")
      .send(`<!doctype html><html lang="${de ? "de" : "en"}"><head><meta charset="utf-8"><title>Porta</title></head><body><main><h1>${text}</h1></main></body></html>`);
  }
}

function decode(component: string): string | undefined {
  try {
    return decodeURIComponent(component);
  } catch {
    return undefined;
  }
}

function checkUrl(req: Request): Refusal | undefined {
  const url = req.originalUrl;
  const q = url.indexOf("?");
  const path = decode(q === -1 ? url : url.slice(0, q));
  if (path === undefined) return { status: 400, reason: "malformed_path", message: "The path is not valid percent-encoding." };
  // No Porta path (ids, slugs, keys) holds a control character, and the routers cannot match one.
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  if (!isRepresentableText(path) || /[\u0000-\u001f\u007f]/.test(path)) {
    return { status: 400, reason: "unrepresentable_path", message: "The path contains a character that is not allowed." };
  }
  if (q === -1) return undefined;
  for (const pair of url.slice(q + 1).split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    const key = decode((eq === -1 ? pair : pair.slice(0, eq)).replace(/\+/g, " "));
    const value = decode((eq === -1 ? "" : pair.slice(eq + 1)).replace(/\+/g, " "));
    if (key === undefined || value === undefined) return { status: 400, reason: "malformed_query", message: "The query string is not valid percent-encoding." };
    if (!isRepresentableText(key) || !isRepresentableText(value)) {
      return { status: 422, reason: "unrepresentable_query", message: "The request is not valid.", field: `query.${isRepresentableText(key) ? key : "(name)"}` };
    }
  }
  return undefined;
}

const UNSAFE = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const FORM_TYPES = ["application/x-www-form-urlencoded", "multipart/form-data"];

function hasBody(req: Request): boolean {
  return Number(req.get("content-length") ?? 0) > 0 || req.get("transfer-encoding") !== undefined;
}

/**
 * Pages and the Admin API take writes from their own origin only. The Origin a browser sends may
 * be BASE_URL's or the host it actually used (a browser cannot forge either cross-site). Once
 * checked, the header is dropped so that Remix's own check, which would compare it with the
 * rewritten Host, does not fail such a request with a 500.
 */
function checkOrigin(req: Request, allowed: Set<string>): Refusal | undefined {
  const origin = req.get("origin");
  if (origin === undefined) return undefined;
  const host = URL.canParse(origin) ? new URL(origin).host : undefined;
  if (!host || !allowed.has(host)) return { status: 403, reason: "cross_origin", message: "Requests from another origin are refused." };
  delete req.headers.origin;
  return undefined;
}

/**
 * The redirect URI upstream identity providers may answer with a cross-site form post (Apple's
 * `response_mode=form_post`, decision 055): like the protocol's endpoints it takes posts from
 * anywhere; the state it carries is the check.
 */
const isFederationCallback = (path: string) => /^\/[^/]+\/federation\/callback$/.test(path);
/** A SAML connection's Assertion Consumer Service: the IdP's HTTP-POST response comes cross-site; its RelayState and signature are the check (decision 081). */
const isSamlAcs = (path: string) => /^\/[^/]+\/saml\/[^/]+\/acs$/.test(path);

/** Mount after http/public-origin.ts, which records the host the request came in on. */
export function edgeGuard(baseUrl: string, logger: Logger): RequestHandler {
  const baseHost = new URL(baseUrl).host;
  return (req, res, next) => {
    const area = areaOf(req.path);
    let refusal = checkUrl(req);
    // The protocol's endpoints and SCIM take bearer tokens or client credentials, never cookies: any origin may call them.
    if (!refusal && area !== "protocol" && area !== "scim" && UNSAFE.has(req.method)) {
      if (req.method === "POST" && (isFederationCallback(req.path) || isSamlAcs(req.path))) delete req.headers.origin;
      else refusal = checkOrigin(req, new Set([baseHost, String(res.locals.requestHost ?? baseHost)]));
      if (!refusal && area === "page" && hasBody(req) && !req.is(FORM_TYPES)) {
        refusal = { status: 415, reason: "not_a_form", message: "Send a form (application/x-www-form-urlencoded or multipart/form-data)." };
      }
    }
    if (!refusal) return next();
    logger.info({ area, status: refusal.status, reason: refusal.reason, ...(refusal.field ? { field: refusal.field } : {}) }, "request refused at the edge");
    send(req, res, area, refusal);
  };
}
