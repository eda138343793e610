import { randomBytes, randomUUID } from "node:crypto";
import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT, type JWK } from "jose";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEncrypter } from "~/.server/crypto/encryption";
import { openDatabase } from "~/.server/db/client";
import { applyMigrations, DEFAULT_MIGRATIONS_DIR } from "~/.server/db/migrate";
import { MAX_SIGNED_TOKEN_LIFETIME } from "~/.server/oidc/provider/lifetimes";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createTestDatabase, usingPostgres, type TestDatabase } from "../support/database";
import { createClient, createUser } from "../support/factories";
import { clientConfiguration, codeFlow, issuerOf, type OrgRef } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

/**
 * The upgrade from one key set shared by every organization to keys per organization. A
 * database written by the previous version (its migrations, its shared keys, an organization)
 * is started with this one: the shared keys stop signing, stay published in every
 * organization's JWKS and accepted by userinfo, introspection and the Admin API until every
 * token they signed has expired, then retire. Organizations that existed before get their own
 * key when they are first used, not at start.
 */
const PER_ORGANIZATION_MIGRATION = "20261123000100_signing_keys_per_organization";
const ENCRYPTION_KEY = randomBytes(32).toString("base64");
const CB = "https://rp.example.com/cb";

const scratch = mkdtempSync(path.join(tmpdir(), "porta-legacy-keys-"));
const dataDir = path.join(scratch, "data");
let database: TestDatabase;
let porta: TestPorta;
let startedAt: number;

interface LegacyKey {
  kid: string;
  privateJwk: JWK & { kid: string };
}
/** The shared key that signed everything before the upgrade, one retiring from an earlier rotation, one staged. */
let signing: LegacyKey;
let retiring: LegacyKey & { retireAfter: Date };
let staged: LegacyKey;
/** Organizations that existed before the upgrade. */
let before: OrgRef;
let racing: OrgRef;

/** A key as the previous version stored it: kid, public JWK, private JWK sealed under ENCRYPTION_KEY. */
async function legacyKey() {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const kid = randomBytes(12).toString("base64url");
  const privateJwk = await exportJWK(privateKey);
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig" };
  const sealed = createEncrypter(Buffer.from(ENCRYPTION_KEY, "base64")).encrypt(JSON.stringify(privateJwk), `signing-key:${kid}`);
  return { kid, privateJwk: { ...privateJwk, kid }, publicJwk, sealed };
}

/** The same token with its header's kid and signature by another key. */
async function signedBy(jwt: string, key: LegacyKey) {
  return new SignJWT(decodeJwt(jwt)).setProtectedHeader({ ...decodeProtectedHeader(jwt), alg: "ES256", kid: key.kid }).sign(await importJWK(key.privateJwk, "ES256"));
}

beforeAll(async () => {
  // The previous version's schema: every migration before keys per organization.
  const previous = path.join(scratch, "migrations");
  cpSync(DEFAULT_MIGRATIONS_DIR, previous, { recursive: true });
  const names = readdirSync(previous).filter((name) => name >= PER_ORGANIZATION_MIGRATION);
  expect(names[0]).toBe(PER_ORGANIZATION_MIGRATION);
  for (const name of names) rmSync(path.join(previous, name), { recursive: true });

  database = await createTestDatabase();
  const db = await openDatabase({ databaseUrl: database.url, pgliteDir: path.join(dataDir, "pglite") });
  try {
    await applyMigrations(db, previous);
    const [a, b, c] = [await legacyKey(), await legacyKey(), await legacyKey()];
    const retireAfter = new Date(Date.now() + 20 * 60_000);
    before = { id: randomUUID(), slug: `before-${randomBytes(4).toString("hex")}` };
    racing = { id: randomUUID(), slug: `racing-${randomBytes(4).toString("hex")}` };
    await db.rawTransaction(async (tx) => {
      const insert = `INSERT INTO "SigningKey" ("id", "publicJwk", "privateJwkEncrypted", "status", "retireAfter") VALUES ($1, $2::jsonb, $3, $4, $5)`;
      await tx.query(insert, [a.kid, JSON.stringify(a.publicJwk), a.sealed, "active", null]);
      await tx.query(insert, [b.kid, JSON.stringify(b.publicJwk), b.sealed, "retiring", retireAfter.toISOString()]);
      await tx.query(insert, [c.kid, JSON.stringify(c.publicJwk), c.sealed, "staged", null]);
      for (const org of [before, racing]) await tx.query(`INSERT INTO "Organization" ("id", "name", "slug") VALUES ($1, $2, $3)`, [org.id, `Org ${org.slug}`, org.slug]);
    });
    signing = a;
    retiring = { ...b, retireAfter };
    staged = c;
  } finally {
    await db.close();
  }

  startedAt = Date.now();
  porta = await startTestPorta({
    dataDir,
    env: { ENCRYPTION_KEY },
    ...(usingPostgres() ? { databaseUrl: database.url! } : { persistentPglite: true }),
  });
}, 120_000);

afterAll(async () => {
  await porta?.stop();
  await database?.drop();
  rmSync(scratch, { recursive: true, force: true });
});

const keyRow = (kid: string) => porta.services.db.prisma.signingKey.findUniqueOrThrow({ where: { id: kid } });
const jwksKids = async (org: Pick<OrgRef, "slug">) =>
  ((await (await fetch(`${issuerOf(porta, org)}/.well-known/jwks`)).json()) as { keys: JWK[] }).keys.map((k) => k.kid!);
