/**
 * A refusal of the Shared Signals endpoints (decision 093), in the OAuth error form receivers
 * already parse (RFC 6749 §5.2, RFC 6750 §3): `error` and `error_description`, the HTTP status
 * SSF 1.0 §8 names (400 invalid, 401 no valid token, 403 a token without the scope, 404 no such
 * stream for this client), and the headers a 401, 403 or 429 carries.
 */
export class SsfError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly description: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
    this.name = "SsfError";
  }

  toBody() {
    return { error: this.code, error_description: this.description };
  }
}
