/**
 * Why a request was refused, in RFC 6750 §3.1's terms: the status it is answered with and the
 * `error` of its WWW-Authenticate challenge. The description is public (it goes to the client);
 * it never contains the token.
 */
export type BearerErrorCode = "invalid_request" | "invalid_token" | "insufficient_scope";

const STATUS: Record<BearerErrorCode, number> = { invalid_request: 400, invalid_token: 401, insufficient_scope: 403 };

export class BearerError extends Error {
  readonly code: BearerErrorCode;
  readonly status: number;

  constructor(code: BearerErrorCode, description: string, options?: { cause?: unknown }) {
    super(description, options);
    this.name = "BearerError";
    this.code = code;
    this.status = STATUS[code];
  }
}

/**
 * The issuer's discovery document or key set could not be read: not the token's fault, so the
 * middleware answers 503 rather than sending the client to sign in again.
 */
export class IssuerUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "IssuerUnavailableError";
  }
}