const adminOrg = () => ({ id: porta.bootstrap.organizationId, slug: porta.services.config.superAdminSlug });

describe("the upgrade to signing keys per organization", () => {
  it("stops the shared keys signing: the signing one retires after the longest token lifetime, a staged one retires at once", async () => {
    const lifetime = Math.max(MAX_SIGNED_TOKEN_LIFETIME, await porta.services.settings.get("tokens.accessTokenTtlSeconds"));
    const row = await keyRow(signing.kid);
    expect(row).toMatchObject({ organizationId: null, status: "retiring", retiredAt: null });
    // Every token it signed expires within the longest lifetime; a minute of clock skew on top, as a rotation allows.
    expect(row.retireAfter!.getTime()).toBeGreaterThanOrEqual(startedAt + lifetime * 1000);
    expect(row.retireAfter!.getTime()).toBeLessThanOrEqual(Date.now() + (lifetime + 60) * 1000);
    expect(await keyRow(retiring.kid)).toMatchObject({ organizationId: null, status: "retiring", retireAfter: retiring.retireAfter });
    expect(await keyRow(staged.kid)).toMatchObject({ organizationId: null, status: "retired", retiredAt: expect.any(Date) });
  });

  it("does no work per organization at start: an organization from before gets its key when it is first used", async () => {
    const prisma = porta.services.db.prisma;
    expect(await prisma.signingKey.count({ where: { organizationId: { in: [before.id, racing.id] } } })).toBe(0);
    // The super-admin organization got its key with the bootstrap.
    expect(await prisma.signingKey.count({ where: { organizationId: adminOrg().id, status: "active" } })).toBe(1);

    const kids = await jwksKids(before);
    const own = await prisma.signingKey.findMany({ where: { organizationId: before.id } });
    expect(own.map((k) => k.status)).toEqual(["active"]);
    // Its own key signs and comes first; the shared keys stay published until they retire.
    expect(kids[0]).toBe(own[0]!.id);
    expect(kids.slice(1).sort()).toEqual([signing.kid, retiring.kid].sort());

    // Many first uses at once still create one key.
    await Promise.all(Array.from({ length: 6 }, () => porta.services.keys.providerJwks(racing.id)));
    expect(await prisma.signingKey.count({ where: { organizationId: racing.id } })).toBe(1);

    // A new organization: a key of its own, the shared keys beside it.
    const admin = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
    const created = await admin.post<{ id: string; slug: string }>("/organizations", { name: "After", slug: `after-${randomBytes(4).toString("hex")}` });
    const newKids = await jwksKids(created.body);
    expect(newKids.slice(1).sort()).toEqual([signing.kid, retiring.kid].sort());
    expect([own[0]!.id, ...(await jwksKids(adminOrg()))]).not.toContain(newKids[0]);
  });

  it("accepts tokens signed by the shared key until they expire, then refuses them", async () => {
    const prisma = porta.services.db.prisma;
    const user = await createUser(prisma, before.id);
    const { client, secret } = await createClient(prisma, before.id, { redirectUris: [CB] });
    const config = await clientConfiguration(porta, before, client, { secret: secret!.value });
    const tokens = await codeFlow(porta, before, config, { accountId: user.id, scope: "openid email", redirectUri: CB, params: { prompt: "consent" } });
    // What the previous version issued: the same tokens, signed by the shared key.
    const accessToken = await signedBy(tokens.access_token, signing);
    const idToken = await signedBy(tokens.id_token!, signing);
    const adminToken = await signedBy((await obtainAdminTokens(porta)).accessToken, signing);
    const userinfo = () => fetch(`${issuerOf(porta, before)}/me`, { headers: { authorization: `Bearer ${accessToken}` } });
    const jwks = createRemoteJWKSet(new URL(`${issuerOf(porta, before)}/.well-known/jwks`));

    expect((await userinfo()).status).toBe(200);
    expect((await oidc.tokenIntrospection(config, accessToken)).active).toBe(true);
    expect((await jwtVerify(idToken, jwks, { issuer: issuerOf(porta, before), audience: client.id })).protectedHeader.kid).toBe(signing.kid);
    expect((await adminApi(porta, adminToken).get("/keys")).status).toBe(200);

    // Their time is up: the shared keys retire, leave every JWKS, and what they signed no longer verifies.
    await prisma.signingKey.updateMany({ where: { organizationId: null, status: "retiring" }, data: { retireAfter: new Date(Date.now() - 1000) } });
    const admin = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
    expect((await admin.get("/keys")).status).toBe(200);
    expect(await keyRow(signing.kid)).toMatchObject({ status: "retired", retiredAt: expect.any(Date) });
    expect(await keyRow(retiring.kid)).toMatchObject({ status: "retired" });
    expect((await adminApi(porta, adminToken).get("/keys")).status).toBe(401);
    for (const org of [before, adminOrg()]) {
      const kids = await jwksKids(org);
      expect(kids).not.toContain(signing.kid);
      expect(kids).not.toContain(retiring.kid);
    }
    expect((await userinfo()).status).toBe(401);
    expect((await oidc.tokenIntrospection(config, accessToken)).active).toBe(false);
    // The organization's own tokens are unaffected.
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(true);
  });
});
