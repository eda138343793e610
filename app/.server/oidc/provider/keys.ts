import { randomBytes } from "node:crypto";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import type { Prisma, PrismaClient } from "~/generated/prisma/client";
import type { Encrypter } from "../../crypto/encryption";

/**
 * ES256 signing keys, each organization its own (decision 016). Life of a key:
 * staged (published in the organization's JWKS, not signing, so relying parties learn it ahead
 * of use) → active (signs everything of the organization) → retiring (still published, until
 * every token it signed has expired) → retired (gone). The private half is stored encrypted
 * with AES-256-GCM.
 *
 * Keys without an organization are the shared keys of earlier versions: they never sign again,
 * and every organization publishes (and accepts) them while they retire.
 */
export type KeyStatus = "staged" | "active" | "retiring" | "retired";

export interface SigningKeyInfo {
  kid: string;
  alg: "ES256";
  status: KeyStatus;
  /** Null for a shared key of an earlier version. */
  organizationId: string | null;
  createdAt: Date;
  retireAfter: Date | null;
  retiredAt: Date | null;
  publicJwk: JWK;
}

export type PrivateSigningJwk = JWK & { kid: string; alg: "ES256"; use: "sig" };

type Tx = Prisma.TransactionClient;
/** Where a change inside the caller's transaction sends its notice: run it once the transaction has committed. */
type AfterCommit = (effect: () => unknown) => void;

export interface KeyService {
  /** Every key of one organization, newest first (its first key is created if it has none yet). */
  list(organizationId: string): Promise<SigningKeyInfo[]>;
  /** Adds a staged key to an organization: published at once, signing from its next rotation. */
  generate(organizationId: string): Promise<SigningKeyInfo>;
  /** `generate` within the caller's transaction; the providers hear of it through `afterCommit`. */
  generateIn(tx: Tx, organizationId: string, afterCommit: AfterCommit): Promise<SigningKeyInfo>;
  /** Promotes the organization's newest staged key (or a new one) to active; its active key retires. */
  rotate(organizationId: string): Promise<SigningKeyInfo>;
  /** `rotate` within the caller's transaction; the providers hear of it through `afterCommit`. */
  rotateIn(tx: Tx, organizationId: string, afterCommit: AfterCommit): Promise<SigningKeyInfo>;
  /** Rotates every organization that is not deleted; returns how many it rotated. */
  rotateAll(): Promise<number>;
  /** Gives an organization its first active key within the caller's transaction (a no-op when it has one). */
  ensureActiveKeyIn(tx: Tx, organizationId: string): Promise<void>;
  /** At start: the shared keys of earlier versions stop signing. One statement, however many organizations. */
  retireLegacyKeys(): Promise<void>;
  /** Retires keys whose retiring period is over: one organization's and the shared ones, or every one. */
  retireExpired(organizationId?: string): Promise<void>;
  /** `retireExpired` through `db` (a single statement: no transaction of its own); the providers hear of it through `afterCommit`. */
  retireExpiredIn(db: Tx, afterCommit: AfterCommit, organizationId?: string): Promise<void>;
  /** Private JWKs for an organization's provider: its active key first (it signs), then the rest it publishes. */
  providerJwks(organizationId: string): Promise<PrivateSigningJwk[]>;
  /**
   * The same, from the rows a caller already read with the organization (oidc/provider/tenant-load.ts:
   * a provider's build in one round trip); it reads them again only when a key is due to retire
   * or the organization has no active key yet.
   */
  providerJwksFrom(organizationId: string, rows: PublishedKeyRow[]): Promise<PrivateSigningJwk[]>;
  /**
   * The public keys of those rows in the order the provider publishes them, without decrypting
   * anything; undefined when the rows need work first (a key due to retire, no active key), which
   * only `providerJwks` does.
   */
  publicJwksFrom(organizationId: string, rows: Array<KeyStateRow & Pick<KeyRow, "id"> & { publicJwk: unknown }>): Array<JWK & { kid: string }> | undefined;
  /** Public JWKs of what an organization publishes (its /.well-known/jwks). */
  publicJwks(organizationId: string): Promise<JWK[]>;
  /**
   * Whether the encryption key opens the stored signing keys (the newest one stands for all:
   * they are sealed with the same key). False means Porta was started with another key than
   * the one this database was written with, and no organization could sign anything.
   */
  canDecryptStoredKeys(): Promise<boolean>;
  /**
   * How many key changes this process has made or noticed (rotations, retirements). Caches of
   * published keys that live outside the providers compare it to reload at once.
   */
  changeCount(): number;
}

