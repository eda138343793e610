import { LRUCache } from "lru-cache";
import { readClientMetadataDocument, type ClientMetadataDocument } from "~/schemas/client-metadata-document";
import { guardedFetch, OutboundRefusedError } from "../../outbound/guard";

/**
 * Fetching client ID metadata documents (schemas/client-metadata-document.ts): through the
 * outbound guard (no private addresses unless an operator allows them, no redirects followed,
 * 5 s, 5 KiB), kept as long as the document's Cache-Control says within bounds, and one fetch at
 * a time per URL however many lookups a request makes. A document that cannot be used is
 * remembered as such for a short while, so a broken or hostile URL is not fetched on every
 * request either.
 */
export const DOCUMENT_MAX_BYTES = 5 * 1024;
export const DOCUMENT_TIMEOUT_MS = 5_000;
export const DOCUMENT_TTL_SECONDS = { min: 60, max: 24 * 3600, fallback: 300, refused: 30 } as const;

export type DocumentLookup = { ok: true; document: ClientMetadataDocument } | { ok: false; problem: string };

type Fetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** Seconds to keep a document, from its Cache-Control max-age, within bounds. */
export function documentTtlSeconds(cacheControl: string | null): number {
  const directives = (cacheControl ?? "").toLowerCase();
  if (/(^|,)\s*(no-store|no-cache)\s*(,|$)/.test(directives)) return DOCUMENT_TTL_SECONDS.min;
  const maxAge = /(?:^|,)\s*max-age\s*=\s*"?(\d+)"?/.exec(directives)?.[1];
  const seconds = maxAge === undefined ? DOCUMENT_TTL_SECONDS.fallback : Number(maxAge);
  return Math.min(DOCUMENT_TTL_SECONDS.max, Math.max(DOCUMENT_TTL_SECONDS.min, seconds));
}

async function fetchDocument(fetch: Fetch, url: URL): Promise<{ lookup: DocumentLookup; ttlSeconds: number }> {
  const refused = (problem: string) => ({ lookup: { ok: false as const, problem }, ttlSeconds: DOCUMENT_TTL_SECONDS.refused });
  let response: Response;
  try {
    response = await fetch(url, { headers: { accept: "application/json" } });
  } catch (error) {
    if (error instanceof OutboundRefusedError) return refused(error.message);
    return refused(error instanceof Error && error.name === "TimeoutError" ? "the document did not arrive in time" : "the document could not be fetched");
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    return refused(response.status >= 300 && response.status < 400 ? "the document's URL redirects (not followed)" : `the document's URL answered ${response.status}`);
  }
  const type = (response.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json" && !type.endsWith("+json")) {
    await response.body?.cancel();
    return refused("the document is not JSON (Content-Type)");
  }
  let json: unknown;
  try {
    json = JSON.parse(await response.text());
  } catch {
    return refused("the document is not valid JSON");
  }
  const read = readClientMetadataDocument(url, json);
  return read.ok ? { lookup: read, ttlSeconds: documentTtlSeconds(response.headers.get("cache-control")) } : refused(read.problem);
}

/** One per process (services.ts): documents are the same whichever organization asks. */
export interface MetadataDocumentClients {
  /** The document at `url`, fetched or kept. */
  lookup(url: URL): Promise<DocumentLookup>;
}

export function createMetadataDocumentClients(options: { allowPrivateNetworks: boolean; fetch?: Fetch; max?: number }): MetadataDocumentClients {
  const fetch = options.fetch ?? guardedFetch({ allowPrivateNetworks: options.allowPrivateNetworks, timeoutMs: DOCUMENT_TIMEOUT_MS, maxBytes: DOCUMENT_MAX_BYTES });
  const kept = new LRUCache<string, DocumentLookup>({ max: options.max ?? 5_000, ttlAutopurge: false });
  const inFlight = new Map<string, Promise<DocumentLookup>>();
  return {
    lookup(url) {
      const key = url.href;
      const hit = kept.get(key);
      if (hit) return Promise.resolve(hit);
      const pending = inFlight.get(key);
      if (pending) return pending;
      const started = fetchDocument(fetch, url)
        .then(({ lookup, ttlSeconds }) => {
          kept.set(key, lookup, { ttl: ttlSeconds * 1000 });
          return lookup;
        })
        .finally(() => inFlight.delete(key));
      inFlight.set(key, started);
      return started;
    },
  };
}
