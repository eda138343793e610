import { exportJWK, generateKeyPair } from "jose";
import type { MetadataDocumentClients } from "../storage/client-metadata-documents";
import Provider from "oidc-provider";
import { LRUCache } from "lru-cache";
import { createProviderPool } from "./provider-pool";
import type { Logger } from "pino";
import type { Organization, PrismaClient } from "~/generated/prisma/client";
import { adminApiResource, organizationAdminResource } from "../../admin/api-access";
import type { ReadThroughCache } from "../../cache/read-through";
import type { KeyValueStore } from "../../cache/store";
import type { Database } from "../../db/client";
import { getClientRecord, secretMatches } from "../../directory/clients";
import { buildProviderConfiguration, createSignedJwtReader } from "./configuration";
import { createRevokedTokens } from "../storage/revoked-tokens";
import { applyPatches } from "./patches";
import { keysChangeAt, type KeyService, type PrivateSigningJwk } from "./keys";
import { sendLogoutToken } from "../features/backchannel-logout";
import { createFindAccount } from "./account";
import { mintDelegatedToken } from "../features/token-exchange";
import type { LogoutNotice, SignOutRecord, TokenExchangeRecord } from "../feature";
import { loadActiveTenantsAfter, loadPublicTenant, loadPublicTenants, loadTenant, type PublicTenantInput, type TenantInput } from "./tenant-load";
import type { Settings } from "../../settings/settings";
import type { DescribedOrganization, ProviderRegistry, TenantProvider } from "./tenant-provider";

export type { DescribedOrganization, PoolStats, ProviderRegistry, TenantProvider } from "./tenant-provider";

export interface RegistryOptions {
  baseUrl: string;
  superAdminSlug: string;
  prisma: PrismaClient;
  cache: ReadThroughCache;
  store: KeyValueStore;
  /**
   * How processes sharing the database tell each other that an organization's provider changed:
   * the database's own notifications (PostgreSQL LISTEN/NOTIFY), so that it works whether or not
   * Redis answers.
   */
  notifications: Pick<Database, "notify" | "listen">;
  /** Plain SQL for the providers' durable token and grant rows. */
  sql: Pick<Database, "query">;
  keys: KeyService;
  encryptionKey: Buffer;
  logger: Logger;
  settings: Settings;
  /** The heap the pool of built providers may hold (OIDC_PROVIDER_POOL_MB); default 64 MB. */
  poolBytes?: number;
  /** OUTBOUND_ALLOW_PRIVATE_NETWORKS: the provider's outbound requests may reach private addresses. */
  allowPrivateNetworks?: boolean;
  /** Client ID metadata documents (storage/client-metadata-documents.ts), one set per process. */
  clientDocuments?: MetadataDocumentClients;
  /** Called with each provider built (the metrics count its grants and errors). */
  onProviderBuilt?: (provider: Provider) => void;
  /** Where a provider's sign-out (end_session) hands the logout tokens it would send: to the job queue (decision 048). */
  onBackchannelLogout?: (notice: LogoutNotice) => Promise<void>;
  /** Records a token exchange (the audit); the token is answered only once this resolves (decision 053). */
  onTokenExchanged?: (organizationId: string, record: TokenExchangeRecord) => Promise<void>;
  /** Records a sign-out at end_session (decision 093). */
  onSignedOut?: (record: SignOutRecord) => Promise<void>;
}

const CHANNEL = "porta_oidc_invalidate";
/** A safety net for a missed invalidation notice (the listener reconnects and then drops every provider). */
export const PROVIDER_MAX_AGE_MS = 10 * 60_000;
const NEGATIVE_TTL_MS = 5_000;
/**
 * The heap one built provider holds, measured after full garbage collections over 400 builds
 * (65 KB on oidc-provider 9.13; `npm run bench:orgs`), rounded up for what a provider gathers
 * while it serves (its well-known documents, oidc-provider's own small caches).
 */
export const PROVIDER_HEAP_BYTES = 80 * 1024;
export const DEFAULT_POOL_BYTES = 64 * 1024 * 1024;

