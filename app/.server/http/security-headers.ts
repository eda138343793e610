import type { IncomingMessage, ServerResponse } from "node:http";
import helmet, { type HelmetOptions } from "helmet";

type ScriptSource = NonNullable<NonNullable<Exclude<HelmetOptions["contentSecurityPolicy"], boolean>>["directives"]>[string];

/**
 * Helmet's options for every response Porta sends through Express. `scriptSource` is the page's
 * per-request nonce there; documents that carry no script (the precomputed discovery and JWKS,
 * http/well-known-first.ts) get the same policy without it.
 */
export function securityHeaderOptions(baseUrl: string, mode: "production" | "development", scriptSource: ScriptSource): HelmetOptions {
  const https = baseUrl.startsWith("https:");
  return {
    contentSecurityPolicy:
      mode === "development"
        ? false
        : {
            directives: {
              "script-src": scriptSource,
              "img-src": ["'self'", "data:", "https:"],
              // form-action would also restrict the redirect to a client's redirect_uri after
              // an interaction form is posted, which breaks OIDC flows in Chromium.
              "form-action": null,
              "upgrade-insecure-requests": https ? [] : null,
            },
          },
    // Not helmet's "no-referrer": under it a browser sends `Origin: null` with a same-origin form
    // POST, and Remix aborts every such action as a potential CSRF attack (so nobody could sign
    // in). "same-origin" still sends nothing to other sites (logo hosts, relying parties).
    referrerPolicy: { policy: "same-origin" },
    strictTransportSecurity: https,
    crossOriginEmbedderPolicy: false,
  };
}

/**
 * The headers helmet sets under these options when no value depends on the request: computed
 * once by running helmet itself, so they cannot drift from what Express sends.
 */
export function staticSecurityHeaders(baseUrl: string, mode: "production" | "development"): Array<[string, string]> {
  const headers = new Map<string, string>();
  const res = {
    setHeader(name: string, value: unknown) {
      headers.set(name, String(value));
      return res;
    },
    removeHeader(name: string) {
      headers.delete(name);
    },
  };
  let done = false;
  helmet(securityHeaderOptions(baseUrl, mode, ["'self'"]))({} as IncomingMessage, res as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error instanceof Error ? error : new Error(String(error));
    done = true;
  });
  if (!done) throw new Error("helmet did not finish synchronously");
  return [...headers];
}
