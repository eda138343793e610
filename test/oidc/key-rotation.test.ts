import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWK } from "jose";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, createOrganization, createUser } from "../support/factories";
import { clientConfiguration, codeFlow, issuerOf, verifyWithJwks, type OrgRef } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

/**
 * Signing keys per organization: each organization signs with ES256 keys of its own, publishes
 * only those in its JWKS, and rotates them on its own (staged → active → retiring → retired).
 */
let porta: TestPorta;
let org: OrgRef;
let other: OrgRef;
let userId: string;
let otherUserId: string;
let config: oidc.Configuration;
let otherConfig: oidc.Configuration;

const CB = "https://rp.example.com/cb";

beforeAll(async () => {
  porta = await startTestPorta();
  const prisma = porta.services.db.prisma;
  org = await createOrganization(prisma);
  other = await createOrganization(prisma);
  userId = (await createUser(prisma, org.id)).id;
  otherUserId = (await createUser(prisma, other.id)).id;
  const grantTypes = ["authorization_code", "refresh_token", "client_credentials"];
  const { client, secret } = await createClient(prisma, org.id, { grantTypes });
  config = await clientConfiguration(porta, org, client, { secret: secret!.value });
  const otherClient = await createClient(prisma, other.id, { grantTypes });
  otherConfig = await clientConfiguration(porta, other, otherClient.client, { secret: otherClient.secret!.value });
});
afterAll(async () => {
  await porta?.stop();
});

async function jwksOf(orgRef: OrgRef = org): Promise<JWK[]> {
  const body = (await (await fetch(`${issuerOf(porta, orgRef)}/.well-known/jwks`)).json()) as { keys: JWK[] };
  return body.keys;
}
const publishedKids = async (orgRef: OrgRef = org) => (await jwksOf(orgRef)).map((k) => k.kid!);

const kidOf = (jwt: string) => decodeProtectedHeader(jwt).kid!;
const signIn = () => codeFlow(porta, org, config, { accountId: userId, scope: "openid email offline_access", redirectUri: CB, params: { prompt: "consent" } });
const signInOther = () => codeFlow(porta, other, otherConfig, { accountId: otherUserId, scope: "openid email", redirectUri: CB, params: { prompt: "consent" } });

