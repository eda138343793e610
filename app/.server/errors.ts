/**
 * The one family of errors a service throws when a request cannot be done as asked. Each carries
 * the HTTP status, a snake_case `code`, a public `message` and, for invalid input, the fields at
 * fault. Errors of one kind (a registration refusal, a refused SVG) are subclasses, so callers
 * can still tell them apart. Services never build HTTP responses: the Admin API's route helper, the console and the
 * pages map these to their own bodies.
 */
export interface FieldDetail {
  field: string;
  message: string;
}

export class AppError extends Error {
  /** What only the logs may see (an upstream's answer, an internal reason); `message` is what the caller is told. */
  readonly detail?: string;

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: FieldDetail[],
    readonly headers?: Record<string, string>,
    options?: { detail?: string; cause?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AppError";
    if (options?.detail !== undefined) this.detail = options.detail;
  }
}

export const unauthorized = () =>
  new AppError(401, "unauthorized", "A valid admin access token is required.", undefined, { "WWW-Authenticate": 'Bearer realm="porta-admin"' });
export const forbidden = (permission: string) => new AppError(403, "forbidden", `This operation needs the permission ${permission}.`);
export const notFound = (what = "resource") => new AppError(404, "not_found", `The ${what} does not exist.`);
export const conflict = (code: string, message: string, details?: FieldDetail[]) => new AppError(409, code, message, details);
export const staleEtag = () => new AppError(409, "etag_mismatch", "The resource changed since you read it. Read it again and retry.");
export const validation = (details: FieldDetail[], message = "The request is not valid.") => new AppError(422, "validation_failed", message, details);
export const badRequest = (message: string) => new AppError(400, "bad_request", message);
/** Seconds a client should wait before retrying while a store Porta needs does not answer. */
export const RETRY_AFTER_SECONDS = 5;
/** A store Porta needs is not answering: the request may work shortly, and says so (never a 401). */
export const unavailable = () =>
  new AppError(503, "unavailable", "Porta cannot reach its database right now. Try again shortly.", undefined, { "Retry-After": String(RETRY_AFTER_SECONDS) });
