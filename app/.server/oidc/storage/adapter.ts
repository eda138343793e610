import { createHash } from "node:crypto";
import type { JWTPayload } from "jose";
import type { Adapter, AdapterPayload } from "oidc-provider";
import type { Prisma } from "~/generated/prisma/client";
import type { Database } from "../../db/client";
import type { KeyValueStore } from "../../cache/store";
import { requestScope } from "../../request-scope";
import type { RevokedTokens } from "./revoked-tokens";
import { accountSessionsKey, sessionDeviceKey } from "./sessions";
import { verifiedJwtClaims, withVerifiedJwt } from "./verified-jwt";
import type { DurableRow } from "./durable-row";

export type { DurableRow } from "./durable-row";

/**
 * oidc-provider storage, split by lifetime (decisions 024 and 057): AccessToken, RefreshToken and Grant are
 * durable rows in PostgreSQL; everything short-lived lives in the ephemeral store with its
 * natural TTL. Every key carries the organization id, so one tenant's artifacts are invisible
 * to another's provider. Artifact ids (which are the token values of opaque tokens, codes and
 * session ids) are stored only as SHA-256 hashes, and payloads are stored without them.
 */
export const DURABLE_MODELS = new Set(["AccessToken", "RefreshToken", "Grant"]);

const hashId = (id: string) => createHash("sha256").update(id, "utf8").digest("base64url");

/** The durable rows of these grants: each Grant row (stored under its id's hash) and the tokens issued under it. */
export function grantRowsWhere(grantIds: string[]): Prisma.OidcPayloadWhereInput {
  return { OR: [{ grantId: { in: grantIds } }, { model: "Grant", idHash: { in: grantIds.map(hashId) } }] };
}

function stripId(payload: AdapterPayload): AdapterPayload {
  const { jti: _jti, ...rest } = payload;
  return rest;
}

function withId(payload: AdapterPayload | undefined, id: string): AdapterPayload | undefined {
  return payload ? { ...payload, jti: id } : undefined;
}

/** Where an interaction's organization is recorded, so that /interaction/:uid finds its provider. */
export const interactionOrgKey = (uid: string) => `oidc:interaction-org:${hashId(uid)}`;

/**
 * How long the index outlives its interaction (decision 035): a page opened after the sign-in
 * expired or finished still knows whose it was, and shows that organization's way back instead
 * of a dead end. It names an organization and a client, nothing about a person.
 */
export const INTERACTION_ORIGIN_RETENTION_SECONDS = 24 * 3600;

/** The organization and client a sign-in belonged to; `open` while the interaction itself lives. */
export interface InteractionOrigin {
  organizationId: string;
  clientId: string | null;
  open: boolean;
}

interface StoredOrigin {
  organizationId: string;
  clientId: string | null;
  /** When the interaction itself expires, in epoch milliseconds. */
  openUntil: number;
}

export async function lookupInteractionOrigin(store: KeyValueStore, uid: string): Promise<InteractionOrigin | null> {
  const raw = await store.get(interactionOrgKey(uid));
  if (!raw) return null;
  let stored: Partial<StoredOrigin>;
  try {
    stored = JSON.parse(raw) as Partial<StoredOrigin>;
  } catch {
    // Written before the index carried more than the organization id (it lived as long as the interaction).
    return { organizationId: raw, clientId: null, open: true };
  }
  if (typeof stored.organizationId !== "string") return null;
  return {
    organizationId: stored.organizationId,
    clientId: typeof stored.clientId === "string" ? stored.clientId : null,
    open: typeof stored.openUntil === "number" && stored.openUntil > Date.now(),
  };
}

/** The organization of an interaction that has not expired (it may be another browser's, or finished). */
export async function lookupInteractionOrganization(store: KeyValueStore, uid: string): Promise<string | null> {
  const origin = await lookupInteractionOrigin(store, uid);
  return origin?.open ? origin.organizationId : null;
}

function recordInteractionOrigin(store: KeyValueStore, id: string, organizationId: string, payload: AdapterPayload, ttl: number): Promise<void> {
  const clientId = payload.params?.client_id;
  const origin: StoredOrigin = { organizationId, clientId: typeof clientId === "string" ? clientId : null, openUntil: Date.now() + ttl * 1000 };
  return store.set(interactionOrgKey(id), JSON.stringify(origin), ttl + INTERACTION_ORIGIN_RETENTION_SECONDS);
}

