import type { AuthProvider } from "./auth/provider.js";
import { buildNamespaces, callOperation, type Namespaces } from "./core/operation.js";
import { createTransport, type RawRequest, type RawResponse, type TransportOptions } from "./core/request.js";

export type PortaAdminOptions = TransportOptions & { auth: AuthProvider };

/** The Admin API client: one namespace per area (`organizations`, `users`, `customClaims` …). */
export type PortaAdmin = Namespaces & {
  /** Calls an operation by its operationId with positional arguments (path values, input, options). */
  call(operationId: string, ...args: unknown[]): Promise<unknown>;
  /** A raw Admin API request through the same auth, retries and errors. */
  request(req: RawRequest): Promise<RawResponse>;
};

class PortaAdminClient {
  constructor(options: PortaAdminOptions) {
    const transport = createTransport(options);
    Object.assign(this, buildNamespaces(transport), {
      call: (operationId: string, ...args: unknown[]) => callOperation(transport, operationId, args),
      request: transport,
    });
  }
}

export const PortaAdmin = PortaAdminClient as unknown as new (options: PortaAdminOptions) => PortaAdmin;
