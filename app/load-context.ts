import type { Request as ExpressRequest, Response as ExpressResponse } from "express";
import type { Services } from "~/.server/services";

declare module "@remix-run/node" {
  interface AppLoadContext {
    services: Services;
    cspNonce: string;
    requestId: string;
    /** The Express request and response, for oidc-provider's interaction helpers. */
    req: ExpressRequest;
    res: ExpressResponse;
  }
}

export {};
