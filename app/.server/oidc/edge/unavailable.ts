import type { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import type Provider from "oidc-provider";
import { isDatabaseUnavailable } from "../../db/errors";
import { RETRY_AFTER_SECONDS } from "../../errors";

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
 * are remembered per request and turned into a 503 on the way out. So is one thrown past the
 * provider's own error handlers: it saves the browser's session after it has answered, outside
 * them, so a database that went away meanwhile would otherwise reach Koa, which answers 500.
 * The 503 is logged once it is the answer, so the log never names a status that was not sent.
 * Other errors keep the provider's answer and are logged as before; one that escapes the
 * provider entirely is logged here too (Koa would print it to stderr with its stack).
 */
export function answerUnavailableAs503(provider: Provider, logServerError: (error: unknown) => void, logUnavailable: (status: number) => void): void {
  const unavailable = new WeakSet<object>();
  provider.on("server_error", (ctx: object, error: unknown) => {
    if (isDatabaseUnavailable(error)) unavailable.add(ctx);
    else logServerError(error);
  });
  // The provider is the Koa application; Koa's "error" event is not in the provider's typed events.
  (provider as unknown as EventEmitter).on("error", (error: unknown) => {
    // Koa's own answer to an error nobody handled: a 4xx it exposes is the request's fault, not Porta's.
    const status = (error as { status?: unknown }).status;
    if (typeof status !== "number" || status >= 500) logServerError(error);
  });
  provider.use(async (ctx, next) => {
    let thrown = false;
    try {
      await next();
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      unavailable.add(ctx);
      thrown = true;
    }
    if (!unavailable.has(ctx)) return;
    if (thrown || ctx.status === 500) {
      ctx.status = 503;
      ctx.remove("Location");
      ctx.set("Retry-After", String(RETRY_AFTER_SECONDS));
      ctx.set("Cache-Control", "no-store");
      // JSON endpoints get the OAuth error body; a page the provider rendered (authorize) keeps its HTML.
      if (typeof ctx.body !== "string" || !ctx.response.is("html")) ctx.body = BODY;
    }
    logUnavailable(ctx.status);
  });
}
