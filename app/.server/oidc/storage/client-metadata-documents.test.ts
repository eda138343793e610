import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMetadataDocumentClients, DOCUMENT_MAX_BYTES, documentTtlSeconds } from "./client-metadata-documents";

/**
 * Fetching documents through the real outbound guard from a local server (private networks
 * allowed, as in tests and closed networks): what is kept and for how long, one fetch per URL at
 * a time, and the hostile answers that make a document unusable.
 */
type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const routes = new Map<string, Handler>();
const hits = new Map<string, number>();
let base: string;
const server = createServer((req, res) => {
  hits.set(req.url!, (hits.get(req.url!) ?? 0) + 1);
  const handler = routes.get(req.url!);
  if (!handler) {
    res.writeHead(404).end();
    return;
  }
  handler(req, res);
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const json = (body: unknown, headers: Record<string, string> = {}): Handler => (_req, res) => {
  res.writeHead(200, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
};
const documentFor = (path: string) => ({ client_id: `${base}${path}`, client_name: "Agent", redirect_uris: ["http://127.0.0.1:9999/cb"] });

describe("client metadata document fetching", () => {
  it("reads Cache-Control within bounds", () => {
    expect(documentTtlSeconds(null)).toBe(300);
    expect(documentTtlSeconds("public, max-age=3600")).toBe(3600);
    expect(documentTtlSeconds("max-age=5")).toBe(60);
    expect(documentTtlSeconds("max-age=99999999")).toBe(86_400);
    expect(documentTtlSeconds("no-store")).toBe(60);
    expect(documentTtlSeconds("private, no-cache")).toBe(60);
  });

  it("fetches a document once for concurrent lookups and keeps it", async () => {
    routes.set("/kept.json", json(documentFor("/kept.json"), { "cache-control": "max-age=600" }));
    const clients = createMetadataDocumentClients({ allowPrivateNetworks: true });
    const url = new URL(`${base}/kept.json`);
    const results = await Promise.all([clients.lookup(url), clients.lookup(url), clients.lookup(url)]);
    expect(results.every((r) => r.ok)).toBe(true);
    await clients.lookup(url);
    expect(hits.get("/kept.json")).toBe(1);
  });

  it("refuses hostile answers and remembers the refusal instead of fetching again", async () => {
    routes.set("/redirect.json", (_req, res) => res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data" }).end());
    routes.set("/huge.json", (_req, res) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ...documentFor("/huge.json"), pad: "x".repeat(DOCUMENT_MAX_BYTES) })));
    routes.set("/bomb.json", (_req, res) => res.writeHead(200, { "content-type": "application/json" }).end(`${"[".repeat(4000)}${"]".repeat(4000)}`.slice(0, 5000)));
    routes.set("/html.json", (_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<html></html>"));
    routes.set("/broken.json", (_req, res) => res.writeHead(200, { "content-type": "application/json" }).end("{not json"));
    routes.set("/other.json", json(documentFor("/someone-else.json")));
    routes.set("/gone.json", (_req, res) => res.writeHead(500).end());
    const clients = createMetadataDocumentClients({ allowPrivateNetworks: true });
    const expectations: Record<string, string | RegExp> = {
      "/redirect.json": "the document's URL redirects (not followed)",
      "/huge.json": "the response is too large",
      "/bomb.json": /^the document is not/,
      "/html.json": "the document is not JSON (Content-Type)",
      "/broken.json": "the document is not valid JSON",
      "/other.json": "client_id differs from the document's URL",
      "/gone.json": "the document's URL answered 500",
    };
    for (const [path, problem] of Object.entries(expectations)) {
      const url = new URL(`${base}${path}`);
      const first = await clients.lookup(url);
      expect(first.ok, path).toBe(false);
      if (!first.ok) expect(first.problem, path).toMatch(problem);
      await clients.lookup(url);
      expect(hits.get(path), path).toBe(1);
    }
  });

  it("never reaches a private address unless the operator allows it", async () => {
    routes.set("/private.json", json(documentFor("/private.json")));
    const clients = createMetadataDocumentClients({ allowPrivateNetworks: false });
    const result = await clients.lookup(new URL(`${base}/private.json`));
    expect(result).toEqual({ ok: false, problem: "127.0.0.1 is a special-use address" });
    expect(hits.get("/private.json")).toBeUndefined();
  });

  it("gives up on a document that does not arrive in time", async () => {
    routes.set("/slow.json", () => undefined);
    const clients = createMetadataDocumentClients({
      allowPrivateNetworks: true,
      fetch: (input, init) => globalThis.fetch(input, { ...init, signal: AbortSignal.timeout(200) }),
    });
    expect(await clients.lookup(new URL(`${base}/slow.json`))).toEqual({ ok: false, problem: "the document did not arrive in time" });
  });
});
