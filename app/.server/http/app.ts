import { randomBytes } from "node:crypto";
import path from "node:path";
import { isDatabaseUnavailable } from "../db/errors";
import { unavailable } from "../errors";
import { createRequestHandler } from "@remix-run/express";
import type { ServerBuild } from "@remix-run/node";
import express, { type ErrorRequestHandler, type RequestHandler } from "express";
import helmet from "helmet";
import { BRANDING_ASSET_ROUTE, serveBrandingAsset } from "../branding/serve";
import { checkHealth } from "../health/health";
import { protocolRoutes, type ProtocolHandler } from "../oidc/edge/mount";
import { registrationRoutes } from "../registration/routes";
import { scimRoutes } from "../scim/routes";
import { ssfRoutes } from "../ssf/routes";
import type { Services } from "../services";
import { edgeGuard } from "./edge-guard";
import { answerInternalError } from "./internal-error";
import { publicOrigin } from "./public-origin";
import { PROJECT_ROOT } from "../root";
import { requestIdAndAccessLog } from "./request-id";
import { securityHeaderOptions } from "./security-headers";

export const CLIENT_BUILD_DIR = path.join(PROJECT_ROOT, "build", "client");

export interface HttpAppOptions {
  /** The Remix server build, or a loader of it (Vite's dev server hands out fresh ones). */
  build: ServerBuild | (() => Promise<ServerBuild>);
  mode: "production" | "development";
  /** Vite's middleware in development; production serves build/client instead. */
  viteMiddleware?: RequestHandler;
  /** Serves /{slug}/<protocol path> (oidc/edge/mount.ts); the lane before Express shares it. */
  protocol: ProtocolHandler;
}

export function createHttpApp(services: Services, options: HttpAppOptions): express.Express {
  const { logger } = services;
  const app = express();
  app.disable("x-powered-by");
  // Client IPs (audit, rate limits) come from X-Forwarded-For only through TRUST_PROXY.
  app.set("trust proxy", services.config.trustProxy);

  app.use(publicOrigin(services.config.baseUrl));
  app.use(requestIdAndAccessLog(logger));
  app.use(edgeGuard(services.config.baseUrl, logger));
  app.use((_req, res, next) => {
    res.locals.cspNonce = randomBytes(16).toString("base64");
    next();
  });
  app.use(
    helmet(
      securityHeaderOptions(services.config.baseUrl, options.mode, ["'self'", (_req, res) => `'nonce-${(res as express.Response).locals.cspNonce as string}'`]),
    ),
  );

  app.get("/health/live", (_req, res) => {
    res.setHeader("Cache-Control", "no-store");
    res.json({ status: "ok" });
  });
  app.get("/health/ready", async (_req, res) => {
    const report = await services.readiness.check();
    res.setHeader("Cache-Control", "no-store");
    res.status(report.status === "ready" ? 200 : 503).json(report);
  });
  app.get("/health", async (_req, res) => {
    const report = await checkHealth(services.db, services.cache, services.mailer, services.keys);
    res.setHeader("Cache-Control", "no-store");
    // The release label, without a token: an operator (or a monitor) sees what runs where.
    res.status(report.status === "unavailable" ? 503 : 200).json({ status: report.status, release: services.release, checks: report.checks });
  });

  app.use("/:slug/register", registrationRoutes(services, services.limits));
  app.use("/:slug/scim/v2", scimRoutes(services, services.limits));
  const ssf = ssfRoutes(services);
  app.get(["/:slug/.well-known/ssf-configuration", "/.well-known/ssf-configuration/:slug"], ssf.configuration);
  app.use("/:slug/ssf", ssf.streams);
  app.use("/:slug", protocolRoutes(options.protocol));
  app.get(BRANDING_ASSET_ROUTE, serveBrandingAsset(services.db.prisma));

  if (options.viteMiddleware) {
    app.use(options.viteMiddleware);
  } else {
    app.use("/assets", express.static(`${CLIENT_BUILD_DIR}/assets`, { immutable: true, maxAge: "1y" }));
    app.use(express.static(CLIENT_BUILD_DIR, { maxAge: "1h" }));
  }

  app.all(
    "*",
    createRequestHandler({
      build: options.build,
      mode: options.mode,
      getLoadContext: (req, res) => ({
        services,
        cspNonce: res.locals.cspNonce as string,
        requestId: res.locals.requestId as string,
        req,
        res,
      }),
    }),
  );

  const onError: ErrorRequestHandler = (error: unknown, _req, res, _next) => {
    if (isDatabaseUnavailable(error) && !res.headersSent) {
      logger.warn({ requestId: res.locals.requestId }, "database unavailable: answered 503");
      const answer = unavailable();
      res.status(answer.status).set(answer.headers);
      return res.json({ error: { code: answer.code, message: answer.message, requestId: res.locals.requestId } });
    }
    answerInternalError(logger, res, res.locals.requestId as string | undefined, error);
  };
  app.use(onError);
  return app;
}
