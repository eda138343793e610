import { AppError } from "../../errors";

/**
 * Reads a request body up to `maxBytes` without ever holding more: a declared Content-Length
 * over the limit is refused before a byte is read, and a body without one (chunked) is counted
 * while it streams and abandoned at the limit. The 413 closes the connection, so the rest of an
 * oversize upload is never read.
 */
export function payloadTooLarge(maxBytes: number) {
  return new AppError(413, "payload_too_large", `The request body is larger than ${maxBytes} bytes.`, undefined, { Connection: "close" });
}

export async function readBodyLimited(request: Request, maxBytes: number): Promise<Buffer> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) throw payloadTooLarge(maxBytes);
  if (!request.body) return Buffer.alloc(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      // Not reader.cancel(): that destroys the socket before the 413 could be sent.
      if (total > maxBytes) throw payloadTooLarge(maxBytes);
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  return Buffer.concat(chunks, total);
}
