import { AsyncLocalStorage } from "node:async_hooks";
import pino, { type Logger } from "pino";

/** Carries the request id to every log line written while a request is handled. */
export const requestContext = new AsyncLocalStorage<{ requestId: string }>();

/**
 * Paths that may carry secrets. Porta never logs bodies or query strings, so these are a second
 * line of defence for objects passed to the logger by mistake.
 */
const REDACT = [
  "password",
  "*.password",
  "secret",
  "*.secret",
  "token",
  "*.token",
  "headers.authorization",
  "headers.cookie",
  "*.headers.authorization",
  "*.headers.cookie",
  "req.headers.authorization",
  "req.headers.cookie",
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: "porta" },
      redact: { paths: REDACT, censor: "[redacted]" },
      mixin() {
        const ctx = requestContext.getStore();
        return ctx ? { requestId: ctx.requestId } : {};
      },
    },
    destination,
  );
}
