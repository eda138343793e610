import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { createServer as createTlsServer, type TLSSocket } from "node:tls";

/**
 * Receivers for the audit stream's tests, in the test process: an HTTP one (JSON lines, Splunk
 * HEC, Datadog, OTLP) that records every request and answers what the test scripts, and a syslog
 * collector over TLS (a self-signed certificate made with openssl) that splits what it reads by
 * RFC 6587 octet counting.
 */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface HttpReceiver {
  port: number;
  url(path: string): string;
  received: Received[];
  /** Every request read, answered or not (a receiver may have taken in what it never acknowledged). */
  seen: Received[];
  /** Statuses a path answers in order, the last one repeating; 0 never answers. Unscripted: 200. */
  script(path: string, statuses: number[]): void;
  close(): Promise<void>;
}

export async function startHttpReceiver(port = 0): Promise<HttpReceiver> {
  const received: Received[] = [];
  const seen: Received[] = [];
  const scripts = new Map<string, number[]>();
  const server: Server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = (req.url ?? "/").split("?")[0]!;
      const statuses = scripts.get(path) ?? [200];
      const status = statuses.length > 1 ? statuses.shift()! : statuses[0]!;
      seen.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      // A request that is answered is recorded; one that hangs or fails is the receiver's loss.
      if (status === 0) return;
      if (status < 300) received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(status, { "content-type": "text/plain" }).end(status < 300 ? "ok" : "no");
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    port: bound,
    url: (p) => `http://127.0.0.1:${bound}${p}`,
    received,
    seen,
    script: (p, statuses) => void scripts.set(p, [...statuses]),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface SyslogCollector {
  port: number;
  caPem: string;
  /** Every message read, whole, in order. */
  messages: string[];
  close(): Promise<void>;
}

export async function startSyslogCollector(): Promise<SyslogCollector> {
  const dir = mkdtempSync(path.join(tmpdir(), "porta-syslog-"));
  const key = path.join(dir, "key.pem");
  const cert = path.join(dir, "cert.pem");
  execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"], { stdio: "ignore" });
  const caPem = readFileSync(cert, "utf8");
  const messages: string[] = [];
  const sockets = new Set<Socket>();
  const server = createTlsServer({ key: readFileSync(key), cert: caPem }, (socket: TLSSocket) => {
    sockets.add(socket);
    let buffer = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const space = buffer.indexOf(0x20);
        if (space < 0) return;
        const length = Number(buffer.subarray(0, space).toString("ascii"));
        if (buffer.length < space + 1 + length) return;
        messages.push(buffer.subarray(space + 1, space + 1 + length).toString("utf8"));
        buffer = buffer.subarray(space + 1 + length);
      }
    });
    socket.on("end", () => socket.end());
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    caPem,
    messages,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
