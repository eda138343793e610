import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { Metrics } from "./metrics";

async function answer(metrics: Metrics, res: ServerResponse, logger: Logger) {
  try {
    const { contentType, body } = await metrics.render();
    res.writeHead(200, { "Content-Type": contentType, "Cache-Control": "no-store" });
    res.end(body);
  } catch (error) {
    logger.error({ err: error }, "could not render the metrics");
    res.writeHead(500, { "Content-Type": "text/plain; charset=utf-8" }).end("metrics unavailable\n");
  }
}

const digest = (value: string) => createHash("sha256").update(value).digest();

/** Whether the request carries `Authorization: Bearer <token>`, compared in constant time. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const presented = /^Bearer (\S+)$/i.exec(header ?? "")?.[1];
  return presented !== undefined && timingSafeEqual(digest(presented), digest(token));
}

/**
 * `/metrics` on the main port (METRICS_TOKEN set): answered before Express, so that scrapes are
 * not access-logged and never reach Remix. Without the right bearer the answer is the same 404
 * as without METRICS_TOKEN, so the public surface does not tell that metrics exist.
 */
export function metricsOnMainPort(metrics: Metrics, token: string | undefined, logger: Logger) {
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    if (!token || (req.url ?? "").split("?", 1)[0] !== "/metrics") return false;
    if (req.method !== "GET" || !bearerMatches(req.headers.authorization, token)) return false;
    void answer(metrics, res, logger);
    return true;
  };
}

/** A listener of its own (METRICS_PORT) that answers GET /metrics and 404 to everything else. */
export function startMetricsServer(metrics: Metrics, port: number, host: string, logger: Logger): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer((req, res) => {
      if (req.method === "GET" && (req.url ?? "").split("?", 1)[0] === "/metrics") return void answer(metrics, res, logger);
      res.writeHead(404, { "Content-Type": "text/plain; charset=utf-8" }).end("not found\n");
    });
    server.once("error", reject);
    server.listen(port, host, () => resolve(server));
  });
}
