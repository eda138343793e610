/**
 * Every active organization's discovery and JWKS, held in memory in a compact form (decision
 * 062): what the documents are made of (a shared template, the issuer, which is the slug, and the
 * public keys), about 0.4 KB per organization instead of their ~4 KB of bytes. It is filled in
 * the background after start, page by page, so that a sweep over more organizations than the
 * provider pool holds (a crawler, a fleet of relying parties restarting, a round-robin load)
 * answers from memory instead of sending a statement per request, and a node with 100,000
 * organizations holds them all within its budget (48 MB by default).
 *
 * It stays current the way the provider pool does: the registry's drops (an organization or its
 * keys changed, in this process or another's notice) remove an organization's entry, and "*" (the
 * listening connection was lost, so notices may have been missed) empties it and fills it again.
 * As the pool's maximum age is the safety net for a missed notice, every entry is described again
 * from the database once per that age, in pages; an entry whose published keys are due a change
 * (a retiring key's end) stops answering at that moment.
 */
import { LRUCache } from "lru-cache";
import type { Logger } from "pino";
import type { DescribedOrganization, ProviderRegistry } from "../provider/registry";
import {
  WELL_KNOWN_PATHS,
  documentFrom,
  getWellKnown,
  packPublicKeys,
  type DocumentTemplate,
  type DocumentTemplates,
  type WellKnownDocument,
  type WellKnownDocuments,
  type WellKnownPath,
} from "./well-known";

export interface DocumentDirectoryOptions {
  registry: Pick<ProviderRegistry, "get" | "describe" | "describePage" | "describeMany" | "onDrop">;
  templates: DocumentTemplates;
  baseUrl: string;
  /** The bytes the entries may hold (default 48 MB: 100,000 organizations with one key each). */
  maxBytes?: number;
  /** How long an entry holds without being described again: the pool's maximum age. */
  maxAgeMs: number;
  logger: Logger;
  /** Organizations read per statement while filling and refreshing. */
  pageSize?: number;
  now?: () => number;
}

export interface DocumentDirectory {
  /** The organization's document when held and current, without waiting. */
  get(slug: string, path: WellKnownPath): WellKnownDocument | undefined;
  /**
   * A miss: the documents made without a provider (one statement), or, for an organization whose
   * provider has more to do than publish (see registry `describe`), its provider's own; kept
   * either way. Undefined for an unknown or inactive organization, or when the provider could
   * not answer them. `pooled`: the organization's provider is in the pool (its documents are
   * being computed), so nothing is made without it.
   */
  fetch(slug: string, path: WellKnownPath, pooled: boolean): Promise<WellKnownDocument | undefined>;
  /** Starts reading every active organization in the background (at start, and again after "*"). */
  fillInBackground(): void;
  /** Resolves when the latest fill has finished (or given up: it is logged). */
  filled(): Promise<void>;
  stats(): { entries: number; bytes: number; maxBytes: number };
  close(): void;
}

export const DEFAULT_DIRECTORY_BYTES = 48 * 1024 * 1024;
const DEFAULT_PAGE_SIZE = 1_000;
/**
 * The heap an entry holds besides its packed keys and its slug (the entry object, the cache's own
 * bookkeeping and string headers), measured over 100,000 entries, rounded up (decision 062).
 */
const MADE_ENTRY_OVERHEAD_BYTES = 330;
/** An entry of a provider's own documents: their bodies plus the headers' strings. */
const PROVIDER_ENTRY_OVERHEAD_BYTES = 1024;
/** Documents rendered from entries, kept for the organizations asked for most recently. */
const RENDERED_MAX = 256;

/**
 * Made without a provider: rendered from the template on demand. Small on purpose (a directory
 * may hold 100,000): the organization by a hash of its id, the keys packed, times in seconds.
 */
interface MadeEntry {
  /** `organizationHash` of its id: a drop removes the entries of that hash (a collision only costs a read). */
  organization: number;
  /** The slug as stored, when its case differs from the key's (the issuer is written with it). */
  storedSlug?: string;
  templateId: string;
  /** `packPublicKeys`. */
  keys: string;
  /** Seconds since the epoch until which it answers; 0 for as long as nothing changes. */
  validUntil: number;
}
/** A provider's own documents (an organization `describe` declines), kept for the pool's maximum age. */
interface ProviderEntry {
  organization: number;
  documents: WellKnownDocuments;
  validUntil: number;
}