export interface KeyServiceOptions {
  prisma: PrismaClient;
  encrypter: Encrypter;
  /**
   * The longest lifetime of anything a key signs (ID tokens, JWT access tokens), in seconds,
   * read through `db`: inside a write, the write's transaction (the embedded database has one connection).
   */
  maxSignedTokenLifetimeSeconds: (db: Tx) => number | Promise<number>;
  /** Called after a change of one organization's keys, or "*" for the shared keys and rotations of all. */
  onChange: (organizationId: string) => Promise<void>;
  now?: () => Date;
}

const CLOCK_SKEW_SECONDS = 60;
/** First half of the per-organization advisory lock; the second is hashtext(organizationId). */
const ORGANIZATION_KEY_LOCK = 72707371;
/** Organizations rotated per transaction by rotateAll. */
const ROTATE_ALL_BATCH = 100;
/** More organizations retired at once than this reload every provider instead of each one. */
const INVALIDATE_EACH_LIMIT = 20;

/** What an organization publishes: its own keys in these states, and the shared keys still retiring. */
export const PUBLISHED: KeyStatus[] = ["active", "staged", "retiring"];
const aad = (kid: string) => `signing-key:${kid}`;

type KeyRow = Awaited<ReturnType<PrismaClient["signingKey"]["findMany"]>>[number];
/** The columns of a published key a provider needs. */
export type PublishedKeyRow = Pick<KeyRow, "id" | "organizationId" | "status" | "retireAfter" | "privateJwkEncrypted">;
/** What decides whether published keys need work before they are used. */
type KeyStateRow = Pick<KeyRow, "organizationId" | "status" | "retireAfter">;

/**
 * When the first retiring key among these is due to retire (ms since the epoch; Infinity when
 * none is): from then on the published set must change before it is used again.
 */
export function keysChangeAt(rows: KeyStateRow[]): number {
  let at = Infinity;
  for (const row of rows) if (row.status === "retiring" && row.retireAfter) at = Math.min(at, row.retireAfter.getTime());
  return at;
}
type NewKey = Prisma.SigningKeyUncheckedCreateInput;

/** The active key first (the one that signs), then staged, then retiring, then the shared keys of earlier versions. */
function signingKeyFirst<Row extends Pick<KeyRow, "organizationId" | "status">>(rows: Row[]): Row[] {
  const rank = (row: Row) => (row.organizationId === null ? 3 : ({ active: 0, staged: 1, retiring: 2 } as Record<string, number>)[row.status] ?? 9);
  return rows.sort((a, b) => rank(a) - rank(b));
}

export function toSigningKeyInfo(row: KeyRow): SigningKeyInfo {
  return {
    kid: row.id,
    alg: "ES256",
    status: row.status as KeyStatus,
    organizationId: row.organizationId,
    createdAt: row.createdAt,
    retireAfter: row.retireAfter,
    retiredAt: row.retiredAt,
    publicJwk: row.publicJwk as JWK,
  };
}

/**
 * Serializes key changes of the given organizations across processes. Locks are taken in one
 * order (by their hash), so that two batches never wait on each other in a circle.
 */