export interface AdapterContext {
  sql: Pick<Database, "query">;
  store: KeyValueStore;
  revokedTokens: RevokedTokens;
  organizationId: string;
  /**
   * JWT access tokens are stored under their `jti`, but oidc-provider looks them up by the
   * whole JWT (userinfo, introspection, revocation). This returns the claims of a JWT whose
   * signature verifies against this organization's keys, or undefined.
   */
  claimsOfSignedJwt(value: string): Promise<JWTPayload | undefined>;
}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** Models whose tokens are ES256 JWTs (see jwt-access-tokens.ts). */
const JWT_MODELS = new Set(["AccessToken", "ClientCredentials"]);

export function createAdapterFactory(context: AdapterContext): (name: string) => Adapter {
  return (name: string) => {
    const adapter =
      name === "ClientCredentials" ? clientCredentialsAdapter(context) : DURABLE_MODELS.has(name) ? durableAdapter(context, name) : ephemeralAdapter(context, name);
    const known = name === "AccessToken" || name === "RefreshToken" ? notForVerifiedJwts(adapter, name) : adapter;
    return JWT_MODELS.has(name) ? lookUpJwtsByJti(known, context) : known;
  };
}

/**
 * oidc-provider looks a token up by the value the client presents, which for Porta's access
 * tokens is the whole JWT. Such a value is resolved to its `jti` once its signature verifies;
 * the stored record is then handed back without its `format`, because the provider only
 * loads opaque-format records (it never stores JWTs itself).
 */
function lookUpJwtsByJti(adapter: Adapter, { claimsOfSignedJwt }: AdapterContext): Adapter {
  return {
    ...adapter,
    async find(value) {
      if (!JWT_SHAPE.test(value)) return adapter.find(value);
      const claims = await claimsOfSignedJwt(value);
      const payload = claims ? await withVerifiedJwt(claims, () => adapter.find(claims.jti!)) : undefined;
      if (!payload) return undefined;
      const { format: _format, ...rest } = payload;
      return rest;
    },
    async destroy(value) {
      if (!JWT_SHAPE.test(value)) return adapter.destroy(value);
      const claims = await claimsOfSignedJwt(value);
      if (claims) await withVerifiedJwt(claims, () => adapter.destroy(claims.jti!));
    },
  };
}

/**
 * Introspection and revocation ask every token model at once for the value presented. When
 * that value is the jti of a JWT verified in this request (oidc/edge/mount.ts), what it names is
 * known: an access token, never a refresh token; and a client's own token (subject = client,
 * RFC 9068 §2.2) is never stored (clientCredentialsAdapter). Those lookups could find nothing
 * and cost a statement each, so they are not made.
 */
function notForVerifiedJwts(adapter: Adapter, model: "AccessToken" | "RefreshToken"): Adapter {
  return {
    ...adapter,
    async find(id) {
      const claims = verifiedJwtClaims(id);
      if (claims && (model === "RefreshToken" || claims.sub === claims.client_id)) return undefined;
      return adapter.find(id);
    },
  };
}

/**
 * client_credentials tokens are not stored: the JWT is the record (it names the client, scope,
 * audience, binding and lifetime, and its signature proves them), so a grant writes nothing.
 * Introspection and revocation reach this adapter with the jti of a JWT whose signature was
 * just verified for this organization (withVerifiedJwt); a revocation is the one thing kept, as
 * a marker until the token would have expired anyway.
 */
function clientCredentialsAdapter({ revokedTokens, organizationId }: AdapterContext): Adapter {
  const unsupported = async () => undefined;
  return {
    async upsert() {},
    async find(jti) {
      const claims = verifiedJwtClaims(jti);
      // A token the client got for itself names the client as its subject (RFC 9068 §2.2); a
      // person's access token names the person, and is a stored AccessToken instead.
      if (!claims || typeof claims.client_id !== "string" || claims.sub !== claims.client_id || typeof claims.exp !== "number") return undefined;
      if (await revokedTokens.isRevoked(organizationId, hashId(jti))) return undefined;
      const confirmation = (claims.cnf ?? {}) as Record<string, unknown>;
      const payload: AdapterPayload = {
        kind: "ClientCredentials",
        jti,
        iat: claims.iat,
        exp: claims.exp,
        clientId: claims.client_id,
        ...(typeof claims.scope === "string" ? { scope: claims.scope } : {}),
        ...(claims.aud !== undefined ? { aud: claims.aud } : {}),
        ...(typeof confirmation.jkt === "string" ? { jkt: confirmation.jkt } : {}),
        ...(typeof confirmation["x5t#S256"] === "string" ? { "x5t#S256": confirmation["x5t#S256"] } : {}),
      };
      return payload;
    },
    findByUid: unsupported,
    findByUserCode: unsupported,
    async consume() {},
    async destroy(jti) {
      const claims = verifiedJwtClaims(jti);
      if (!claims || claims.sub !== claims.client_id) return;
      if (typeof claims.exp === "number") await revokedTokens.revoke(organizationId, hashId(jti), claims.exp);
    },
    async revokeByGrantId() {},
  };
}

