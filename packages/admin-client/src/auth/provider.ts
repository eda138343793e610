/** Supplies the bearer token of each Admin API call. */
export interface AuthProvider {
  getToken(signal?: AbortSignal): Promise<string>;
  /** Called after a 401: drop a cached token so the next getToken obtains a fresh one. Returns true when retrying can help. */
  invalidate?(): boolean | Promise<boolean>;
}

/** A fixed bearer token, e.g. from an environment variable. */
export function staticToken(token: string): AuthProvider {
  return { getToken: async () => token };
}
