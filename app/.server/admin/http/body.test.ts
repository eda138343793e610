import { describe, expect, it } from "vitest";
import { readBodyLimited } from "./body";
import { AppError } from "../../errors";

/** A request whose body is produced on demand, counting what the reader pulled. */
function streamedRequest(totalBytes: number, chunkBytes: number, headers: Record<string, string> = {}) {
  let produced = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (produced >= totalBytes) return controller.close();
        const size = Math.min(chunkBytes, totalBytes - produced);
        produced += size;
        controller.enqueue(new Uint8Array(size).fill(7));
      },
    },
    { highWaterMark: 0 },
  );
  const request = new Request("http://porta.test/upload", { method: "POST", body, headers, duplex: "half" } as RequestInit);
  return { request, produced: () => produced };
}

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe("readBodyLimited", () => {
  it("returns a body within the limit whole", async () => {
    const { request } = streamedRequest(10_000, 1_000);
    const bytes = await readBodyLimited(request, 10_000);
    expect(bytes.length).toBe(10_000);
    expect(bytes.every((b) => b === 7)).toBe(true);
  });

  it("stops pulling a 20 MB stream just past the limit and answers 413 with Connection: close", async () => {
    const { request, produced } = streamedRequest(20 * 1024 * 1024, 64 * 1024);
    const error = await refusal(readBodyLimited(request, 1024 * 1024));
    expect(error.status).toBe(413);
    expect(error.code).toBe("payload_too_large");
    expect(error.headers).toEqual({ Connection: "close" });
    expect(produced()).toBeLessThanOrEqual(1024 * 1024 + 64 * 1024);
  });

  it("refuses a declared Content-Length over the limit without reading at all", async () => {
    const { request, produced } = streamedRequest(20 * 1024 * 1024, 64 * 1024, { "content-length": String(20 * 1024 * 1024) });
    expect((await refusal(readBodyLimited(request, 1024 * 1024))).status).toBe(413);
    expect(produced()).toBe(0);
  });
});