/** FNV-1a of an organization's id, as a small integer. */
export function organizationHash(organizationId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < organizationId.length; i++) hash = Math.imul(hash ^ organizationId.charCodeAt(i), 0x01000193);
  return hash | 0;
}
const toSeconds = (ms: number) => (Number.isFinite(ms) ? Math.floor(ms / 1000) : 0);
type Entry = MadeEntry | ProviderEntry;
const isMade = (entry: Entry): entry is MadeEntry => "templateId" in entry;

export function createDocumentDirectory(options: DocumentDirectoryOptions): DocumentDirectory {
  const { registry, templates, logger } = options;
  const now = options.now ?? Date.now;
  const maxBytes = options.maxBytes ?? DEFAULT_DIRECTORY_BYTES;
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const sizeOf = (entry: Entry, slug: string) =>
    isMade(entry)
      ? MADE_ENTRY_OVERHEAD_BYTES + entry.keys.length + slug.length + (entry.storedSlug?.length ?? 0)
      : PROVIDER_ENTRY_OVERHEAD_BYTES + WELL_KNOWN_PATHS.reduce((bytes, path) => bytes + entry.documents[path].byteLength, 0);
  /**
   * The slugs held for each organization hash, so that a drop finds them without a scan (a scan
   * of 100,000 entries held the event loop for ~40–70 ms); an array only where hashes collide.
   */
  const byOrganization = new Map<number, string | string[]>();
  const entries = new LRUCache<string, Entry>({
    maxSize: maxBytes,
    sizeCalculation: sizeOf,
    // Replaced, deleted or evicted: the index forgets it.
    dispose: (entry, slug) => unindex(entry.organization, slug),
  });
  function unindex(organization: number, slug: string) {
    const held = byOrganization.get(organization);
    if (held === slug) byOrganization.delete(organization);
    else if (Array.isArray(held)) {
      const rest = held.filter((other) => other !== slug);
      byOrganization.set(organization, rest.length === 1 ? rest[0]! : rest);
    }
  }
  function put(slug: string, entry: Entry) {
    entries.set(slug, entry);
    const held = byOrganization.get(entry.organization);
    if (held === undefined) byOrganization.set(entry.organization, slug);
    else if (typeof held === "string") {
      if (held !== slug) byOrganization.set(entry.organization, [held, slug]);
    } else if (!held.includes(slug)) held.push(slug);
  }
  const rendered = new LRUCache<string, { entry: Entry; documents: Partial<WellKnownDocuments> }>({ max: RENDERED_MAX });
  /** Counts drops: what was read before one may be stale, so it is not kept. */
  let drops = 0;
  /** Counts fills: a fill stops when a newer one starts (after "*") or the directory closes. */
  let generation = 0;
  let filling: Promise<void> = Promise.resolve();
  let closed = false;

  const issuerOf = (slug: string) => `${options.baseUrl}/${slug}`;
  const pause = () => new Promise<void>((resolve) => setImmediate(resolve));

  /** The one document asked for (a sweep asks for each organization's once); the last few organizations' are kept. */
  function render(slug: string, entry: Entry, path: WellKnownPath): WellKnownDocument | undefined {
    if (!isMade(entry)) return entry.documents[path];
    let last = rendered.get(slug);
    if (last?.entry !== entry) {
      last = { entry, documents: {} };
      rendered.set(slug, last);
    }
    const kept = last.documents[path];
    if (kept) return kept;
    const template = templates.ready(entry.templateId);
    if (!template) return undefined; // dropped from the templates kept: made again on the miss
    return (last.documents[path] = documentFrom(template, path, issuerOf(entry.storedSlug ?? slug), entry.keys));
  }

  async function made(described: DescribedOrganization): Promise<{ entry: MadeEntry; template: DocumentTemplate }> {
    const template = await templates.of(described);
    const { id, slug } = described.organization;
    const entry: MadeEntry = { organization: organizationHash(id), templateId: template.id, keys: packPublicKeys(described.publicJwks), validUntil: toSeconds(described.keysChangeAt) };
    if (slug !== slug.toLowerCase()) entry.storedSlug = slug;
    return { entry, template };
  }

  /** Keeps an entry unless a drop happened since `epoch` was read (it may be stale). */
  function keep(slug: string, entry: Entry, epoch: number): void {
    if (epoch === drops && !closed) put(slug, entry);
  }

  function drop(organizationId: string) {
    drops++;
    rendered.clear();
    if (organizationId === "*") {
      entries.clear();
      fillInBackground();
      return;
    }
    const held = byOrganization.get(organizationHash(organizationId));
    for (const slug of typeof held === "string" ? [held] : [...(held ?? [])]) entries.delete(slug);
  }
  registry.onDrop(drop);

  /**
   * Reads the active organizations page by page until the directory is full: what requests made
   * stays, and nothing is evicted to make room. A page read while something changed is read
   * again (up to three times, then skipped: its organizations are read when asked for).
   */
  async function fill(mine: number): Promise<void> {
    let after: string | undefined = "";
    let retries = 0;
    while (after !== undefined && !closed && mine === generation) {
      const epoch = drops;
      const page = await registry.describePage(after, pageSize);
      const pageEntries = await Promise.all(page.described.map(async (described) => [described.organization.slug.toLowerCase(), (await made(described)).entry] as const));
      if (epoch !== drops && retries++ < 3) continue;
      if (epoch === drops) {
        for (const [slug, entry] of pageEntries) {
          if (entries.has(slug)) continue;
          if (entries.calculatedSize + sizeOf(entry, slug) > maxBytes) return;
          put(slug, entry);
        }
      }
      retries = 0;
      after = page.last;
      await pause(); // requests go first
    }
  }

  function fillInBackground(): void {
    const mine = ++generation;
    filling = fill(mine).catch((error: unknown) => {
      logger.warn({ err: error }, "could not fill the directory of discovery documents; each is read when first asked for");
    });
  }

  /** Describes the held entries made without a provider again, page by page: the safety net for a missed drop. */
  async function refresh(): Promise<void> {
    const slugs = [...entries.entries()].filter(([, entry]) => isMade(entry)).map(([slug]) => slug);
    for (let i = 0; i < slugs.length && !closed; i += pageSize) {
      const batch = slugs.slice(i, i + pageSize);
      const epoch = drops;
      const described = await registry.describeMany(batch);
      const fresh = await Promise.all(batch.map(async (slug) => [slug, described.has(slug) ? (await made(described.get(slug)!)).entry : undefined] as const));
      if (epoch !== drops) continue; // the drop removed what changed; the rest is checked next time
      for (const [slug, entry] of fresh) {
        const held = entries.peek(slug);
        if (!held || !isMade(held)) continue;
        if (!entry) entries.delete(slug);
        else if (entry.templateId === held.templateId && entry.keys === held.keys && entry.storedSlug === held.storedSlug) held.validUntil = entry.validUntil;
        else put(slug, entry);
      }
      rendered.clear();
      await pause();
    }
  }
  const refreshing = setInterval(() => {
    refresh().catch((error: unknown) => logger.warn({ err: error }, "could not refresh the directory of discovery documents"));
  }, options.maxAgeMs);
  refreshing.unref();

  const onProviderError = (error: unknown) => logger.error({ err: error }, "could not precompute discovery and JWKS; the provider answers them");

  return {
    get(rawSlug, path) {
      const slug = rawSlug.toLowerCase();
      const entry = entries.get(slug);
      if (!entry) return undefined;
      if (entry.validUntil !== 0 && entry.validUntil * 1000 <= now()) {
        entries.delete(slug);
        return undefined;
      }
      return render(slug, entry, path);
    },
    async fetch(rawSlug, path, pooled) {
      const slug = rawSlug.toLowerCase();
      const epoch = drops;
      if (!pooled) {
        const described = await registry.describe(slug).catch((error: unknown) => void onProviderError(error));
        const parts = described && (await made(described).catch((error: unknown) => void onProviderError(error)));
        if (described && parts) {
          keep(slug, parts.entry, epoch);
          return documentFrom(parts.template, path, described.issuer, parts.entry.keys);
        }
      }
      const tenant = await registry.get(slug);
      const documents = tenant && (await getWellKnown(tenant, onProviderError));
      if (tenant && documents) {
        keep(slug, { organization: organizationHash(tenant.organization.id), documents, validUntil: toSeconds(now() + options.maxAgeMs) }, epoch);
      }
      return documents?.[path];
    },
    fillInBackground,
    filled: () => filling,
    stats: () => ({ entries: entries.size, bytes: entries.calculatedSize, maxBytes }),
    close() {
      closed = true;
      clearInterval(refreshing);
      entries.clear();
      rendered.clear();
    },
  };
}
