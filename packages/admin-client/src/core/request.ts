import type { AuthProvider } from "../auth/provider.js";
import { type PortaError, PortaRateLimitError, PortaTimeoutError, connectionErrorOf, errorFromResponse, parseRetryAfter } from "./errors.js";
import type { CallOptions } from "./options.js";

export interface TransportOptions {
  baseUrl: string;
  auth: AuthProvider;
  /** Per-attempt timeout in milliseconds (default 30 000). */
  timeout?: number;
  /** Retries of idempotent calls (GET, PUT, DELETE) on 429 and 503 (default 2). */
  maxRetries?: number;
  /** Longest wait before a retry, in milliseconds (default 30 000); a longer Retry-After is not waited for. */
  maxRetryDelay?: number;
  fetch?: typeof fetch;
  userAgent?: string;
}

export interface RawRequest {
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** Path below /api/admin, already filled in. */
  path: string;
  query?: Record<string, unknown> | undefined;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as given (uploads), with `contentType` unless it is FormData (fetch sets the boundary). */
  rawBody?: BodyInit | undefined;
  contentType?: string | undefined;
  options?: CallOptions | undefined;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

const IDEMPOTENT = new Set(["GET", "PUT", "DELETE"]);
const RETRYABLE = new Set([429, 503]);

function queryString(query: Record<string, unknown> | undefined): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== null) params.set(name, String(value));
  const text = params.toString();
  return text ? `?${text}` : "";
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Exponential backoff with full jitter, or the server's Retry-After when it gave one. */
export function retryDelay(attempt: number, retryAfterSeconds: number | undefined): number {
  if (retryAfterSeconds !== undefined) return retryAfterSeconds * 1000;
  return Math.round(Math.random() * Math.min(8_000, 250 * 2 ** attempt));
}

async function parseBody(res: Response): Promise<unknown> {
  const type = res.headers.get("content-type") ?? "";
  // Downloads (exports, assets) stay binary.
  if (res.ok && type !== "" && !type.includes("json") && !type.startsWith("text/")) return res.blob();
  const text = await res.text();
  if (!text) return undefined;
  if (type.includes("json")) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

/**
 * One Admin API call: bearer token, JSON both ways, If-Match, a timeout per attempt, the
 * caller's AbortSignal, retries of idempotent calls on 429/503, one retry after a 401 when the
 * auth provider can get a fresh token, and a typed error for every failure.
 */
export function createTransport(options: TransportOptions) {
  const base = `${options.baseUrl.replace(/\/+$/, "")}/api/admin`;
  const doFetch = options.fetch ?? fetch;

  async function attempt(req: RawRequest, token: string): Promise<Response> {
    const timeoutMs = req.options?.timeout ?? options.timeout ?? 30_000;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = req.options?.signal ? AbortSignal.any([req.options.signal, timeout]) : timeout;
    const headers: Record<string, string> = {
      accept: "application/json",
      authorization: `Bearer ${token}`,
      ...(options.userAgent ? { "user-agent": options.userAgent } : {}),
      ...(req.body !== undefined ? { "content-type": "application/json" } : {}),
      ...(req.rawBody !== undefined && req.contentType && !(req.rawBody instanceof FormData) ? { "content-type": req.contentType } : {}),
      ...(req.options?.ifMatch ? { "if-match": req.options.ifMatch } : {}),
      ...req.options?.headers,
    };
    const url = `${base}${req.path}${queryString({ ...req.query, ...req.options?.query })}`;
    try {
      return await doFetch(url, {
        method: req.method,
        headers,
        body: req.rawBody ?? (req.body === undefined ? null : JSON.stringify(req.body)),
        signal,
      });
    } catch (error) {
      if (req.options?.signal?.aborted) throw error;
      if (timeout.aborted) {
        throw new PortaTimeoutError({ status: 0, code: "timeout", message: `No answer from ${req.method} ${req.path} within ${timeoutMs} ms.` });
      }
      // No HTTP answer at all: say which URL failed and why (refused, DNS, TLS, …).
      throw connectionErrorOf(error, url);
    }
  }

  return async function request(req: RawRequest): Promise<RawResponse> {
    const maxRetries = IDEMPOTENT.has(req.method) ? (req.options?.maxRetries ?? options.maxRetries ?? 2) : 0;
    const maxDelay = options.maxRetryDelay ?? 30_000;
    let reauthenticated = false;
    for (let attemptNo = 0; ; attemptNo++) {
      const token = await options.auth.getToken(req.options?.signal);
      const res = await attempt(req, token);
      const body = await parseBody(res);
      if (res.ok) return { status: res.status, headers: res.headers, body };
      if (res.status === 401 && !reauthenticated && options.auth.invalidate && (await options.auth.invalidate())) {
        reauthenticated = true;
        attemptNo--;
        continue;
      }
      const error: PortaError = errorFromResponse(res.status, body, res.headers);
      if (RETRYABLE.has(res.status) && attemptNo < maxRetries) {
        const retryAfter = error instanceof PortaRateLimitError ? error.retryAfter : parseRetryAfter(res.headers.get("retry-after"));
        const delay = retryDelay(attemptNo, retryAfter);
        if (delay <= maxDelay) {
          await sleep(delay, req.options?.signal);
          continue;
        }
      }
      throw error;
    }
  };
}

export type Transport = ReturnType<typeof createTransport>;
