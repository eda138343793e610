import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { staticToken } from "../auth/provider.js";
import { PortaAdmin } from "../client.js";
import { PortaError, PortaRateLimitError, PortaServerError, PortaTimeoutError } from "./errors.js";

/**
 * No Admin API route of Porta answers 429 or 5xx on demand, so these cases run against a small
 * local HTTP server that answers with the scripted statuses and headers, and records every
 * request it really received. Each test's client has a base path of its own: a request that an
 * earlier test abandoned can still arrive late (on a busy machine), and must not take this test's
 * scripted replies.
 */
type Reply = { status: number; headers?: Record<string, string>; body?: unknown; delayMs?: number };

let server: Server;
let baseUrl: string;
let replies: Reply[] = [];
let received: Array<{ method: string; url: string; authorization: string | undefined; contentType: string | undefined; body: string }> = [];
let testNo = 0;
const testPath = () => `/test-${testNo}`;

beforeAll(async () => {
  server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (!req.url!.startsWith(`${testPath()}/`)) {
      res.writeHead(410).end();
      return;
    }
    received.push({ method: req.method!, url: req.url!.slice(testPath().length), authorization: req.headers.authorization, contentType: req.headers["content-type"], body: Buffer.concat(chunks).toString("utf8") });
    const reply = replies.shift() ?? { status: 200, body: { ok: true } };
    const send = () => {
      if (res.destroyed) return;
      res.writeHead(reply.status, { "content-type": "application/json", "x-request-id": `req-${received.length}`, ...reply.headers });
      res.end(reply.body === undefined ? "" : typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body));
    };
    if (reply.delayMs) setTimeout(send, reply.delayMs);
    else send();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  testNo++;
  replies = [];
  received = [];
});

const client = (options: { maxRetries?: number; timeout?: number } = {}) => new PortaAdmin({ baseUrl: `${baseUrl}${testPath()}`, auth: staticToken("t0ken"), ...options });
const rateLimited = (retryAfter: string): Reply => ({ status: 429, headers: { "retry-after": retryAfter }, body: { error: { code: "rate_limited", message: "Slow down." } } });
const unavailable: Reply = { status: 503, body: { error: { code: "unavailable", message: "Try again." } } };

describe("retries", () => {
  it("retries a GET after 429, honouring Retry-After, then succeeds", async () => {
    replies = [rateLimited("0"), rateLimited("0"), { status: 200, body: { id: "x" } }];
    expect(await client().stats.get()).toEqual({ id: "x" });
    expect(received.map((r) => `${r.method} ${r.url}`)).toEqual(Array(3).fill("GET /api/admin/stats/overview"));
    expect(received[0]!.authorization).toBe("Bearer t0ken");
  });

  it("retries PUT and DELETE on 503", async () => {
    replies = [unavailable, { status: 200, body: { key: "k", value: 1 } }, unavailable, { status: 204 }];
    await client().config.set("auth.passwordMinLength", { value: 9 });
    await client().sessions.revoke("s1");
    expect(received.map((r) => r.method)).toEqual(["PUT", "PUT", "DELETE", "DELETE"]);
  });

  it("never retries a POST", async () => {
    replies = [rateLimited("0")];
    const error = await client().keys.rotateAll().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PortaRateLimitError);
    expect(received).toHaveLength(1);
    replies = [unavailable];
    expect(await client().keys.rotateAll().catch((e: unknown) => e)).toBeInstanceOf(PortaServerError);
    expect(received).toHaveLength(2);
  });

  it("gives up after maxRetries with PortaRateLimitError carrying retryAfter", async () => {
    replies = [rateLimited("0"), rateLimited("0"), rateLimited("7")];
    const error = (await client({ maxRetries: 1 }).stats.get().catch((e: unknown) => e)) as PortaRateLimitError;
    expect(received).toHaveLength(2);
    expect(error).toBeInstanceOf(PortaRateLimitError);
    expect(error).toBeInstanceOf(PortaError);
    expect(error).toMatchObject({ status: 429, code: "rate_limited", message: "Slow down.", requestId: "req-2", retryAfter: 0 });
  });

  it("does not wait for a Retry-After longer than maxRetryDelay", async () => {
    replies = [rateLimited("120")];
    const started = Date.now();
    const error = (await client().stats.get().catch((e: unknown) => e)) as PortaRateLimitError;
    expect(Date.now() - started).toBeLessThan(2000);
    expect(error.retryAfter).toBe(120);
    expect(received).toHaveLength(1);
  });

  it("maps 500 to PortaServerError without retrying", async () => {
    replies = [{ status: 500, body: { error: { code: "internal_error", message: "Quote the request id." } } }];
    const error = await client().stats.get().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PortaServerError);
    expect(error).toMatchObject({ status: 500, code: "internal_error", requestId: "req-1" });
    expect(received).toHaveLength(1);
  });
});

describe("timeouts and cancellation", () => {
  it("fails a call that outlives its timeout with PortaTimeoutError", async () => {
    replies = [{ status: 200, body: {}, delayMs: 1500 }];
    const error = await client().stats.get({ timeout: 100 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PortaTimeoutError);
  });

  it("stops a call when its AbortSignal fires", async () => {
    replies = [{ status: 200, body: {}, delayMs: 1500 }];
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await client().stats.get({ signal: controller.signal }).catch((e: unknown) => e);
    expect((error as Error).name).toBe("AbortError");
    expect(error).not.toBeInstanceOf(PortaTimeoutError);
  });

  it("stops waiting for a retry when aborted", async () => {
    replies = [rateLimited("5")];
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    await expect(client().stats.get({ signal: controller.signal })).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(2000);
    expect(received).toHaveLength(1);
  });
});

describe("requests", () => {
  it("sends path values encoded and the query", async () => {
    replies = [{ status: 200, body: { data: [], total: 0, page: 1, pageSize: 20 } }];
    await client().users.list("org/1", { q: "a b", page: 2 });
    expect(received[0]!.url).toBe("/api/admin/organizations/org%2F1/users?q=a+b&page=2");
  });
});

describe("uploads and downloads", () => {
  it("sends a raw body with its content type and keeps a binary answer as a Blob", async () => {
    replies = [{ status: 200, headers: { "content-type": "application/gzip" }, body: "binary-bytes" }];
    const res = await client().request({ method: "POST", path: "/imports/preview", rawBody: "raw-upload", contentType: "application/octet-stream" });
    expect(received[0]).toMatchObject({ contentType: "application/octet-stream", body: "raw-upload" });
    expect(res.body).toBeInstanceOf(Blob);
    expect(await (res.body as Blob).text()).toBe("binary-bytes");
  });

  it("sends JSON bodies as JSON", async () => {
    replies = [{ status: 200, body: { key: "auth.passwordMinLength", value: 12 } }];
    await client().config.set("auth.passwordMinLength", { value: 12 });
    expect(received[0]).toMatchObject({ method: "PUT", contentType: "application/json", body: '{"value":12}' });
  });
});
