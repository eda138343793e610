/**
 * Typed errors of the admin client. Every failed call throws a PortaError subclass chosen by
 * the HTTP status; each keeps the server's error code, message, field details and the request
 * id to quote in a report.
 */
export interface FieldDetail {
  field: string;
  message: string;
}

export interface PortaErrorInit {
  status: number;
  code: string;
  message: string;
  requestId?: string | undefined;
  details?: FieldDetail[] | undefined;
}

export class PortaError extends Error {
  readonly status: number;
  readonly code: string;
  readonly requestId: string | undefined;
  readonly details: FieldDetail[] | undefined;

  constructor(init: PortaErrorInit) {
    super(init.message);
    this.name = new.target.name;
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.details = init.details;
  }
}

/** 401: the token is missing, invalid, expired or revoked, or the user is no longer an admin. */
export class PortaAuthenticationError extends PortaError {}
/** 403: the admin's roles lack the operation's permission. */
export class PortaForbiddenError extends PortaError {}
/** 404: the resource does not exist. */
export class PortaNotFoundError extends PortaError {}
/** 409: a stale If-Match (the entity changed since it was read) or a duplicate. */
export class PortaConflictError extends PortaError {}

/** 422: invalid input; `details` names each field. */
export class PortaValidationError extends PortaError {
  declare readonly details: FieldDetail[];
  constructor(init: PortaErrorInit) {
    super({ ...init, details: init.details ?? [] });
  }
}

/** 429: rate limited; `retryAfter` is in seconds when the server said. */
export class PortaRateLimitError extends PortaError {
  readonly retryAfter: number | undefined;
  constructor(init: PortaErrorInit & { retryAfter?: number | undefined }) {
    super(init);
    this.retryAfter = init.retryAfter;
  }
}

/** 5xx: the server failed; quote `requestId` when reporting it. */
export class PortaServerError extends PortaError {}

/** The call took longer than its timeout (no HTTP status). */
export class PortaTimeoutError extends PortaError {}

/** Why a request got no HTTP answer at all. */
export type ConnectionFailure = "refused" | "dns" | "tls" | "timeout" | "reset" | "unreachable" | "network";

const FAILURE_CODES: Record<ConnectionFailure, string> = {
  refused: "connection_refused",
  dns: "dns_failed",
  tls: "tls_failed",
  timeout: "connect_timeout",
  reset: "connection_reset",
  unreachable: "host_unreachable",
  network: "network_error",
};

/**
 * The server could not be reached: no HTTP status, but the URL that failed and why (refused,
 * DNS, TLS, …), with the system's error code (`ECONNREFUSED`, `ENOTFOUND`, `CERT_HAS_EXPIRED`).
 */
export class PortaConnectionError extends PortaError {
  readonly url: string;
  readonly reason: ConnectionFailure;
  readonly systemCode: string | undefined;
  constructor(init: PortaErrorInit & { url: string; reason: ConnectionFailure; systemCode?: string | undefined }) {
    super(init);
    this.url = init.url;
    this.reason = init.reason;
    this.systemCode = init.systemCode;
  }
}

interface SystemErrorShape {
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
  hostname?: unknown;
}

/** The innermost error that names a system code: fetch wraps it in `cause`, happy eyeballs in an AggregateError. */
function systemErrorOf(error: unknown): SystemErrorShape | undefined {
  let current: unknown = error;
  let innermost: SystemErrorShape | undefined;
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    innermost = current as SystemErrorShape;
    if (typeof innermost.code === "string") break;
    current = Array.isArray(innermost.errors) && innermost.errors.length > 0 ? innermost.errors[0] : innermost.cause;
  }
  return innermost;
}

const TLS_CODE = /^(ERR_SSL_|ERR_TLS_|EPROTO$)|CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/;

/** A URL to show: without credentials or query (which may carry codes). */
function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    parsed.search = "";
    parsed.hash = "";
    return parsed.href;
  } catch {
    return url;
  }
}

