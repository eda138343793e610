import type { ServerResponse } from "node:http";
import type Provider from "oidc-provider";
import { isDatabaseUnavailable } from "../db/errors";
import { RETRY_AFTER_SECONDS } from "../errors";

/**
 * A protocol request that failed because the database did not answer is a 503 with
 * Retry-After and `temporarily_unavailable`, not oidc-provider's 500 `server_error`: a relying
 * party may retry, and nothing about its credentials was judged.
 */
const BODY = { error: "temporarily_unavailable", error_description: "The service cannot reach its database right now. Try again shortly." };

export function answerTemporarilyUnavailable(res: ServerResponse): void {
  res.statusCode = 503;
  res.setHeader("Retry-After", String(RETRY_AFTER_SECONDS));
  res.setHeader("Cache-Control", "no-store");
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.end(JSON.stringify(BODY));
}

/**
 * The provider reports every unexpected error as `server_error`; those caused by the database
 * are remembered per request and turned into a 503 on the way out. Other errors keep the
 * provider's answer and are logged as before.
 */
export function answerUnavailableAs503(provider: Provider, logServerError: (error: unknown) => void, logUnavailable: () => void): void {
  const unavailable = new WeakSet<object>();
  provider.on("server_error", (ctx: object, error: unknown) => {
    if (isDatabaseUnavailable(error)) {
      unavailable.add(ctx);
      logUnavailable();
    } else {
      logServerError(error);
    }
  });
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.status !== 500 || !unavailable.has(ctx)) return;
    ctx.status = 503;
    ctx.set("Retry-After", String(RETRY_AFTER_SECONDS));
    ctx.set("Cache-Control", "no-store");
    // JSON endpoints get the OAuth error body; rendered pages (authorize) keep their HTML.
    if (ctx.body && typeof ctx.body === "object" && !Buffer.isBuffer(ctx.body) && "error" in ctx.body) ctx.body = BODY;
  });
}
