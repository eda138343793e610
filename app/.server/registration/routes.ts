import express, { type Request, type Response, type Router } from "express";
import { stagedContext } from "../context";
import { isDatabaseUnavailable } from "../db/errors";
import { answerTemporarilyUnavailable } from "../oidc/edge/unavailable";
import type { RateLimits } from "../rate-limit/limiters";
import type { Services } from "../services";
import { SLUG_PATTERN_ANY_CASE } from "~/schemas/slug";
import { MAX_JSON_DEPTH, textNestsDeeperThan } from "~/schemas/json-depth";
import { deleteRegisteredClient, readRegisteredClient, registerClient, RegistrationError, updateRegisteredClient } from "./service";

/**
 * `/{slug}/register` (RFC 7591) and `/{slug}/register/{client_id}` (RFC 7592), decision 054.
 * The routes only read the request and write the answer; the registration service decides.
 */

/** A body beyond the limit: 413 (the one status RFC 7591 does not name), and the connection closes. */
const bodyTooLarge = () => new RegistrationError(413, "invalid_client_metadata", "The request body is too large.", { Connection: "close" });

const tooDeep = () => new RegistrationError(400, "invalid_client_metadata", `The request body nests arrays or objects more than ${MAX_JSON_DEPTH} levels deep.`);

const parseJson = express.json({
  limit: "64kb",
  type: () => true,
  strict: true,
  // Too deep a nesting is refused before the text is parsed, which such nesting makes slow (~/schemas/json-depth).
  verify: (_req, _res, buffer) => {
    if (textNestsDeeperThan(buffer.toString("utf8"))) throw tooDeep();
  },
});

function bearerOf(req: Request): string | undefined {
  const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/.exec(req.get("authorization") ?? "");
  return match?.[1];
}

function answerError(req: Request, res: Response, error: RegistrationError) {
  res.status(error.status).setHeader("Cache-Control", "no-store");
  for (const [name, value] of Object.entries(error.headers ?? {})) res.setHeader(name, value);
  // RFC 6750 §3.1: a request without a token gets the bare challenge; a bad token is named.
  if (error.status === 401) res.setHeader("WWW-Authenticate", bearerOf(req) ? `Bearer error="invalid_token", error_description="${error.description}"` : "Bearer");
  res.json({ error: error.error, error_description: error.description });
}

/** Reads the JSON body within 64 kB: a larger one is 413, one that is not JSON is invalid_client_metadata. */
function readBody(req: Request, res: Response): Promise<unknown> {
  return new Promise((resolve, reject) => {
    parseJson(req, res, (error?: unknown) => {
      if (!error) return resolve(req.body);
      const type = (error as { type?: string }).type;
      if (type === "entity.too.large") return reject(bodyTooLarge());
      if (type === "entity.verify.failed") return reject(tooDeep());
      reject(new RegistrationError(400, "invalid_client_metadata", "The request body must be a JSON object of client metadata."));
    });
  });
}

/** Mount as `app.use("/:slug/register", registrationRoutes(services, limits))`. */
export function registrationRoutes(services: Services, limits: RateLimits): Router {
  const router = express.Router({ mergeParams: true });
  // MCP clients that run in a browser register from their own origin. Nothing here rides on a
  // cookie (the tokens are bearer tokens), so any origin may call, without credentials.
  router.use((req, res, next) => {
    res.setHeader("Access-Control-Allow-Origin", "*");
    if (req.method !== "OPTIONS") return next();
    res.setHeader("Access-Control-Allow-Methods", req.path === "/" ? "POST" : "GET, PUT, DELETE");
    res.setHeader("Access-Control-Allow-Headers", "Authorization, Content-Type");
    res.setHeader("Access-Control-Max-Age", "600");
    res.status(204).end();
  });
  const meta = (req: Request) => ({ ip: req.ip ?? null, requestId: (req.res?.locals.requestId as string | undefined) ?? null });
  // A registration is a stranger's (anonymous); the client configuration endpoint acts as the client its path names.
  const asStranger = (req: Request) => stagedContext(services, { type: "anonymous", id: null, ...meta(req) });
  const asClient = (req: Request) => stagedContext(services, { type: "client", id: req.params.clientId!, ...meta(req) });

  const handle = (work: (req: Request, res: Response, slug: string) => Promise<void>) => (req: Request, res: Response, next: (error?: unknown) => void) => {
    const slug = (req.params as { slug?: string }).slug ?? "";
    if (!SLUG_PATTERN_ANY_CASE.test(slug)) return next();
    (async () => {
      const outcome = await limits.consume("clientRegistrationIp", `${slug.toLowerCase()}:${req.ip ?? "unknown"}`);
      if (!outcome.allowed) {
        res.status(429).setHeader("Retry-After", String(outcome.retryAfterSeconds)).setHeader("Cache-Control", "no-store");
        res.json({ error: "slow_down", error_description: "Too many registration requests from this address; try again later." });
        return;
      }
      res.setHeader("Cache-Control", "no-store");
      res.setHeader("Pragma", "no-cache");
      await work(req, res, slug);
    })().catch((error: unknown) => {
      if (error instanceof RegistrationError) {
        answerError(req, res, error);
      } else if (isDatabaseUnavailable(error) && !res.headersSent) {
        answerTemporarilyUnavailable(res);
      } else {
        next(error);
      }
    });
  };

  router.post(
    "/",
    handle(async (req, res, slug) => {
      const body = await readBody(req, res);
      res.status(201).json(await registerClient(asStranger(req), slug, bearerOf(req), body));
    }),
  );
  router.get(
    "/:clientId",
    handle(async (req, res, slug) => {
      res.json(await readRegisteredClient(asClient(req), slug, req.params.clientId!, bearerOf(req)));
    }),
  );
  router.put(
    "/:clientId",
    handle(async (req, res, slug) => {
      const body = await readBody(req, res);
      res.json(await updateRegisteredClient(asClient(req), slug, req.params.clientId!, bearerOf(req), body));
    }),
  );
  router.delete(
    "/:clientId",
    handle(async (req, res, slug) => {
      await deleteRegisteredClient(asClient(req), slug, req.params.clientId!, bearerOf(req));
      res.status(204).end();
    }),
  );
  return router;
}
