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
  /** The statuses a path answers, in order; the last one repeats. Unscripted paths answer 200. */
  script(path: string, statuses: number[]): void;
  close(): Promise<void>;
}

export async function startReceiver(host = "127.0.0.1"): Promise<Receiver> {
  const received: Received[] = [];
  const scripts = new Map<string, number[]>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = req.url ?? "/";
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      const statuses = scripts.get(path) ?? [200];
      const status = statuses.length > 1 ? statuses.shift()! : statuses[0]!;
      res.writeHead(status, { "content-type": "text/plain" }).end(status < 300 ? "thanks" : `refused with ${status}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    received,
    script: (path, statuses) => void scripts.set(path, [...statuses]),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
