import { createHash, timingSafeEqual } from "node:crypto";
import type { Client } from "~/generated/prisma/client";
import type { ReadThroughCache } from "../cache/read-through";
import type { Db } from "../context";

/** A client as the protocol layer needs it: the row, its application's status, its live secrets. */
export interface ClientRecord extends Client {
  applicationStatus: string | null;
  activeSecrets: Array<{ hash: string; expiresAt: Date | null }>;
}

/** What a client Porta knows without a stored row says about itself; the rest is what a new client has. */
export type UnstoredClientFields = Pick<
  ClientRecord,
  "id" | "organizationId" | "name" | "applicationType" | "tokenEndpointAuthMethod" | "jwksUri" | "redirectUris" | "postLogoutRedirectUris" | "grantTypes" | "scope" | "skipConsent" | "pkce"
>;

/**
 * A client that lives in no row (the account page's built-in client, a client ID metadata
 * document's): no application, secrets, keys, custom lifetimes, browser origins, back-channel
 * logout or token exchange; the organization's login methods.
 */
export function unstoredClientRecord(fields: UnstoredClientFields, since: Date): ClientRecord {
  return {
    ...fields,
    applicationId: null,
    jwks: null,
    loginMethods: [],
    status: "active",
    adminApiAccess: false,
    allowedCorsOrigins: [],
    accessTokenTtlSeconds: null,
    refreshTokenTtlSeconds: null,
    backchannelLogoutUri: null,
    initiateLoginUri: null,
    backchannelLogoutSessionRequired: false,
    tokenExchangeAudiences: [],
    registrationAccessTokenHash: null,
    version: 1,
    createdAt: since,
    updatedAt: since,
    applicationStatus: null,
    activeSecrets: [],
  };
}

const TTL_SECONDS = 60;
const key = (id: string) => `client:${id}`;

export function hashClientSecret(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

export function getClientRecord(db: Db, cache: ReadThroughCache, id: string): Promise<ClientRecord | null> {
  return cache.getOrLoad(key(id), TTL_SECONDS, async () => {
    const row = await db.client.findUnique({
      where: { id },
      include: {
        application: { select: { status: true } },
        secrets: { where: { status: "active" }, select: { secretHash: true, expiresAt: true } },
      },
    });
    if (!row) return null;
    const { application, secrets, ...client } = row;
    return {
      ...client,
      applicationStatus: application?.status ?? null,
      activeSecrets: secrets.map((s) => ({ hash: s.secretHash, expiresAt: s.expiresAt })),
    };
  });
}

export function invalidateClient(cache: ReadThroughCache, id: string) {
  return cache.invalidate(key(id));
}

/** True when the client may take part in the protocol at all. */
export function isClientUsable(client: ClientRecord): boolean {
  return client.status === "active" && (client.applicationStatus === null || client.applicationStatus === "active");
}

/**
 * Whether a presented secret matches one of the client's active, unexpired secrets. Every
 * stored hash is compared (constant time each), so timing does not reveal which one matched.
 */
export function secretMatches(client: ClientRecord, presented: string, now = new Date()): boolean {
  const presentedHash = Buffer.from(hashClientSecret(presented), "hex");
  let matched = false;
  for (const secret of client.activeSecrets) {
    const stored = Buffer.from(secret.hash, "hex");
    const equal = stored.length === presentedHash.length && timingSafeEqual(stored, presentedHash);
    const live = secret.expiresAt === null || secret.expiresAt > now;
    matched = (equal && live) || matched;
  }
  return matched;
}
