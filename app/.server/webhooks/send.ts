import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { assertPublicHost, guardedLookup } from "../outbound/guard";

/**
 * One POST of a webhook delivery, guarded the way every outbound request Porta makes of its own
 * accord is (decision 047): special-use addresses refused after resolving the name (unless
 * OUTBOUND_ALLOW_PRIVATE_NETWORKS), redirects never followed (a 3xx is a failed attempt), one
 * deadline for the whole exchange, and the response read only up to a bound.
 */
export interface SendOptions {
  headers: Record<string, string>;
  body: string;
  allowPrivateNetworks: boolean;
  timeoutMs: number;
  /** Bytes of the response read at most; the rest is discarded and the socket closed. */
  maxResponseBytes: number;
  /** The body's media type, JSON unless said otherwise (an audit sink may send JSON lines, a Security Event Token push application/secevent+jwt). */
  contentType?: string;
  userAgent?: string;
}

export interface SendResult {
  statusCode: number | null;
  /** A short reason when no answer was had (a code, never the endpoint's own words). */
  error: string | null;
  /** The start of the response body, as text. */
  responseBody: string | null;
  durationMs: number;
}

export const RESPONSE_LOG_CHARS = 1024;

export function reasonOf(error: unknown): string {
  const e = error as { code?: unknown; name?: unknown };
  if (typeof e.code === "string" && /^[A-Z_]{2,40}$/.test(e.code)) return e.code;
  return typeof e.name === "string" && /^[A-Za-z]{1,60}$/.test(e.name) ? e.name : "Error";
}

export function sendWebhook(target: string, options: SendOptions): Promise<SendResult> {
  const started = Date.now();
  const done = (statusCode: number | null, error: string | null, responseBody: string | null): SendResult => ({
    statusCode,
    error,
    responseBody,
    durationMs: Date.now() - started,
  });
  let url: URL;
  try {
    url = new URL(target);
    assertPublicHost(url, options.allowPrivateNetworks);
  } catch (error) {
    return Promise.resolve(done(null, reasonOf(error), null));
  }
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(result);
    };
    const req = request(
      url,
      {
        method: "POST",
        headers: {
          ...options.headers,
          "content-type": options.contentType ?? "application/json",
          "content-length": Buffer.byteLength(options.body),
          "user-agent": options.userAgent ?? "Porta-Webhooks/1",
        },
        lookup: guardedLookup(options.allowPrivateNetworks),
        // No connection reuse: each attempt resolves and checks the address again.
        agent: false,
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          if (size >= options.maxResponseBytes) return;
          chunks.push(chunk);
          size += chunk.length;
          if (size >= options.maxResponseBytes) {
            // Enough to log; the status is known, the rest is not waited for.
            finish(done(res.statusCode ?? null, null, text(chunks)));
            res.destroy();
          }
        });
        res.on("end", () => finish(done(res.statusCode ?? null, null, text(chunks))));
        res.on("error", () => finish(done(res.statusCode ?? null, null, text(chunks))));
      },
    );
    const deadline = setTimeout(() => {
      finish(done(null, "TIMEOUT", null));
      req.destroy();
    }, options.timeoutMs);
    req.on("error", (error) => finish(done(null, reasonOf(error), null)));
    req.end(options.body);
  });
}

function text(chunks: Buffer[]): string | null {
  if (chunks.length === 0) return null;
  const start = Buffer.concat(chunks).toString("utf8").slice(0, RESPONSE_LOG_CHARS);
  // What PostgreSQL cannot store (NUL, a surrogate the cut split) is replaced, not refused.
  return start.replaceAll("\u0000", "\uFFFD").replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
}
