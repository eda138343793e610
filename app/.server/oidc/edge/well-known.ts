import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import { inject } from "./inject";
import { scopesAndClaims } from "../provider/configuration";
import { registrationPolicyOf } from "~/schemas/registration";
import type { DescribedOrganization, ProviderRegistry, TenantProvider } from "../provider/registry";

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
  /**
   * A string for the documents made on demand (decision 062): written to the socket without a
   * Buffer, whose external memory would make the garbage collector run far more often.
   */
  body: Buffer | string;
  /** Of the body, in bytes. */
  byteLength: number;
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

export const strongEtag = (body: Buffer | string) => `"${createHash("sha256").update(body).digest("base64url")}"`;

async function askProvider(tenant: TenantProvider, path: WellKnownPath): Promise<WellKnownDocument> {
  const origin = new URL(tenant.issuer);
  // The request Express would hand the provider after http/public-origin.ts and oidc/edge/mount.ts.
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
  return { body: answer.body, byteLength: answer.body.length, contentType, etag: strongEtag(answer.body), cacheControl: PUBLIC_CACHE[path] };
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

/** The slug of the template providers' issuer: never an organization's (they are not pooled or routed). */
const TEMPLATE_SLUG = "porta-well-known-template";
/** Distinct sets of custom claims whose discovery template is kept. */
const MAX_TEMPLATES = 64;

/**
 * The discovery document of every organization with the same custom claims (and registration
 * switch), with a gap where the issuer goes, and the content types of both documents.
 */
export interface DocumentTemplate {
  /** Short, and the same string for every organization the template serves (directory entries hold it). */
  readonly id: string;
  readonly parts: string[];
  readonly discoveryType: string;
  readonly jwksType: string;
}

export interface DocumentTemplates {
  /** The organization's template, built once per distinct key. */
  of(described: DescribedOrganization): Promise<DocumentTemplate>;
  /** The template of this id when it is built and still kept. */
  ready(id: string): DocumentTemplate | undefined;
}

/**
 * Discovery differs between organizations only by the issuer (every URL in it starts with it)
 * and by the scopes and claims their custom claims add (decision 034), so it is the document of
 * a template provider, built once per set of custom claims with a placeholder issuer, with the
 * organization's issuer put in. test/oidc/well-known-fast-path.test.ts compares the result with
 * the provider's own answer.
 */
export function createDocumentTemplates(registry: Pick<ProviderRegistry, "buildDetached">, baseUrl: string): DocumentTemplates {
  // One entry per template: its build, and the template once built (so both go together).
  const kept = new LRUCache<string, { building: Promise<DocumentTemplate>; built?: DocumentTemplate }>({ max: MAX_TEMPLATES });
  const templateIssuer = `${baseUrl}/${TEMPLATE_SLUG}`;
  return {
    of(described) {
      // Whether discovery names the registration endpoint (decision 054) and metadata documents is part of the template too.
      const policy = registrationPolicyOf(described.organization.registrationPolicy);
      const key = JSON.stringify([scopesAndClaims(described.customClaims), policy.enabled, policy.clientIdMetadataDocuments.enabled]);
      const id = createHash("sha256").update(key).digest("base64url").slice(0, 22);
      const held = kept.get(id);
      if (held) return held.building;
      const entry: { building: Promise<DocumentTemplate>; built?: DocumentTemplate } = {
        building: registry
          .buildDetached({ ...described.organization, slug: TEMPLATE_SLUG }, templateIssuer, described.customClaims)
          .then(async (tenant) => {
            const [discovery, jwks] = await Promise.all(WELL_KNOWN_PATHS.map((path) => askProvider(tenant, path)));
            entry.built = { id, parts: discovery!.body.toString("utf8").split(templateIssuer), discoveryType: discovery!.contentType, jwksType: jwks!.contentType };
            return entry.built;
          }),
      };
      entry.building.catch(() => {
        if (kept.peek(id) === entry) kept.delete(id);
      });
      kept.set(id, entry);
      return entry.building;
    },
    ready: (id) => kept.get(id)?.built,
  };
}

const document = (body: string, contentType: string, path: WellKnownPath): WellKnownDocument => ({
  body,
  byteLength: Buffer.byteLength(body),
  contentType,
  etag: strongEtag(body),
  cacheControl: PUBLIC_CACHE[path],
});

/** The JWKS body of these public keys: the members oidc-provider copies from each key of its keystore, in its order. */
export function jwksBodyOf(publicJwks: DescribedOrganization["publicJwks"]): string {
  return JSON.stringify({ keys: publicJwks.map(({ kty, kid, crv, x, y }) => ({ kty, use: "sig", kid, alg: "ES256", crv, x, y })) });
}

const PACKABLE = /^[^\s,]+$/;
/**
 * Public keys in the fewest bytes, for the directory of documents (decision 062): "kid x y" per
 * key, joined by ",", when every key is a P-256 key with plain members (all Porta makes); else
 * the JWKS body itself. `jwksBodyFrom` gives back exactly what `jwksBodyOf` would.
 */
export function packPublicKeys(publicJwks: DescribedOrganization["publicJwks"]): string {
  const packable = publicJwks.every(
    ({ kty, crv, kid, x, y }) => kty === "EC" && crv === "P-256" && [kid, x, y].every((part) => typeof part === "string" && PACKABLE.test(part)),
  );
  return packable && publicJwks.length > 0 ? publicJwks.map(({ kid, x, y }) => `${kid} ${x} ${y}`).join(",") : jwksBodyOf(publicJwks);
}

export function jwksBodyFrom(packed: string): string {
  if (packed.startsWith("{")) return packed;
  return jwksBodyOf(
    packed.split(",").map((key) => {
      const [kid, x, y] = key.split(" ") as [string, string, string];
      return { kty: "EC", kid, crv: "P-256", x, y };
    }),
  );
}

/** One of an organization's documents, byte for byte as its provider would answer it. */
export function documentFrom(template: DocumentTemplate, path: WellKnownPath, issuer: string, packedKeys: string): WellKnownDocument {
  return path === "/.well-known/jwks"
    ? document(jwksBodyFrom(packedKeys), template.jwksType, path)
    : document(template.parts.join(issuer), template.discoveryType, path);
}