export async function createProviderRegistry(options: RegistryOptions): Promise<ProviderRegistry> {
  const { prisma, cache, store, notifications, keys, logger } = options;
  const revokedTokens = createRevokedTokens(notifications, store);
  const providers = createProviderPool<Promise<TenantProvider | undefined>>({
    maxBytes: options.poolBytes ?? DEFAULT_POOL_BYTES,
    bytesPerEntry: PROVIDER_HEAP_BYTES,
    maxAgeMs: PROVIDER_MAX_AGE_MS,
  });
  const unknown = new LRUCache<string, true>({ max: 10_000, ttl: NEGATIVE_TTL_MS });
  // The settled value of each pool entry; it goes with its entry (dropped, evicted, expired).
  const settled = new WeakMap<Promise<TenantProvider | undefined>, TenantProvider>();

  let templateKey: Promise<PrivateSigningJwk> | undefined;
  let builds = 0;
  const dropListeners: Array<(organizationId: string) => void> = [];

  function dropLocal(organizationId: string) {
    unknown.clear();
    for (const listener of dropListeners) listener(organizationId);
    if (organizationId === "*") {
      providers.clear();
      return;
    }
    for (const [slug, entry] of providers.entries()) {
      entry.then(
        (tenant) => {
          if (!tenant || tenant.organization.id === organizationId) providers.delete(slug);
        },
        () => providers.delete(slug),
      );
    }
  }

  const unsubscribe = await notifications.listen(CHANNEL, dropLocal).catch((error: unknown) => {
    logger.warn({ err: error }, "provider invalidation channel unavailable; providers refresh every 10 minutes");
    return async () => {};
  });

  async function build(slug: string): Promise<TenantProvider | undefined> {
    // One round trip for the organization, its keys and its custom claims (decision 034).
    const [input, accessTokenTtl] = await Promise.all([loadTenant(options.sql, slug), options.settings.get("tokens.accessTokenTtlSeconds")]);
    if (!input || input.organization.status !== "active") return undefined;
    // The organization's own keys (and the shared keys of earlier versions while they retire).
    const keySet = await keys.providerJwksFrom(input.organization.id, input.keys);
    return construct(input.organization, `${options.baseUrl}/${input.organization.slug}`, keySet, input.customClaims, accessTokenTtl, input.apiResources);
  }

  function construct(
    organization: Organization,
    issuer: string,
    keySet: PrivateSigningJwk[],
    customClaims: TenantInput["customClaims"],
    accessTokenTtl: number,
    apiResources: TenantInput["apiResources"] = [],
  ): TenantProvider {
    // The super-admin organization's admin clients get tokens for the Admin API; every other
    // organization's, for its own administration door (decision 090).
    const adminResource = organization.slug === options.superAdminSlug ? adminApiResource(options.baseUrl) : organizationAdminResource(issuer);
    const claimsOfSignedJwt = createSignedJwtReader(issuer, keySet);
    const provider = new Provider(
      issuer,
      buildProviderConfiguration({
        organization,
        issuer,
        jwks: keySet,
        customClaims,
        apiResources,
        encryptionKey: options.encryptionKey,
        adminApiResource: adminResource,
        claimsOfSignedJwt,
        accessTokenTtl,
        prisma,
        sql: options.sql,
        cache,
        store,
        revokedTokens,
        allowPrivateNetworks: options.allowPrivateNetworks ?? false,
        ...(options.clientDocuments ? { clientDocuments: options.clientDocuments } : {}),
      }),
    );
    provider.proxy = true;
    builds += 1;
    options.onProviderBuilt?.(provider);
    // Every change beyond the configuration: Porta's own and each feature's (provider/patches.ts).
    applyPatches(provider, {
      organization,
      issuer,
      adminApiResource: adminResource,
      findAccount: createFindAccount({ prisma, cache, organizationId: organization.id, customClaims }),
      async clientSecretMatches(clientId, presented) {
        const client = await getClientRecord(prisma, cache, clientId);
        return Boolean(client && client.organizationId === organization.id && secretMatches(client, presented));
      },
      logger,
      onBackchannelLogout: options.onBackchannelLogout,
      onTokenExchanged: options.onTokenExchanged,
      onSignedOut: options.onSignedOut,
    });
    async function deliverBackchannelLogout(clientId: string, sub: string, sid: string | null): Promise<boolean> {
      return sendLogoutToken(provider, clientId, sub, sid);
    }
    async function issueImpersonationToken(input: { clientId: string; accountId: string; actorId: string; expiresIn: number }) {
      const client = await provider.Client.find(input.clientId);
      if (!client) return undefined;
      // What the client may ask for, without offline_access: this token is never refreshed.
      const scope = (client.scope ?? "").split(" ").filter((s) => s && s !== "offline_access").join(" ");
      const { value } = await mintDelegatedToken(provider, { client, accountId: input.accountId, audience: issuer, scope, expiresIn: input.expiresIn, act: { sub: input.actorId } });
      return { value, scope };
    }
    return { organization, issuer, provider, callback: provider.callback(), claimsOfSignedJwt, deliverBackchannelLogout, issueImpersonationToken };
  }

  /** What `describe` answers for an organization read from the database (see its comment). */
  function describedFrom(input: PublicTenantInput): DescribedOrganization | undefined {
    const { organization } = input;
    if (organization.status !== "active" || organization.slug === options.superAdminSlug) return undefined;
    const publicJwks = keys.publicJwksFrom(organization.id, input.keys);
    if (!publicJwks) return undefined;
    return { organization, issuer: `${options.baseUrl}/${organization.slug}`, customClaims: input.customClaims, publicJwks, keysChangeAt: keysChangeAt(input.keys) };
  }

  return {
    async get(rawSlug) {
      const slug = rawSlug.toLowerCase();
      if (unknown.has(slug)) return undefined;
      let entry = providers.get(slug);
      if (!entry) {
        const built = build(slug);
        entry = built;
        providers.set(slug, built);
        built.then(
          (tenant) => {
            if (tenant) {
              settled.set(built, tenant);
            } else {
              providers.delete(slug);
              unknown.set(slug, true);
            }
          },
          () => providers.delete(slug),
        );
      }
      return entry;
    },
    poolStats() {
      return { size: providers.size, capacity: providers.capacity, builds, evictions: providers.evictions };
    },
    peek(rawSlug) {
      const entry = providers.get(rawSlug.toLowerCase());
      return entry && settled.get(entry);
    },
    async invalidate(organizationId) {
      dropLocal(organizationId);
      await notifications.notify(CHANNEL, organizationId).catch((error: unknown) => {
        logger.warn({ err: error }, "could not notify other processes of a provider change");
      });
    },
    async describe(rawSlug) {
      const slug = rawSlug.toLowerCase();
      if (unknown.has(slug) || slug === options.superAdminSlug) return undefined;
      const input = await loadPublicTenant(options.sql, slug);
      return input && describedFrom(input);
    },
    async describePage(afterSlug, limit) {
      const inputs = await loadActiveTenantsAfter(options.sql, afterSlug, limit);
      const described = inputs.flatMap((input) => describedFrom(input) ?? []);
      return { described, last: inputs.length === limit ? inputs[inputs.length - 1]!.organization.slug : undefined };
    },
    async describeMany(slugs) {
      const inputs = await loadPublicTenants(options.sql, slugs);
      return new Map(inputs.flatMap((input) => {
        const described = describedFrom(input);
        return described ? [[described.organization.slug.toLowerCase(), described] as const] : [];
      }));
    },
    async buildDetached(organization, issuer, customClaims) {
      templateKey ??= generateKeyPair("ES256", { extractable: true }).then(async ({ privateKey }) => ({
        ...(await exportJWK(privateKey)),
        kid: "well-known-template",
        alg: "ES256" as const,
        use: "sig" as const,
      }));
      return construct(organization, issuer, [await templateKey], customClaims, await options.settings.get("tokens.accessTokenTtlSeconds"));
    },
    onDrop(listener) {
      dropListeners.push(listener);
    },
    async close() {
      await unsubscribe();
      await revokedTokens.close();
      providers.clear();
    },
  };
}
