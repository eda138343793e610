import type { ServerResponse } from "node:http";
import { RETRY_AFTER_SECONDS } from "../../errors";

/**
 * A protocol request that failed because the database did not answer is a 503 with
 * Retry-After and `temporarily_unavailable`, not oidc-provider's 500 `server_error`: a relying
 * party may retry, and nothing about its credentials was judged.
 */
export const UNAVAILABLE_BODY = { error: "temporarily_unavailable", error_description: "The service cannot reach its database right now. Try again shortly." };

export function answerTemporarilyUnavailable(res: ServerResponse): void {
  res.statusCode = 503;
  res.setHeader("Retry-After", String(RETRY_AFTER_SECONDS));
  res.setHeader("Cache-Control", "no-store");
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.end(JSON.stringify(UNAVAILABLE_BODY));
}
