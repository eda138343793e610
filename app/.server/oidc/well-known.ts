import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import { inject } from "./inject";
import { scopesAndClaims } from "./configuration";
import { registrationPolicyOf } from "~/schemas/registration";
import type { Organization } from "~/generated/prisma/client";
import type { DescribedOrganization, ProviderRegistry, TenantProvider } from "./registry";

/** The two documents of an organization that are the same for every caller. */
export const WELL_KNOWN_PATHS = ["/.well-known/openid-configuration", "/.well-known/jwks"] as const;
export type WellKnownPath = (typeof WELL_KNOWN_PATHS)[number];

/**
 * Discovery and JWKS are the same for everyone (their URLs come from BASE_URL, see
 * http/public-origin.ts), so a CDN may keep them. JWKS briefly: a key rotated without staging
 * must reach relying parties within a minute.
 */
const PUBLIC_CACHE: Record<WellKnownPath, string> = {
  "/.well-known/openid-configuration": "public, max-age=300",
  "/.well-known/jwks": "public, max-age=60",
};

/** The Cache-Control of a path below /{slug}, when it is one of the public documents. */
export function publicCacheControlOf(path: string): string | undefined {
  return Object.hasOwn(PUBLIC_CACHE, path) ? PUBLIC_CACHE[path as WellKnownPath] : undefined;
}

export interface WellKnownDocument {
  body: Buffer;
  /** As the provider sends it: JWKS is application/jwk-set+json. */
  contentType: string;
  /** Strong: a hash of the exact bytes. */
  etag: string;
  cacheControl: string;
}

export type WellKnownDocuments = Record<WellKnownPath, WellKnownDocument>;

/**
 * Keyed by the pool entry's provider, so the documents live exactly as long as it: whatever
 * drops or replaces a provider (organization or key changes, in any process; eviction; its
 * maximum age) drops its documents with it.
 */
const pending = new WeakMap<TenantProvider, Promise<WellKnownDocuments | undefined>>();
const ready = new WeakMap<TenantProvider, WellKnownDocuments>();

export const strongEtag = (body: Buffer) => `"${createHash("sha256").update(body).digest("base64url")}"`;

async function askProvider(tenant: TenantProvider, path: WellKnownPath): Promise<WellKnownDocument> {
  const origin = new URL(tenant.issuer);
  // The request Express would hand the provider after http/public-origin.ts and oidc/mount.ts.
  const answer = await inject(tenant.callback, {
    method: "GET",
    url: path,
    originalUrl: `/${tenant.organization.slug}${path}`,
    headers: { host: origin.host, "x-forwarded-host": origin.host, "x-forwarded-proto": origin.protocol.slice(0, -1) },
  });
  const contentType = answer.headers["content-type"];
  if (answer.status !== 200 || typeof contentType !== "string") {
    throw new Error(`the provider answered ${path} with ${answer.status}`);
  }
  return { body: answer.body, contentType, etag: strongEtag(answer.body), cacheControl: PUBLIC_CACHE[path] };
}

async function compute(tenant: TenantProvider): Promise<WellKnownDocuments> {
  const [discovery, jwks] = await Promise.all(WELL_KNOWN_PATHS.map((path) => askProvider(tenant, path)));
  return { "/.well-known/openid-configuration": discovery!, "/.well-known/jwks": jwks! };
}

/** The organization's documents once computed, without waiting. */
export function getReadyWellKnown(tenant: TenantProvider): WellKnownDocuments | undefined {
  return ready.get(tenant);
}

/**
 * The organization's documents, computed once per provider by asking the provider itself.
 * Undefined when it could not answer them (then the request takes the provider's own path).
 */
export function getWellKnown(tenant: TenantProvider, onError: (error: unknown) => void): Promise<WellKnownDocuments | undefined> {
  let documents = pending.get(tenant);
  if (!documents) {
    documents = compute(tenant).then(
      (computed) => {
        ready.set(tenant, computed);
        return computed;
      },
      (error: unknown) => {
        onError(error);
        return undefined;
      },
    );
    pending.set(tenant, documents);
  }
  return documents;
}

export interface WellKnownCacheOptions {
  /** The bytes the documents may hold (their bodies plus a fixed overhead per organization). */
  maxBytes: number;
  /** As the provider pool's maximum age: the safety net for a missed invalidation notice. */
  maxAgeMs: number;
}

/**
 * The documents of organizations whose provider is no longer (or not yet again) in the pool,
 * by slug (decision 034). A pool miss used to build a whole provider just to answer a document
 * of a few kilobytes; this keeps the documents of many more organizations than the pool holds
 * providers. They are dropped with the organization's providers (`drop`, called from the
 * registry's invalidation, in every process), and documents computed from a provider that was
 * current before a drop are not kept (`epoch`).
 */
