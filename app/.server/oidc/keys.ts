import { randomBytes } from "node:crypto";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import type { PrismaClient } from "~/generated/prisma/client";
import type { Encrypter } from "../crypto/encryption";

/**
 * ES256 signing keys, shared by every organization's provider. Life of a key:
 * staged (published in the JWKS, not signing, so relying parties learn it ahead of use) →
 * active (signs everything) → retiring (still published, until every token it signed has
 * expired) → retired (gone). The private half is stored encrypted with AES-256-GCM.
 */
export type KeyStatus = "staged" | "active" | "retiring" | "retired";

export interface SigningKeyInfo {
  kid: string;
  alg: "ES256";
  status: KeyStatus;
  createdAt: Date;
  retireAfter: Date | null;
  retiredAt: Date | null;
  publicJwk: JWK;
}

export type PrivateSigningJwk = JWK & { kid: string; alg: "ES256"; use: "sig" };

export interface KeyService {
  list(): Promise<SigningKeyInfo[]>;
  /** Adds a staged key: published at once, signing from the next rotation. */
  generate(): Promise<SigningKeyInfo>;
  /** Promotes the newest staged key (or a new one) to active; the old active key retires. */
  rotate(): Promise<SigningKeyInfo>;
  /** Creates the first key when there is none (first start). */
  ensureActiveKey(): Promise<void>;
  /** Private JWKs for the providers: the active key first (it signs), then the published rest. */
  providerJwks(): Promise<PrivateSigningJwk[]>;
  /** Public JWKs of every published key (what /.well-known/jwks shows). */
  publicJwks(): Promise<JWK[]>;
}

export interface KeyServiceOptions {
  prisma: PrismaClient;
  encrypter: Encrypter;
  /** The longest lifetime of anything a key signs (ID tokens, JWT access tokens), in seconds. */
  maxSignedTokenLifetimeSeconds: () => number | Promise<number>;
  /** Called after any change, so that providers everywhere reload their keys. */
  onChange: () => Promise<void>;
  now?: () => Date;
}

const CLOCK_SKEW_SECONDS = 60;
const ROTATION_LOCK_KEY = 72707371;

const aad = (kid: string) => `signing-key:${kid}`;

type KeyRow = Awaited<ReturnType<PrismaClient["signingKey"]["findMany"]>>[number];

function toInfo(row: KeyRow): SigningKeyInfo {
  return {
    kid: row.id,
    alg: "ES256",
    status: row.status as KeyStatus,
    createdAt: row.createdAt,
    retireAfter: row.retireAfter,
    retiredAt: row.retiredAt,
    publicJwk: row.publicJwk as JWK,
  };
}

export function createKeyService(options: KeyServiceOptions): KeyService {
  const { prisma, encrypter } = options;
  const now = options.now ?? (() => new Date());

  async function newKey(status: "staged" | "active") {
    const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
    const kid = randomBytes(12).toString("base64url");
    const privateJwk = await exportJWK(privateKey);
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig" };
    return {
      id: kid,
      alg: "ES256",
      status,
      publicJwk,
      privateJwkEncrypted: encrypter.encrypt(JSON.stringify(privateJwk), aad(kid)),
    };
  }

  /**
   * Retiring keys whose tokens have all expired leave the JWKS. Providers built earlier still
   * hold them, so a retirement reloads every provider, as any other key change does.
   */
  async function retireExpired() {
    const retired = await prisma.signingKey.updateMany({
      where: { status: "retiring", retireAfter: { lte: now() } },
      data: { status: "retired", retiredAt: now() },
    });
    if (retired.count > 0) await options.onChange();
  }

  async function publishedRows() {
    await retireExpired();
    const rows = await prisma.signingKey.findMany({
      where: { status: { in: ["active", "staged", "retiring"] } },
      orderBy: { createdAt: "desc" },
    });
    const rank: Record<string, number> = { active: 0, staged: 1, retiring: 2 };
    return rows.sort((a, b) => (rank[a.status] ?? 9) - (rank[b.status] ?? 9));
  }

  return {
    async list() {
      await retireExpired();
      const rows = await prisma.signingKey.findMany({ orderBy: { createdAt: "desc" } });
      return rows.map(toInfo);
    },

    async generate() {
      const row = await prisma.signingKey.create({ data: await newKey("staged") });
      await options.onChange();
      return toInfo(row);
    },

    async rotate() {
      const fresh = await newKey("active");
      const lifetime = await options.maxSignedTokenLifetimeSeconds();
      const row = await prisma.$transaction(async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(${ROTATION_LOCK_KEY})`;
        const retireAfter = new Date(now().getTime() + (lifetime + CLOCK_SKEW_SECONDS) * 1000);
        await tx.signingKey.updateMany({ where: { status: "active" }, data: { status: "retiring", retireAfter } });
        const staged = await tx.signingKey.findFirst({ where: { status: "staged" }, orderBy: { createdAt: "desc" } });
        if (staged) return tx.signingKey.update({ where: { id: staged.id }, data: { status: "active" } });
        return tx.signingKey.create({ data: fresh });
      });
      await options.onChange();
      return toInfo(row);
    },

    async ensureActiveKey() {
      const created = await prisma.$transaction(async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(${ROTATION_LOCK_KEY})`;
        const active = await tx.signingKey.count({ where: { status: "active" } });
        if (active > 0) return false;
        await tx.signingKey.create({ data: await newKey("active") });
        return true;
      });
      if (created) await options.onChange();
    },

    async providerJwks() {
      const rows = await publishedRows();
      return rows.map((row) => ({
        ...(JSON.parse(encrypter.decrypt(row.privateJwkEncrypted, aad(row.id))) as JWK),
        kid: row.id,
        alg: "ES256" as const,
        use: "sig" as const,
      }));
    },

    async publicJwks() {
      return (await publishedRows()).map((row) => row.publicJwk as JWK);
    },
  };
}
