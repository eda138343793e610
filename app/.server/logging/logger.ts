import pino, { type Logger } from "pino";
import { requestScope } from "../request-scope";

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
      // The request id of the request being handled goes on every line written for it.
      mixin() {
        const requestId = requestScope()?.requestId;
        return requestId ? { requestId } : {};
      },
    },
    destination,
  );
}
