import { connect as netConnect, isIP, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { assertPublicHost, guardedLookup } from "../outbound/guard";
import { reasonOf, type SendResult } from "../webhooks/send";

/**
 * RFC 5424 syslog messages to a collector over TCP with RFC 6587 octet-counting framing,
 * TLS by default (`tls://`, RFC 5425), guarded like every outbound request: the name resolved
 * and special-use addresses refused unless OUTBOUND_ALLOW_PRIVATE_NETWORKS. Syslog has no
 * acknowledgement: a batch counts as delivered once every byte was written and the connection
 * closed cleanly; one connection per batch, so each batch resolves and checks the address again.
 */
export interface SyslogOptions {
  /** The collector's CA (PEM), instead of the public ones. */
  caPem: string | null;
  allowPrivateNetworks: boolean;
  timeoutMs: number;
}

export function sendSyslog(target: string, frames: string, options: SyslogOptions): Promise<SendResult> {
  const started = Date.now();
  const done = (error: string | null): SendResult => ({ statusCode: null, error, responseBody: null, durationMs: Date.now() - started });
  let url: URL;
  try {
    url = new URL(target);
    assertPublicHost(url, options.allowPrivateNetworks);
  } catch (error) {
    return Promise.resolve(done(reasonOf(error)));
  }
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const port = Number(url.port);
  const lookup = guardedLookup(options.allowPrivateNetworks);
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    let socket: Socket;
    const finish = (error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      if (error) socket.destroy();
      resolve(done(error));
    };
    const send = () => {
      socket.end(frames, "utf8");
    };
    if (url.protocol === "tls:") {
      socket = tlsConnect({ host, port, lookup, ...(isIP(host) ? {} : { servername: host }), ...(options.caPem ? { ca: [options.caPem] } : {}) }, send);
    } else {
      socket = netConnect({ host, port, lookup }, send);
    }
    const deadline = setTimeout(() => finish("TIMEOUT"), options.timeoutMs);
    socket.on("error", (error) => finish(reasonOf(error)));
    // The collector says nothing back; what it sends is not read.
    socket.on("data", () => undefined);
    socket.on("finish", () => {
      // Every byte handed to the kernel and our side closed; the collector closing its side ends it.
      socket.on("close", (hadError) => finish(hadError ? "SOCKET_ERROR" : null));
      socket.once("end", () => socket.destroy());
      // A collector that keeps its side open gets a moment, then the socket is closed by us.
      setTimeout(() => {
        if (!settled) {
          socket.destroy();
          finish(null);
        }
      }, 200).unref();
    });
  });
}
