import type { ServerResponse } from "node:http";
import type { Logger } from "pino";

/**
 * What a request that failed unexpectedly gets, from Express's error handler (app.ts) or the
 * lanes before it: one error line (with the stack: this is a defect) and a 500 that names the
 * request id and nothing of the cause.
 */
export function answerInternalError(logger: Logger, res: ServerResponse, requestId: string | undefined, error: unknown): void {
  logger.error({ err: error }, "unhandled error");
  if (res.headersSent) {
    res.end();
    return;
  }
  res.statusCode = 500;
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.end(JSON.stringify({ error: { code: "internal_error", message: "Something went wrong. Quote the request id when you report it.", requestId } }));
}