export interface WellKnownCache {
  get(slug: string): WellKnownDocuments | undefined;
  /** The drop count to pass to `set`: read it before asking the registry for the provider. */
  epoch(): number;
  set(organization: Pick<Organization, "id" | "slug">, documents: WellKnownDocuments, epochBefore: number): void;
  drop(organizationId: string): void;
}

/** What one organization's entry holds besides the two bodies (key, ETags, headers, LRU node). */
const ENTRY_OVERHEAD_BYTES = 1024;

export function createWellKnownCache(options: WellKnownCacheOptions): WellKnownCache {
  const entries = new LRUCache<string, { organizationId: string; documents: WellKnownDocuments }>({
    maxSize: options.maxBytes,
    sizeCalculation: ({ documents }) =>
      ENTRY_OVERHEAD_BYTES + WELL_KNOWN_PATHS.reduce((bytes, path) => bytes + documents[path].body.length, 0),
    ttl: options.maxAgeMs,
  });
  let drops = 0;
  return {
    get: (slug) => entries.get(slug.toLowerCase())?.documents,
    epoch: () => drops,
    set(organization, documents, epochBefore) {
      if (epochBefore !== drops) return;
      entries.set(organization.slug, { organizationId: organization.id, documents });
    },
    drop(organizationId) {
      drops++;
      if (organizationId === "*") return entries.clear();
      for (const [slug, entry] of entries.entries()) if (entry.organizationId === organizationId) entries.delete(slug);
    },
  };
}

/** The slug of the template providers' issuer: never an organization's (they are not pooled or routed). */
const TEMPLATE_SLUG = "porta-well-known-template";
/** Distinct sets of custom claims whose discovery template is kept. */
const MAX_TEMPLATES = 64;

/**
 * An organization's documents without building its provider (decision 034): discovery differs
 * between organizations only by the issuer (every URL in it starts with it) and by the scopes
 * and claims their custom claims add, so it is the document of a template provider, built once
 * per set of custom claims with a placeholder issuer, with the organization's issuer put in;
 * JWKS is the public half of its published keys, exactly as oidc-provider renders its keystore.
 * One database round trip (registry `describe`); undefined when the organization needs its real
 * provider (see `describe`). test/oidc/well-known-fast-path.test.ts compares both with the
 * provider's own answers.
 */
export function createDocumentsWithoutProvider(
  registry: Pick<ProviderRegistry, "describe" | "buildDetached">,
  baseUrl: string,
): (slug: string) => Promise<{ organization: Organization; documents: WellKnownDocuments } | undefined> {
  const templates = new LRUCache<string, Promise<{ parts: string[]; discoveryType: string; jwksType: string }>>({ max: MAX_TEMPLATES });
  const templateIssuer = `${baseUrl}/${TEMPLATE_SLUG}`;

  function templateOf(described: DescribedOrganization) {
    // Whether discovery names the registration endpoint (decision 054) is part of the template too.
    const registration = registrationPolicyOf(described.organization.registrationPolicy).enabled;
    const key = JSON.stringify([scopesAndClaims(described.customClaims), registration]);
    let template = templates.get(key);
    if (!template) {
      template = registry
        .buildDetached({ ...described.organization, slug: TEMPLATE_SLUG }, templateIssuer, described.customClaims)
        .then(async (tenant) => {
          const [discovery, jwks] = await Promise.all(WELL_KNOWN_PATHS.map((path) => askProvider(tenant, path)));
          return { parts: discovery!.body.toString("utf8").split(templateIssuer), discoveryType: discovery!.contentType, jwksType: jwks!.contentType };
        });
      template.catch(() => templates.delete(key));
      templates.set(key, template);
    }
    return template;
  }

  const document = (body: Buffer, contentType: string, path: WellKnownPath): WellKnownDocument => ({
    body,
    contentType,
    etag: strongEtag(body),
    cacheControl: PUBLIC_CACHE[path],
  });

  return async (slug) => {
    const described = await registry.describe(slug);
    if (!described) return undefined;
    const template = await templateOf(described);
    // The members oidc-provider copies from each key of its keystore, in its order (undefined ones drop out).
    const keys = described.publicJwks.map(({ kty, kid, crv, x, y }) => ({ kty, use: "sig", kid, alg: "ES256", crv, x, y }));
    return {
      organization: described.organization,
      documents: {
        "/.well-known/openid-configuration": document(Buffer.from(template.parts.join(described.issuer)), template.discoveryType, "/.well-known/openid-configuration"),
        "/.well-known/jwks": document(Buffer.from(JSON.stringify({ keys })), template.jwksType, "/.well-known/jwks"),
      },
    };
  };
}
