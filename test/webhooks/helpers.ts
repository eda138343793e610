import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A webhook receiver in the test (node:http): it records every request and answers what the test
 * scripts for each path (a status per attempt, then the last one again).
 */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url(path: string): string;
  port: number;
  received: Received[];
  /**
   * The statuses a path answers, in order; the last one repeats. Unscripted paths answer 200.
   * 0 never answers; a 3xx points to /elsewhere; `bodyBytes` answers a body that long.
   */
  script(path: string, statuses: number[], options?: { bodyBytes?: number }): void;
  close(): Promise<void>;
}

export async function startReceiver(host = "127.0.0.1"): Promise<Receiver> {
  const received: Received[] = [];
  const scripts = new Map<string, number[]>();
  const bodies = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = req.url ?? "/";
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      const statuses = scripts.get(path) ?? [200];
      const status = statuses.length > 1 ? statuses.shift()! : statuses[0]!;
      if (status === 0) return; // the request hangs until the client gives up
      const size = bodies.get(path);
      const body = size ? "x".repeat(size) : status < 300 ? "thanks" : `refused with ${status}`;
      res.writeHead(status, { "content-type": "text/plain", ...(status >= 300 && status < 400 ? { location: "/elsewhere" } : {}) }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    received,
    script: (path, statuses, options) => {
      scripts.set(path, [...statuses]);
      if (options?.bodyBytes) bodies.set(path, options.bodyBytes);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
