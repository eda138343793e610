import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { ServerBuild } from "@remix-run/node";
import type { Logger } from "pino";
import { bootstrap, type BootstrapResult } from "./bootstrap/bootstrap";
import type { Config } from "./config/env";
import { createHttpApp } from "./http/app";
import { answerClientError } from "./http/client-error";
import { protocolFirst, type ProtocolFirstOptions } from "./http/protocol-first";
import { wellKnownFirst } from "./http/well-known-first";
import { createProtocolHandler } from "./oidc/edge/mount";
import { metricsOnMainPort, startMetricsServer } from "./metrics/serve";
import { createPreflightOrigins } from "./oidc/edge/preflight";
import { PROJECT_ROOT } from "./root";
import { createServices, type CreateServicesOptions, type Services } from "./services";
import { stagedContext } from "./context";
import { anonymousActor } from "./auth/actors";
import { createCodeEntryChallenges } from "./sign-in/bot-challenge";

export const SERVER_BUILD_PATH = path.join(PROJECT_ROOT, "build", "server", "index.js");

export interface RunningPorta {
  server: Server;
  services: Services;
  /** http://host:port the server actually listens on. */
  url: string;
  bootstrap: BootstrapResult;
  /**
   * Turns not-ready, keeps serving for `notReadyMs` (so a load balancer stops sending), then
   * stops accepting, drains in-flight requests (up to the grace period) and closes the stores.
   */
  close(gracePeriodMs?: number, notReadyMs?: number): Promise<void>;
}

export interface StartOptions extends CreateServicesOptions {
  mode?: "production" | "development";
  host?: string;
}

async function loadProductionBuild(): Promise<ServerBuild> {
  if (!existsSync(SERVER_BUILD_PATH)) {
    throw new Error(`the Remix build is missing at ${SERVER_BUILD_PATH}; run \`npm run build\` first`);
  }
  return (await import(pathToFileURL(SERVER_BUILD_PATH).href)) as ServerBuild;
}

export async function startPorta(config: Config, logger: Logger, options: StartOptions = {}): Promise<RunningPorta> {
  const mode = options.mode ?? (config.nodeEnv === "production" || config.nodeEnv === "test" ? "production" : "development");
  const services = await createServices(config, logger, options);
  try {
    const bootstrapResult = await bootstrap(services.db.prisma, {
      superAdminSlug: config.superAdminSlug,
      baseUrl: config.baseUrl,
      adminEmail: config.adminBootstrap.email,
      adminPassword: config.adminBootstrap.password,
      signingKeys: services.keys,
    });

    const codeEntryChallenges = createCodeEntryChallenges((meta) => stagedContext(services, anonymousActor(meta)));
    const protocol = createProtocolHandler(services.oidc, services.store, services.limits, createPreflightOrigins(services.db), codeEntryChallenges);
    let app;
    let closeVite: (() => Promise<void>) | undefined;
    if (mode === "development") {
      const vite = await import("vite");
      const devServer = await vite.createServer({ server: { middlewareMode: true }, appType: "custom" });
      closeVite = () => devServer.close();
      app = createHttpApp(services, {
        mode,
        protocol,
        viteMiddleware: devServer.middlewares,
        build: () => devServer.ssrLoadModule("virtual:remix/server-build") as Promise<ServerBuild>,
      });
    } else {
      app = createHttpApp(services, { mode, protocol, build: await loadProductionBuild() });
    }

    // Discovery and JWKS, then grants, introspection and revocation, are answered before Express
    // (http/well-known-first.ts, http/protocol-first.ts).
    const machine = protocolFirst(
      { serve: protocol, baseUrl: config.baseUrl, mode, logger: services.logger, trustProxy: app.get("trust proxy fn") as ProtocolFirstOptions["trustProxy"] },
      app,
    );
    const wellKnown = wellKnownFirst({ registry: services.oidc, directory: services.documents, baseUrl: config.baseUrl, mode, logger: services.logger }, machine);
    const scrape = metricsOnMainPort(services.metrics, config.metrics.token, services.logger);
    const handler = services.metrics.observeHttp(
      services.tracing.observeHttp((req, res) => {
        if (!scrape(req, res)) wellKnown(req, res);
      }),
    );
    const server = await new Promise<Server>((resolve, reject) => {
      const s = createServer(handler).listen(config.port, options.host ?? "0.0.0.0", () => resolve(s));
      s.once("error", reject);
    });
    // The metrics port listens on every interface (a scraper reaches the pod's address); the
    // public load balancer routes only PORT.
    const metricsServer = config.metrics.port
      ? await startMetricsServer(services.metrics, config.metrics.port, options.host ?? "0.0.0.0", services.logger).catch(async (error: unknown) => {
          await new Promise((resolve) => server.close(resolve));
          throw error;
        })
      : undefined;
    server.on("clientError", answerClientError(services.logger));
    // Slow clients must not hold a connection for ever.
    server.headersTimeout = 20_000;
    server.requestTimeout = 30_000;
    const { port } = server.address() as AddressInfo;
    // Serving first: the directory of every organization's documents fills in the background.
    services.documents.fillInBackground();

    let closing: Promise<void> | undefined;
    return {
      server,
      services,
      url: `http://127.0.0.1:${port}`,
      bootstrap: bootstrapResult,
      close(gracePeriodMs = 10_000, notReadyMs = 0) {
        closing ??= (async () => {
          services.readiness.markDraining();
          if (notReadyMs > 0) await new Promise((resolve) => setTimeout(resolve, notReadyMs));
          const drained = new Promise<void>((resolve) => server.close(() => resolve()));
          server.closeIdleConnections();
          const force = setTimeout(() => server.closeAllConnections(), gracePeriodMs);
          await drained;
          clearTimeout(force);
          await new Promise<void>((resolve) => (metricsServer ? metricsServer.close(() => resolve()) : resolve()));
          await closeVite?.();
          await services.close();
        })();
        return closing;
      },
    };
  } catch (error) {
    await services.close();
    throw error;
  }
}
