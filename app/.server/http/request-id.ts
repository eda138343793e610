import { randomUUID } from "node:crypto";
import { trace } from "@opentelemetry/api";
import type { RequestHandler } from "express";
import type { Logger } from "pino";
import { requestContext } from "../logging/logger";

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
    const requestId = requestIdFrom(req.get("x-request-id"));
    res.locals.requestId = requestId;
    res.setHeader("X-Request-Id", requestId);
    // The request's trace carries the id the logs carry (decision 051).
    trace.getActiveSpan()?.setAttribute("porta.request_id", requestId);
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      if (req.path === "/health") return;
      logger.info(
        {
          requestId,
          method: req.method,
          path: req.originalUrl.split("?")[0],
          status: res.statusCode,
          durationMs: Number((process.hrtime.bigint() - started) / 1_000n) / 1000,
        },
        "request",
      );
    });
    requestContext.run({ requestId }, next);
  };
}
