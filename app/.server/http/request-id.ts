import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { trace } from "@opentelemetry/api";
import type { RequestHandler } from "express";
import type { Logger } from "pino";
import { inRequestScope } from "../request-scope";

const INCOMING_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** A well-formed incoming X-Request-Id, or a fresh one. */
export function requestIdFrom(incoming: string | string[] | undefined): string {
  return typeof incoming === "string" && INCOMING_ID.test(incoming) ? incoming : randomUUID();
}

/**
 * Gives each request an id (a well-formed incoming X-Request-Id is kept, so that a proxy's id
 * carries through), returns it in the response, puts it on every log line written while the
 * request runs, and writes one access line when the response ends. Query strings are never
 * logged: they carry codes and tokens.
 */
export function requestIdAndAccessLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const requestId = startRequest(logger, req, res, () => req.originalUrl.split("?")[0]!);
    res.locals.requestId = requestId;
    inRequestScope({ requestId }, next);
  };
}

/**
 * The id, its response header and trace attribute, and the access line on finish; `pathOf` is read
 * then (without the query), so it logs the canonical path the protocol handler rewrote. The
 * caller runs the rest of the request in its scope (`inRequestScope({ requestId }, …)`).
 */
export function startRequest(logger: Logger, req: IncomingMessage, res: ServerResponse, pathOf: () => string): string {
  const requestId = requestIdFrom(req.headers["x-request-id"]);
  res.setHeader("X-Request-Id", requestId);
  // The request's trace carries the id the logs carry (decision 051).
  trace.getActiveSpan()?.setAttribute("porta.request_id", requestId);
  const started = process.hrtime.bigint();
  if (req.url?.split("?")[0] !== "/health") {
    res.on("finish", () => {
      logger.info(
        { requestId, method: req.method, path: pathOf(), status: res.statusCode, durationMs: Number((process.hrtime.bigint() - started) / 1_000n) / 1000 },
        "request",
      );
    });
  }
  return requestId;
}
