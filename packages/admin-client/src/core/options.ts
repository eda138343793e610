/** Per-call options, always the last argument of an operation. */
export interface CallOptions {
  /** An ETag from an earlier read: the write fails with PortaConflictError if the entity changed since. */
  ifMatch?: string;
  /** Cancels the call (and any retry waiting). */
  signal?: AbortSignal;
  /** Milliseconds for this call, each attempt; overrides the client's default. */
  timeout?: number;
  /** Retries of idempotent calls on 429/503; overrides the client's default. */
  maxRetries?: number;
  /** Query parameters for an operation whose input is its body. */
  query?: Record<string, string | number | boolean | undefined>;
  /** Extra request headers. */
  headers?: Record<string, string>;
}