describe("signing keys per organization", () => {
  it("gives two organizations keys of their own: no kid is shared, in the JWKS or in the tokens", async () => {
    const [mine, theirs] = [await publishedKids(org), await publishedKids(other)];
    expect(mine).toHaveLength(1);
    expect(theirs).toHaveLength(1);
    expect(mine.filter((kid) => theirs.includes(kid))).toEqual([]);

    const [a, b] = [await signIn(), await signInOther()];
    expect(kidOf(a.access_token)).toBe(mine[0]);
    expect(kidOf(a.id_token!)).toBe(mine[0]);
    expect(kidOf(b.access_token)).toBe(theirs[0]);
    expect(kidOf((await oidc.clientCredentialsGrant(otherConfig)).access_token)).toBe(theirs[0]);

    // The super-admin organization has a key of its own too.
    const admin = await publishedKids({ id: porta.bootstrap.organizationId, slug: porta.services.config.superAdminSlug });
    expect(admin).toHaveLength(1);
    expect([...mine, ...theirs]).not.toContain(admin[0]);

    const rows = await porta.services.db.prisma.signingKey.findMany({ where: { id: { in: [...mine, ...theirs] } } });
    expect(rows.map((r) => [r.id, r.organizationId]).sort()).toEqual([[mine[0], org.id], [theirs[0], other.id]].sort());
  });

  it("never verifies a token of one organization against another organization's JWKS", async () => {
    const tokens = await signIn();
    const cc = await oidc.clientCredentialsGrant(config);
    const theirs = createLocalJWKSet({ keys: await jwksOf(other) });
    for (const jwt of [tokens.access_token, tokens.id_token!, cc.access_token]) {
      await expect(jwtVerify(jwt, theirs, { algorithms: ["ES256"] })).rejects.toMatchObject({ code: "ERR_JWKS_NO_MATCHING_KEY" });
    }
    // Its own JWKS verifies it.
    await verifyWithJwks(porta, org, tokens.access_token, { audience: issuerOf(porta, org) });
    await verifyWithJwks(porta, org, tokens.id_token!);
    // Another organization's endpoints do not accept it either.
    expect((await oidc.tokenIntrospection(otherConfig, tokens.access_token)).active).toBe(false);
    const userinfo = await fetch(`${issuerOf(porta, other)}/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(userinfo.status).toBe(401);
  });

  it("rotates one organization: its old tokens stay valid, new ones carry the new kid, the other organization is untouched", async () => {
    const before = await signIn();
    const beforeCc = await oidc.clientCredentialsGrant(config);
    const oldKid = kidOf(before.access_token);
    expect(kidOf(before.id_token!)).toBe(oldKid);
    expect(await publishedKids()).toContain(oldKid);
    const otherJwksBefore = await jwksOf(other);
    const otherKid = kidOf((await oidc.clientCredentialsGrant(otherConfig)).access_token);
    const otherProvider = await porta.services.oidc.get(other.slug);

    const rotated = await porta.services.keys.rotate(org.id);
    expect(rotated.kid).not.toBe(oldKid);
    expect(rotated.organizationId).toBe(org.id);

    // Both keys are published, the new (signing) one first.
    const kids = await publishedKids();
    expect(kids[0]).toBe(rotated.kid);
    expect(kids).toContain(oldKid);

    // Old tokens still verify against the JWKS and still work.
    await verifyWithJwks(porta, org, before.access_token, { audience: issuerOf(porta, org) });
    await verifyWithJwks(porta, org, before.id_token!);
    await verifyWithJwks(porta, org, beforeCc.access_token);
    expect((await oidc.fetchUserInfo(config, before.access_token, userId)).sub).toBe(userId);
    expect((await oidc.tokenIntrospection(config, before.access_token)).active).toBe(true);
    expect((await oidc.tokenIntrospection(config, beforeCc.access_token)).active).toBe(true);

    // New tokens carry the new kid, for every grant.
    const after = await signIn();
    expect(kidOf(after.access_token)).toBe(rotated.kid);
    expect(kidOf(after.id_token!)).toBe(rotated.kid);
    expect(kidOf((await oidc.clientCredentialsGrant(config)).access_token)).toBe(rotated.kid);
    const refreshed = await oidc.refreshTokenGrant(config, before.refresh_token!);
    expect(kidOf(refreshed.access_token)).toBe(rotated.kid);
    expect(kidOf(refreshed.id_token!)).toBe(rotated.kid);
    await verifyWithJwks(porta, org, after.access_token, { audience: issuerOf(porta, org) });

    // The other organization keeps its keys, its signing kid and even its provider instance.
    expect(await jwksOf(other)).toEqual(otherJwksBefore);
    expect(kidOf((await oidc.clientCredentialsGrant(otherConfig)).access_token)).toBe(otherKid);
    expect(await porta.services.oidc.get(other.slug)).toBe(otherProvider);
    expect(await publishedKids(other)).not.toContain(rotated.kid);
  });

  it("publishes a generated (staged) key only in its organization's JWKS, and signs with it from the next rotation", async () => {
    const signing = kidOf((await oidc.clientCredentialsGrant(config)).access_token);
    const otherSigning = kidOf((await oidc.clientCredentialsGrant(otherConfig)).access_token);
    const staged = await porta.services.keys.generate(org.id);
    expect(staged.status).toBe("staged");
    expect(staged.organizationId).toBe(org.id);

    const kids = await publishedKids();
    expect(kids).toContain(staged.kid);
    expect(kids[0]).toBe(signing);
    expect(await publishedKids(other)).not.toContain(staged.kid);

    const tokens = await signIn();
    expect(kidOf(tokens.access_token)).toBe(signing);
    expect(kidOf(tokens.id_token!)).toBe(signing);
    expect(kidOf((await oidc.clientCredentialsGrant(otherConfig)).access_token)).toBe(otherSigning);

    const promoted = await porta.services.keys.rotate(org.id);
    expect(promoted.kid).toBe(staged.kid);
    expect(kidOf((await oidc.clientCredentialsGrant(config)).access_token)).toBe(staged.kid);
    expect(kidOf((await oidc.clientCredentialsGrant(otherConfig)).access_token)).toBe(otherSigning);
    // The token signed just before is still good.
    await verifyWithJwks(porta, org, tokens.access_token, { audience: issuerOf(porta, org) });
    expect((await oidc.fetchUserInfo(config, tokens.access_token, userId)).sub).toBe(userId);
  });

  it("publishes public keys only, every one ES256", async () => {
    const body = (await (await fetch(`${issuerOf(porta, org)}/.well-known/jwks`)).json()) as { keys: JWK[] };
    expect(body.keys.length).toBeGreaterThanOrEqual(3);
    for (const key of body.keys) {
      expect(key).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig" });
      expect(key.d).toBeUndefined();
    }
  });
});
