import type { IncomingMessage, ServerResponse } from "node:http";
import proxyaddr from "proxy-addr";
import type { Logger } from "pino";
import { SLUG_PATTERN_ANY_CASE } from "~/schemas/slug";
import type { ProtocolHandler, ProtocolIncoming } from "../oidc/edge/mount";
import { answerInternalError } from "./internal-error";
import { rewriteToPublicOrigin } from "./public-origin";
import { startRequest } from "./request-id";
import { staticSecurityHeaders } from "./security-headers";
import { inRequestScope } from "../request-scope";

type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface ProtocolFirstOptions {
  serve: ProtocolHandler;
  baseUrl: string;
  mode: "production" | "development";
  logger: Logger;
  /** Express's compiled TRUST_PROXY (`app.get("trust proxy fn")`), so both agree on the client's address. */
  trustProxy: (address: string, hop: number) => boolean;
}

/**
 * A POST to the token endpoint (either spelling), introspection or revocation: exactly that
 * path, no query string. These answer JSON only, and are what relying parties and resource
 * servers call most after discovery.
 */
const MACHINE_POST_URL = /^\/([^/]+)(\/auth\/token|\/token(?:\/introspection|\/revocation)?)$/;

/**
 * Serves the machine-to-machine protocol endpoints before Express (as http/well-known-first.ts
 * does discovery): Express's routing, Helmet's per-request policy and the page nonce cost a
 * grant or an introspection about a quarter of its CPU, and none of it applies to a JSON answer.
 * What the Express path does for these requests is done here with the same helpers: Host and
 * the forwarding headers rewritten to BASE_URL (public-origin.ts), the request id, its log
 * context and access line (request-id.ts), Helmet's headers as computed once for documents
 * without script, and then the same protocol handler (oidc/edge/mount.ts). The edge guard has nothing
 * to check: the path admits no encoding and there is no query, and protocol endpoints take posts
 * from any origin. Everything else goes to `next`, the Express app, untouched.
 */
export function protocolFirst(options: ProtocolFirstOptions, next: NodeHandler): NodeHandler {
  const { serve, logger, trustProxy } = options;
  const toPublic = rewriteToPublicOrigin(options.baseUrl);
  const security = staticSecurityHeaders(options.baseUrl, options.mode);
  return (req: ProtocolIncoming, res) => {
    const match = req.method === "POST" ? MACHINE_POST_URL.exec(req.url ?? "") : null;
    if (!match || !SLUG_PATTERN_ANY_CASE.test(match[1]!)) return next(req, res);
    const ip = req.socket.remoteAddress === undefined ? undefined : proxyaddr(req, trustProxy);
    toPublic(req.headers, ip);
    const requestId = startRequest(logger, req, res, () => (req.originalUrl ?? req.url ?? "").split("?")[0]!);
    for (const [name, value] of security) res.setHeader(name, value);
    inRequestScope({ requestId }, () => {
      serve(req, res, { slug: match[1]!, path: match[2]!, search: "", ip }).catch((error: unknown) => answerInternalError(logger, res, requestId, error));
    });
  };
}
