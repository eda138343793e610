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
