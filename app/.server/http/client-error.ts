import type { Socket } from "node:net";
import type { Logger } from "pino";

/**
 * Requests Node's HTTP parser refuses before Express sees them (a request line or headers over
 * 16 kB, broken framing) still get an answer in the area's error body, instead of Node's bare
 * status line, and one log line.
 */
export function answerClientError(logger: Logger) {
  return (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket) => {
    if (error.code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
    const tooLarge = error.code === "HPE_HEADER_OVERFLOW";
    const status = tooLarge ? 431 : 400;
    const reason = tooLarge ? "Request Header Fields Too Large" : "Bad Request";
    const message = tooLarge ? "The request line or headers are too large." : "The request is not valid HTTP.";
    // The request line, when the parser got that far, tells which area the client meant.
    const target = /^[A-Z]+ (\S+)/.exec(error.rawPacket?.subarray(0, 2048).toString("latin1") ?? "")?.[1] ?? "";
    const body = JSON.stringify(
      target.startsWith("/api/admin") ? { error: { code: tooLarge ? "request_too_large" : "bad_request", message } } : { error: "invalid_request", error_description: message },
    );
    logger.info({ status, reason: error.code }, "request refused by the HTTP parser");
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };
}
