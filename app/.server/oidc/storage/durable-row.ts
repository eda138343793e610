import type { AdapterPayload } from "oidc-provider";

/**
 * A durable token or grant row as the adapter reads it (storage/adapter.ts), in a module of its
 * own: the request scope holds the grant rows a protocol request read ahead (request-scope.ts),
 * and the adapter itself reads the request scope.
 */
export interface DurableRow extends Record<string, unknown> {
  organizationId: string;
  payload: AdapterPayload;
  expiresAt: Date | string | null;
  consumedAt: Date | string | null;
}