const time = (value: Date | string) => (value instanceof Date ? value : new Date(value)).getTime();

/** hashId of a row's "grantId", computed by the database: where its Grant row is. */
const GRANT_ID_HASH = `translate(rtrim(encode(sha256(convert_to(t."grantId", 'UTF8')), 'base64'), '='), '+/', '-_')`;

interface TokenWithGrantRow extends DurableRow {
  grantOrganizationId: string | null;
  grantPayload: AdapterPayload | null;
  grantExpiresAt: Date | string | null;
  grantConsumedAt: Date | string | null;
}

/**
 * Tokens and grants as rows of "OidcPayload", in plain SQL through the driver: a refresh costs
 * four of these statements, and Prisma's query building had cost more than the statements
 * themselves (decision 057). The columns are those of the OidcPayload model in schema.prisma.
 *
 * oidc-provider looks up a token's Grant right after the token (refresh, introspection,
 * userinfo): within a protocol request, a token is read together with its grant, and the grant's
 * row is handed, once, to the Grant lookup that follows (`prefetchedGrants` of the request
 * scope; any write of that grant in the request drops it first).
 */
function durableAdapter({ sql, organizationId }: AdapterContext, model: string): Adapter {
  const fromRow = (row: DurableRow | null | undefined, id: string): AdapterPayload | undefined => {
    if (!row || row.organizationId !== organizationId) return undefined;
    if (row.expiresAt && time(row.expiresAt) <= Date.now()) return undefined;
    return withId(row.consumedAt ? { ...row.payload, consumed: Math.floor(time(row.consumedAt) / 1000) } : row.payload, id);
  };
  const forgetPrefetched = (grantId: string) => requestScope()?.prefetchedGrants?.delete(grantId);

  async function findWithGrant(id: string, prefetched: Map<string, DurableRow | null>): Promise<AdapterPayload | undefined> {
    const [row] = await sql.query<TokenWithGrantRow>(
      `SELECT t."organizationId", t."payload", t."expiresAt", t."consumedAt", g."organizationId" AS "grantOrganizationId",
         g."payload" AS "grantPayload", g."expiresAt" AS "grantExpiresAt", g."consumedAt" AS "grantConsumedAt"
       FROM "OidcPayload" t LEFT JOIN "OidcPayload" g ON g."model" = 'Grant' AND g."idHash" = ${GRANT_ID_HASH}
       WHERE t."model" = $1 AND t."idHash" = $2`,
      [model, hashId(id)],
    );
    const grantId = row?.payload.grantId;
    if (typeof grantId === "string" && row!.organizationId === organizationId) {
      // A Grant row keeps its own id (upsert): the row joined is the grant the token names, or none.
      const grant = row!.grantPayload?.jti === grantId && row!.grantOrganizationId ? row! : undefined;
      prefetched.set(
        grantId,
        grant ? { organizationId: grant.grantOrganizationId!, payload: grant.grantPayload!, expiresAt: grant.grantExpiresAt, consumedAt: grant.grantConsumedAt } : null,
      );
    }
    return fromRow(row, id);
  }

  return {
    async upsert(id, payload, expiresIn) {
      if (model === "Grant") forgetPrefetched(id);
      // A grant id is no credential (tokens carry it), and the Admin API names sessions (grants) by it.
      const stored = model === "Grant" ? payload : stripId(payload);
      await sql.query(
        `INSERT INTO "OidcPayload" ("model", "idHash", "organizationId", "payload", "grantId", "accountId", "expiresAt")
         VALUES ($1, $2, $3::uuid, $4::jsonb, $5, $6, $7::timestamptz)
         ON CONFLICT ("model", "idHash") DO UPDATE SET "organizationId" = EXCLUDED."organizationId", "payload" = EXCLUDED."payload",
           "grantId" = EXCLUDED."grantId", "accountId" = EXCLUDED."accountId", "expiresAt" = EXCLUDED."expiresAt"`,
        [
          model,
          hashId(id),
          organizationId,
          JSON.stringify(stored),
          payload.grantId ?? null,
          payload.accountId ?? null,
          expiresIn ? new Date(Date.now() + expiresIn * 1000).toISOString() : null,
        ],
      );
    },
    async find(id) {
      const prefetched = requestScope()?.prefetchedGrants;
      if (prefetched && model === "Grant" && prefetched.has(id)) {
        const row = prefetched.get(id);
        prefetched.delete(id);
        return fromRow(row, id);
      }
      if (prefetched && model !== "Grant") return findWithGrant(id, prefetched);
      const [row] = await sql.query<DurableRow>(
        `SELECT "organizationId", "payload", "expiresAt", "consumedAt" FROM "OidcPayload" WHERE "model" = $1 AND "idHash" = $2`,
        [model, hashId(id)],
      );
      return fromRow(row, id);
    },
    async findByUid() {
      return undefined;
    },
    async findByUserCode() {
      return undefined;
    },
    async consume(id) {
      await sql.query(`UPDATE "OidcPayload" SET "consumedAt" = $4::timestamptz WHERE "model" = $1 AND "idHash" = $2 AND "organizationId" = $3::uuid`, [
        model,
        hashId(id),
        organizationId,
        new Date().toISOString(),
      ]);
    },
    async destroy(id) {
      if (model === "Grant") forgetPrefetched(id);
      await sql.query(`DELETE FROM "OidcPayload" WHERE "model" = $1 AND "idHash" = $2 AND "organizationId" = $3::uuid`, [model, hashId(id), organizationId]);
    },
    async revokeByGrantId(grantId) {
      forgetPrefetched(grantId);
      await sql.query(`DELETE FROM "OidcPayload" WHERE "grantId" = $1 AND "organizationId" = $2::uuid`, [grantId, organizationId]);
    },
  };
}

