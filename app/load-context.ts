import type { Services } from "~/.server/services";

declare module "@remix-run/node" {
  interface AppLoadContext {
    services: Services;
    cspNonce: string;
    requestId: string;
  }
}

export {};
