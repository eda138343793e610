import { decodeProtectedHeader, type JWK } from "jose";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, createOrganization, createUser } from "../support/factories";
import { clientConfiguration, codeFlow, issuerOf, verifyWithJwks, type OrgRef } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

let porta: TestPorta;
let org: OrgRef;
let other: OrgRef;
let userId: string;
let config: oidc.Configuration;
let otherConfig: oidc.Configuration;

const CB = "https://rp.example.com/cb";

beforeAll(async () => {
  porta = await startTestPorta();
  const prisma = porta.services.db.prisma;
  org = await createOrganization(prisma);
  other = await createOrganization(prisma);
  userId = (await createUser(prisma, org.id)).id;
  const grantTypes = ["authorization_code", "refresh_token", "client_credentials"];
  const { client, secret } = await createClient(prisma, org.id, { grantTypes });
  config = await clientConfiguration(porta, org, client, { secret: secret!.value });
  const otherClient = await createClient(prisma, other.id, { grantTypes });
  otherConfig = await clientConfiguration(porta, other, otherClient.client, { secret: otherClient.secret!.value });
});
afterAll(async () => {
  await porta?.stop();
});

async function publishedKids(orgRef: OrgRef = org): Promise<string[]> {
  const body = (await (await fetch(`${issuerOf(porta, orgRef)}/.well-known/jwks`)).json()) as { keys: JWK[] };
  return body.keys.map((k) => k.kid!);
}

const kidOf = (jwt: string) => decodeProtectedHeader(jwt).kid!;
const signIn = () => codeFlow(porta, org, config, { accountId: userId, scope: "openid email offline_access", redirectUri: CB, params: { prompt: "consent" } });

describe("signing key rotation", () => {
  it("keeps tokens signed before a rotation valid, and signs new ones with the new key", async () => {
    const before = await signIn();
    const beforeCc = await oidc.clientCredentialsGrant(config);
    const oldKid = kidOf(before.access_token);
    expect(kidOf(before.id_token!)).toBe(oldKid);
    expect(await publishedKids()).toContain(oldKid);

    const rotated = await porta.services.keys.rotate();
    expect(rotated.kid).not.toBe(oldKid);

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

    // Every organization follows the rotation.
    expect(await publishedKids(other)).toEqual(kids);
    expect(kidOf((await oidc.clientCredentialsGrant(otherConfig)).access_token)).toBe(rotated.kid);
  });

  it("publishes a generated (staged) key without signing with it, and signs with it from the next rotation", async () => {
    const signing = kidOf((await oidc.clientCredentialsGrant(config)).access_token);
    const staged = await porta.services.keys.generate();
    expect(staged.status).toBe("staged");

    const kids = await publishedKids();
    expect(kids).toContain(staged.kid);
    expect(kids[0]).toBe(signing);

    const tokens = await signIn();
    expect(kidOf(tokens.access_token)).toBe(signing);
    expect(kidOf(tokens.id_token!)).toBe(signing);
    expect(kidOf((await oidc.clientCredentialsGrant(otherConfig)).access_token)).toBe(signing);

    const promoted = await porta.services.keys.rotate();
    expect(promoted.kid).toBe(staged.kid);
    expect(kidOf((await oidc.clientCredentialsGrant(config)).access_token)).toBe(staged.kid);
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