/** Where the ephemeral adapter keeps one artifact; a session's key is what the account page lists and ends. */
export const ephemeralKey = (organizationId: string, model: string, id: string) => `oidc:${organizationId}:${model}:${hashId(id)}`;

function ephemeralAdapter({ store, organizationId }: AdapterContext, model: string): Adapter {
  const prefix = `oidc:${organizationId}:`;
  const key = (id: string) => ephemeralKey(organizationId, model, id);
  const grantKey = (grantId: string) => `${prefix}grant:${grantId}`;
  const uidKey = (uid: string) => `${prefix}${model}:uid:${hashId(uid)}`;
  const userCodeKey = (code: string) => `${prefix}${model}:userCode:${hashId(code)}`;

  async function read(id: string) {
    const text = await store.get(key(id));
    return text ? withId(JSON.parse(text) as AdapterPayload, id) : undefined;
  }

  return {
    async upsert(id, payload, expiresIn) {
      const ttl = expiresIn && expiresIn > 0 ? expiresIn : 3600;
      await store.set(key(id), JSON.stringify(stripId(payload)), ttl);
      const indexes: Array<Promise<void>> = [];
      // Revoking a grant ends what it issued, not an interaction that names it: a sign-in as
      // someone else ends the old session (and its grants) on the way back to this interaction.
      if (payload.grantId && model !== "Interaction") indexes.push(store.addToSet(grantKey(payload.grantId), key(id), ttl));
      // Index values are the raw id, readable only by someone holding the uid or user code.
      if (payload.uid) indexes.push(store.set(uidKey(payload.uid), id, ttl));
      if (payload.userCode) indexes.push(store.set(userCodeKey(payload.userCode), id, ttl));
      if (model === "Interaction") indexes.push(recordInteractionOrigin(store, id, organizationId, payload, ttl));
      if (model === "Session" && payload.accountId) {
        indexes.push(store.addToSet(accountSessionsKey(organizationId, payload.accountId), key(id), ttl));
        const device = requestScope()?.device;
        if (device) indexes.push(store.set(sessionDeviceKey(key(id)), JSON.stringify({ ...device, seenAt: Math.floor(Date.now() / 1000) }), ttl));
      }
      await Promise.all(indexes);
    },
    find: read,
    async findByUid(uid) {
      const id = await store.get(uidKey(uid));
      return id ? read(id) : undefined;
    },
    async findByUserCode(userCode) {
      const id = await store.get(userCodeKey(userCode));
      return id ? read(id) : undefined;
    },
    async consume(id) {
      const text = await store.get(key(id));
      if (!text) return;
      const payload = JSON.parse(text) as AdapterPayload;
      await store.replace(key(id), JSON.stringify({ ...payload, consumed: Math.floor(Date.now() / 1000) }));
    },
    async destroy(id) {
      await store.del(key(id), ...(model === "Session" ? [sessionDeviceKey(key(id))] : []));
    },
    async revokeByGrantId(grantId) {
      const keys = await store.setMembers(grantKey(grantId));
      await store.del(...keys, grantKey(grantId));
    },
  };
}