/** The error for a request that got no HTTP answer (what `fetch` throws), naming the URL and the reason. */
export function connectionErrorOf(error: unknown, url: string): PortaConnectionError {
  const system = systemErrorOf(error);
  const code = typeof system?.code === "string" ? system.code : undefined;
  const detail = typeof system?.message === "string" ? system.message.split("\n")[0]!.trim() : error instanceof Error ? error.message : String(error);
  const host = (() => {
    try {
      return new URL(url).hostname;
    } catch {
      return url;
    }
  })();
  const https = url.startsWith("https:");
  let reason: ConnectionFailure;
  let why: string;
  if (code === "ECONNREFUSED") {
    reason = "refused";
    why = "the connection was refused: nothing listens there (is Porta running, and is the port right?)";
  } else if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_NONAME" || code === "EAI_FAIL") {
    reason = "dns";
    why = code === "EAI_AGAIN" ? `the host name ${host} could not be looked up (DNS did not answer)` : `the host name ${host} was not found in DNS`;
  } else if ((code && TLS_CODE.test(code)) || (https && /\bTLS\b|\bSSL\b|certificate/i.test(detail))) {
    reason = "tls";
    why =
      code === "ERR_SSL_WRONG_VERSION_NUMBER" || code === "ERR_SSL_PACKET_LENGTH_TOO_LONG"
        ? "the TLS handshake failed: the server does not speak TLS on that port (is the URL http://?)"
        : `the TLS handshake failed: ${detail}`;
  } else if (code === "ETIMEDOUT" || code === "UND_ERR_CONNECT_TIMEOUT") {
    reason = "timeout";
    why = "connecting timed out";
  } else if (code === "ECONNRESET" || code === "UND_ERR_SOCKET" || code === "EPIPE") {
    reason = "reset";
    why = "the connection was closed before an answer";
  } else if (code === "EHOSTUNREACH" || code === "ENETUNREACH" || code === "EADDRNOTAVAIL") {
    reason = "unreachable";
    why = "the host or its network is unreachable";
  } else {
    reason = "network";
    why = detail;
  }
  const shown = shownUrl(url);
  return new PortaConnectionError({ status: 0, code: FAILURE_CODES[reason], message: `Could not reach ${shown}: ${why}${code ? ` (${code})` : ""}.`, url: shown, reason, systemCode: code });
}

/** Seconds from a Retry-After header (delta-seconds or an HTTP date). */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

interface ErrorBodyShape {
  error?: { code?: unknown; message?: unknown; details?: unknown };
}

function detailsOf(value: unknown): FieldDetail[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value
    .filter((d): d is { field: unknown; message: unknown } => typeof d === "object" && d !== null)
    .map((d) => ({ field: String(d.field), message: String(d.message) }));
}

/** The error for a non-2xx response, from its status, body and headers. */
export function errorFromResponse(status: number, body: unknown, headers: Headers): PortaError {
  const error = typeof body === "object" && body !== null ? (body as ErrorBodyShape).error : undefined;
  const init: PortaErrorInit = {
    status,
    code: typeof error?.code === "string" ? error.code : `http_${status}`,
    message: typeof error?.message === "string" ? error.message : `The server answered ${status}.`,
    requestId: headers.get("x-request-id") ?? undefined,
    details: detailsOf(error?.details),
  };
  if (status === 401) return new PortaAuthenticationError(init);
  if (status === 403) return new PortaForbiddenError(init);
  if (status === 404) return new PortaNotFoundError(init);
  if (status === 409) return new PortaConflictError(init);
  if (status === 422) return new PortaValidationError(init);
  if (status === 429) return new PortaRateLimitError({ ...init, retryAfter: parseRetryAfter(headers.get("retry-after")) });
  if (status >= 500) return new PortaServerError(init);
  return new PortaError(init);
}
