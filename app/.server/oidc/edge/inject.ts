import { IncomingMessage, ServerResponse, type IncomingHttpHeaders, type OutgoingHttpHeaders } from "node:http";
import { Socket } from "node:net";

export interface InjectedRequest {
  method: "GET";
  /** The path the handler sees (below its mount). */
  url: string;
  /** The path the request was made at, as Express leaves it on `req.originalUrl`. */
  originalUrl: string;
  headers: IncomingHttpHeaders;
}

export interface InjectedResponse {
  status: number;
  headers: OutgoingHttpHeaders;
  body: Buffer;
}

type NodeHandler = (req: IncomingMessage, res: ServerResponse) => unknown;

/**
 * Runs one request through a node:http handler in process, without a socket, and collects what
 * it answers. It lets Porta ask an organization's provider for its own discovery and JWKS
 * documents, so that precomputed copies are what the provider itself would send.
 */
export function inject(handler: NodeHandler, request: InjectedRequest): Promise<InjectedResponse> {
  return new Promise((resolve, reject) => {
    const req = new IncomingMessage(new Socket());
    req.method = request.method;
    req.url = request.url;
    req.headers = request.headers;
    Object.assign(req, { originalUrl: request.originalUrl });
    req.push(null);
    const res = new ServerResponse(req);
    const chunks: Buffer[] = [];
    const collect = (chunk: unknown) => {
      if (typeof chunk === "string") chunks.push(Buffer.from(chunk));
      else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
    };
    res.write = ((chunk: unknown) => {
      collect(chunk);
      return true;
    }) as ServerResponse["write"];
    res.end = ((chunk?: unknown) => {
      if (chunk !== undefined && typeof chunk !== "function") collect(chunk);
      resolve({ status: res.statusCode, headers: res.getHeaders(), body: Buffer.concat(chunks) });
      return res;
    }) as ServerResponse["end"];
    try {
      Promise.resolve(handler(req, res)).catch(reject);
    } catch (error) {
      reject(error instanceof Error ? error : new Error(String(error)));
    }
  });
}
