import { AsyncLocalStorage } from "node:async_hooks";
import type { JWTPayload } from "jose";
import type { DurableRow } from "./oidc/storage/durable-row";
import type { RequestDevice } from "./oidc/edge/request-device";

/** What Porta keeps about the request being handled, for code far from the HTTP layer. */
export interface RequestScope {
  /** Put on every log line (logging/logger.ts). */
  requestId?: string;
  /** Where the browser is, kept beside its session (oidc/edge/request-device.ts). */
  device?: RequestDevice;
  /** The claims of the access token JWT the request presented, once verified (oidc/storage/verified-jwt.ts). */
  verifiedJwt?: JWTPayload;
  /** Set while a provider serves userinfo (oidc/provider/patches.ts). */
  userinfo?: boolean;
  /** Grant rows read with a token during this protocol request, by grant id, each handed out once (oidc/storage/adapter.ts). */
  prefetchedGrants?: Map<string, DurableRow | null>;
}

/**
 * One AsyncLocalStorage for all of it (decision 059): on Node 20 each store in use adds a step to
 * every promise and callback created anywhere, and a single grant creates hundreds.
 */
const storage = new AsyncLocalStorage<RequestScope>();

/** Runs `fn` with `values` added to (or replacing those of) the current scope. */
export function inRequestScope<T>(values: RequestScope, fn: () => T): T {
  const current = storage.getStore();
  return storage.run(current ? { ...current, ...values } : values, fn);
}

/** The scope of the request being handled, if any. */
export function requestScope(): RequestScope | undefined {
  return storage.getStore();
}
