import type { JWK, JWTPayload } from "jose";
import type Provider from "oidc-provider";
import type { Organization } from "~/generated/prisma/client";
import type { TenantInput } from "./tenant-load";

/*
 * The shapes of the providers' registry (provider/registry.ts builds it), apart from the module
 * that builds the providers: a protocol feature, the well-known documents, the metrics and the
 * services' context name them without importing what builds a provider.
 */

/** One organization's provider and what was true of the organization when it was built. */
export interface TenantProvider {
  organization: Organization;
  issuer: string;
  provider: Provider;
  callback: ReturnType<Provider["callback"]>;
  /** The claims of one of this organization's access token JWTs, once its signature verifies. */
  claimsOfSignedJwt(value: string): Promise<JWTPayload | undefined>;
  /**
   * Makes a logout token for the client and POSTs it to its backchannel_logout_uri (decision 048);
   * false when the client is gone or takes none any more. Throws when the receiver does not
   * answer 200 or 204.
   */
  deliverBackchannelLogout(clientId: string, sub: string, sid: string | null): Promise<boolean>;
  /**
   * An access token for the person at one of this organization's clients that says an
   * administrator acts (`act`), for the organization's own resource (decision 053); undefined
   * when the client is unknown or not usable here.
   */
  issueImpersonationToken(input: { clientId: string; accountId: string; actorId: string; expiresIn: number }): Promise<{ value: string; scope: string } | undefined>;
}

export interface ProviderRegistry {
  /** The provider of an active organization, or undefined (unknown, suspended, deleted). */
  get(slug: string): Promise<TenantProvider | undefined>;
  /**
   * The provider `get` would answer with, when it is built and still in the pool; undefined
   * otherwise (never built, being built, dropped). Synchronous, for the well-known fast path.
   */
  peek(slug: string): TenantProvider | undefined;
  /**
   * What an active organization's discovery and JWKS are made of, read in one round trip without
   * building its provider (oidc/edge/well-known.ts); undefined for an unknown or inactive organization,
   * and for one whose provider has more to do than publish (the super-admin organization, keys
   * due to retire or missing), which `get` then builds.
   */
  describe(slug: string): Promise<DescribedOrganization | undefined>;
  /**
   * `describe` for a page of active organizations in slug order, after `afterSlug` ("" first), in
   * one round trip: what it would answer, and the last slug read (undefined past the last page).
   */
  describePage(afterSlug: string, limit: number): Promise<{ described: DescribedOrganization[]; last: string | undefined }>;
  /** `describe` for many (lower-case) slugs in one round trip: the slugs it would answer for. */
  describeMany(slugs: string[]): Promise<Map<string, DescribedOrganization>>;
  /**
   * A provider as `get` builds one, for another issuer, outside the pool and signing with a key of
   * its own: the template of the documents of every organization with the same custom claims.
   */
  buildDetached(organization: Organization, issuer: string, customClaims: TenantInput["customClaims"]): Promise<TenantProvider>;
  /** Drops one organization's provider (or all), in this process and in every other one. */
  invalidate(organizationId: string | "*"): Promise<void>;
  /**
   * Calls `listener` with the organization (or "*") whenever its providers are dropped, in this
   * process or on another's notice: what is kept beside the pool (oidc/edge/well-known.ts) goes with them.
   */
  onDrop(listener: (organizationId: string) => void): void;
  /** The pool's state for the metrics. */
  poolStats(): PoolStats;
  close(): Promise<void>;
}

export interface PoolStats {
  size: number;
  capacity: number;
  /** Providers built since start (each a pool miss or a detached build). */
  builds: number;
  evictions: number;
}

export interface DescribedOrganization {
  organization: Organization;
  issuer: string;
  customClaims: TenantInput["customClaims"];
  /** As the provider publishes them, in its order. */
  publicJwks: Array<JWK & { kid: string }>;
  /** When a published key is due to retire (ms since the epoch, Infinity for never): the description holds until then. */
  keysChangeAt: number;
}