async function lockOrganizations(tx: Tx, organizationIds: string[]) {
  if (organizationIds.length === 1) {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${ORGANIZATION_KEY_LOCK}::int, hashtext(${organizationIds[0]}::text))`;
    return;
  }
  await tx.$executeRaw`
    SELECT pg_advisory_xact_lock(${ORGANIZATION_KEY_LOCK}::int, h)
      FROM (SELECT DISTINCT hashtext(id) AS h FROM unnest(${organizationIds}::text[]) AS id ORDER BY h) AS ordered`;
}

export function createKeyService(options: KeyServiceOptions): KeyService {
  const { prisma, encrypter } = options;
  const now = options.now ?? (() => new Date());
  let changes = 0;
  const changed = async (organizationId: string) => {
    changes++;
    await options.onChange(organizationId);
  };

  async function newKey(organizationId: string, status: "staged" | "active"): Promise<NewKey> {
    const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
    const kid = randomBytes(12).toString("base64url");
    const privateJwk = await exportJWK(privateKey);
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig" };
    return {
      id: kid,
      organizationId,
      alg: "ES256",
      status,
      publicJwk,
      privateJwkEncrypted: encrypter.encrypt(JSON.stringify(privateJwk), aad(kid)),
    };
  }

  /** When a key that stops signing now may leave the JWKS: after the longest token lifetime and clock skew. */
  async function retireAfterNow(db: Tx = prisma) {
    const lifetime = await options.maxSignedTokenLifetimeSeconds(db);
    return new Date(now().getTime() + (lifetime + CLOCK_SKEW_SECONDS) * 1000);
  }

  async function ensureActiveKeyIn(tx: Tx, organizationId: string) {
    await lockOrganizations(tx, [organizationId]);
    const active = await tx.signingKey.findFirst({ where: { organizationId, status: "active" }, select: { id: true } });
    if (!active) await tx.signingKey.create({ data: await newKey(organizationId, "active") });
  }

  /**
   * The rotation of a batch of organizations in one transaction, in set-based statements: the
   * active keys retire, the newest staged key of each organization becomes active, and the
   * others get the fresh key generated for them beforehand.
   */
  async function rotateBatchIn(tx: Tx, fresh: Map<string, NewKey>, retireAfter: Date) {
    const organizationIds = [...fresh.keys()];
    await lockOrganizations(tx, organizationIds);
    await tx.signingKey.updateMany({ where: { organizationId: { in: organizationIds }, status: "active" }, data: { status: "retiring", retireAfter } });
    const staged = await tx.signingKey.findMany({
      where: { organizationId: { in: organizationIds }, status: "staged" },
      orderBy: { createdAt: "desc" },
      select: { id: true, organizationId: true },
    });
    const promoted = new Map<string, string>();
    for (const key of staged) if (!promoted.has(key.organizationId!)) promoted.set(key.organizationId!, key.id);
    if (promoted.size > 0) await tx.signingKey.updateMany({ where: { id: { in: [...promoted.values()] } }, data: { status: "active" } });
    const created = [...fresh.entries()].filter(([organizationId]) => !promoted.has(organizationId)).map(([, key]) => key);
    if (created.length > 0) await tx.signingKey.createMany({ data: created });
    return tx.signingKey.findMany({ where: { organizationId: { in: organizationIds }, status: "active" } });
  }

  async function notify(organizationIds: Set<string | null>) {
    if (organizationIds.size === 0) return;
    if (organizationIds.has(null) || organizationIds.size > INVALIDATE_EACH_LIMIT) return changed("*");
    for (const organizationId of organizationIds) await changed(organizationId!);
  }

  async function retireExpiredIn(db: Tx, afterCommit: AfterCommit, organizationId?: string) {
    const retired = await db.signingKey.updateManyAndReturn({
      where: {
        status: "retiring",
        retireAfter: { lte: now() },
        ...(organizationId ? { OR: [{ organizationId }, { organizationId: null }] } : {}),
      },
      data: { status: "retired", retiredAt: now() },
      select: { organizationId: true },
    });
    // Providers built earlier still hold the retired keys: reload them.
    const organizationIds = new Set(retired.map((key) => key.organizationId));
    afterCommit(() => notify(organizationIds));
  }

  /** For callers outside a transaction: the notices go out once the work (committed by then) is done. */
  async function atOnce<T>(work: (afterCommit: AfterCommit) => Promise<T>): Promise<T> {
    const effects: Array<() => unknown> = [];
    const value = await work((effect) => void effects.push(effect));
    for (const effect of effects) await effect();
    return value;
  }

  const retireExpired = (organizationId?: string) => atOnce((afterCommit) => retireExpiredIn(prisma, afterCommit, organizationId));

  async function generateIn(tx: Tx, organizationId: string, afterCommit: AfterCommit) {
    const row = await tx.signingKey.create({ data: await newKey(organizationId, "staged") });
    afterCommit(() => changed(organizationId));
    return toSigningKeyInfo(row);
  }

  async function rotateOneIn(tx: Tx, organizationId: string, afterCommit: AfterCommit) {
    const fresh = new Map([[organizationId, await newKey(organizationId, "active")]]);
    const [row] = await rotateBatchIn(tx, fresh, await retireAfterNow(tx));
    afterCommit(() => changed(organizationId));
    return toSigningKeyInfo(row!);
  }

  const findPublished = (organizationId: string) =>
    prisma.signingKey.findMany({
      where: { OR: [{ organizationId, status: { in: PUBLISHED } }, { organizationId: null, status: "retiring" }] },
      orderBy: { createdAt: "desc" },
    });

  /**
   * What an organization publishes, its signing key first. Usually one indexed read: retiring
   * and creating happen only when a read shows they are due (an organization from before keys
   * per organization gets its key here, on first use, rather than all of them at start).
   */
  async function publishedRows(organizationId: string) {
    let rows = await findPublished(organizationId);
    if (isDueToRetire(rows)) {
      await retireExpired(organizationId);
      rows = await findPublished(organizationId);
    }
    if (!hasActiveKey(rows, organizationId)) {
      await prisma.$transaction((tx) => ensureActiveKeyIn(tx, organizationId));
      rows = await findPublished(organizationId);
    }
    return signingKeyFirst(rows);
  }

  const isDueToRetire = (rows: KeyStateRow[]) => keysChangeAt(rows) <= now().getTime();
  const hasActiveKey = (rows: KeyStateRow[], organizationId: string) => rows.some((row) => row.status === "active" && row.organizationId === organizationId);

  const toPrivateJwk = (row: PublishedKeyRow): PrivateSigningJwk => ({
    ...(JSON.parse(encrypter.decrypt(row.privateJwkEncrypted, aad(row.id))) as JWK),
    kid: row.id,
    alg: "ES256" as const,
    use: "sig" as const,
  });

  return {
    async list(organizationId) {
      await publishedRows(organizationId);
      const rows = await prisma.signingKey.findMany({ where: { organizationId }, orderBy: { createdAt: "desc" } });
      return rows.map(toSigningKeyInfo);
    },

    generate: (organizationId) => atOnce((afterCommit) => generateIn(prisma, organizationId, afterCommit)),

    generateIn,

    rotate: (organizationId) => atOnce((afterCommit) => prisma.$transaction((tx) => rotateOneIn(tx, organizationId, afterCommit))),

    rotateIn: rotateOneIn,

    /**
     * Not offered inside a caller's transaction: every organization in one transaction would hold
     * all their key locks, and the embedded database's only connection, for as long as the whole
     * rotation takes. Each batch commits on its own; a failure leaves the batches before it rotated,
     * which is what a repeated rotation would have done anyway.
     */
    async rotateAll() {
      const retireAfter = await retireAfterNow();
      let rotated = 0;
      let after: string | undefined;
      for (;;) {
        const batch = await prisma.organization.findMany({
          where: { status: { not: "deleted" }, ...(after ? { id: { gt: after } } : {}) },
          orderBy: { id: "asc" },
          take: ROTATE_ALL_BATCH,
          select: { id: true },
        });
        if (batch.length === 0) break;
        // Keys are generated outside the transaction, which then only writes.
        const fresh = new Map(await Promise.all(batch.map(async ({ id }) => [id, await newKey(id, "active")] as const)));
        await prisma.$transaction((tx) => rotateBatchIn(tx, fresh, retireAfter));
        rotated += batch.length;
        after = batch[batch.length - 1]!.id;
      }
      if (rotated > 0) await changed("*");
      return rotated;
    },

    ensureActiveKeyIn,

    async retireLegacyKeys() {
      const retireAfter = await retireAfterNow();
      const [signing, staged] = await prisma.$transaction([
        prisma.signingKey.updateMany({ where: { organizationId: null, status: "active" }, data: { status: "retiring", retireAfter } }),
        // A staged shared key never signed anything: nothing to wait for.
        prisma.signingKey.updateMany({ where: { organizationId: null, status: "staged" }, data: { status: "retired", retiredAt: now() } }),
      ]);
      if (signing.count + staged.count > 0) await changed("*");
    },

    retireExpired,

    retireExpiredIn,

    async providerJwks(organizationId) {
      return (await publishedRows(organizationId)).map(toPrivateJwk);
    },

    publicJwksFrom(organizationId, rows) {
      if (isDueToRetire(rows) || !hasActiveKey(rows, organizationId)) return undefined;
      return signingKeyFirst([...rows]).map((row) => ({ ...(row.publicJwk as JWK), kid: row.id }));
    },

    async providerJwksFrom(organizationId, rows) {
      if (isDueToRetire(rows) || !hasActiveKey(rows, organizationId)) return (await publishedRows(organizationId)).map(toPrivateJwk);
      return signingKeyFirst([...rows]).map(toPrivateJwk);
    },

    async publicJwks(organizationId) {
      return (await publishedRows(organizationId)).map((row) => row.publicJwk as JWK);
    },

    async canDecryptStoredKeys() {
      const row = await prisma.signingKey.findFirst({ where: { status: { not: "retired" } }, orderBy: { createdAt: "desc" }, select: { id: true, privateJwkEncrypted: true } });
      if (!row) return true;
      try {
        encrypter.decrypt(row.privateJwkEncrypted, aad(row.id));
        return true;
      } catch {
        return false;
      }
    },

    changeCount: () => changes,
  };
}
