import { randomUUID } from "node:crypto";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from "jose";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, createOrganization, createUser } from "../support/factories";
import { clientConfiguration, codeFlow, issuerOf, oidcError, verifyWithJwks, type OrgRef } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

let porta: TestPorta;
let org: OrgRef;
let userId: string;
let confidential: oidc.Configuration;
let confidentialId: string;
let confidentialSecret: string;
let publicClient: oidc.Configuration;

const CB = "https://rp.example.com/cb";

beforeAll(async () => {
  porta = await startTestPorta();
  const prisma = porta.services.db.prisma;
  org = await createOrganization(prisma);
  userId = (await createUser(prisma, org.id)).id;
  const { client, secret } = await createClient(prisma, org.id, { grantTypes: ["authorization_code", "refresh_token", "client_credentials"] });
  confidential = await clientConfiguration(porta, org, client, { secret: secret!.value });
  confidentialId = client.id;
  confidentialSecret = secret!.value;
  const pub = await createClient(prisma, org.id, { confidential: false, applicationType: "native", redirectUris: ["http://127.0.0.1/callback"] });
  publicClient = await clientConfiguration(porta, org, pub.client);
});
afterAll(async () => {
  await porta?.stop();
});

async function dpopKey() {
  const keyPair = await oidc.randomDPoPKeyPair("ES256");
  const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey));
  return { keyPair, jkt };
}

/** A DPoP proof made by hand (RFC 9449 §4.2), for the cases openid-client would not produce. */
async function proof(alg: "ES256" | "RS256", htm: string, htu: string, accessToken?: string) {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  const ath = accessToken ? Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(accessToken))).toString("base64url") : undefined;
  return new SignJWT({ htm, htu, jti: randomUUID(), ...(ath ? { ath } : {}) })
    .setProtectedHeader({ alg, typ: "dpop+jwt", jwk: await exportJWK(publicKey) })
    .setIssuedAt()
    .sign(privateKey);
}

const userinfoUrl = () => `${issuerOf(porta, org)}/me`;

describe("DPoP", () => {
  it("binds the access token to the key (cnf.jkt) and serves userinfo with a proof", async () => {
    const { keyPair, jkt } = await dpopKey();
    const DPoP = oidc.getDPoPHandle(confidential, keyPair);
    const tokens = await codeFlow(porta, org, confidential, { accountId: userId, scope: "openid email offline_access", redirectUri: CB, params: { prompt: "consent" }, DPoP });
    expect(tokens.token_type.toLowerCase()).toBe("dpop");
    const { payload } = await verifyWithJwks(porta, org, tokens.access_token, { audience: issuerOf(porta, org) });
    expect(payload.cnf).toEqual({ jkt });

    const userinfo = await oidc.fetchUserInfo(confidential, tokens.access_token, userId, { DPoP });
    expect(userinfo.sub).toBe(userId);

    // Refreshing with the same key keeps the binding.
    const refreshed = await oidc.refreshTokenGrant(confidential, tokens.refresh_token!, undefined, { DPoP });
    expect((await verifyWithJwks(porta, org, refreshed.access_token)).payload.cnf).toEqual({ jkt });
  });

  it("refuses the bound token at userinfo without a proof, and with another key's proof", async () => {
    const { keyPair } = await dpopKey();
    const DPoP = oidc.getDPoPHandle(confidential, keyPair);
    const tokens = await codeFlow(porta, org, confidential, { accountId: userId, scope: "openid", redirectUri: CB, DPoP });

    const asBearer = await fetch(userinfoUrl(), { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(asBearer.status).toBe(401);
    expect(asBearer.headers.get("www-authenticate")).toMatch(/invalid_token/);

    const noProof = await fetch(userinfoUrl(), { headers: { authorization: `DPoP ${tokens.access_token}` } });
    expect(noProof.status).toBe(400);
    expect(noProof.headers.get("www-authenticate")).toMatch(/^DPoP .*error="invalid_request"/);

    const foreign = await fetch(userinfoUrl(), { headers: { authorization: `DPoP ${tokens.access_token}`, dpop: await proof("ES256", "GET", userinfoUrl(), tokens.access_token) } });
    expect(foreign.status).toBe(401);
    expect(foreign.headers.get("www-authenticate")).toMatch(/invalid_token/);

    // Through openid-client without the handle, too.
    expect(await oidcError(oidc.fetchUserInfo(confidential, tokens.access_token, userId))).toMatchObject({ status: 401 });
  });

  it("binds a public client's refresh token to the key", async () => {
    const { keyPair } = await dpopKey();
    const DPoP = oidc.getDPoPHandle(publicClient, keyPair);
    const tokens = await codeFlow(porta, org, publicClient, { accountId: userId, scope: "openid offline_access", redirectUri: "http://127.0.0.1:45678/callback", params: { prompt: "consent" }, DPoP });
    expect(tokens.refresh_token).toBeTruthy();
    const other = oidc.getDPoPHandle(publicClient, (await dpopKey()).keyPair);
    expect(await oidcError(oidc.refreshTokenGrant(publicClient, tokens.refresh_token!, undefined, { DPoP: other }))).toMatchObject({ error: "invalid_grant" });
    expect(await oidcError(oidc.refreshTokenGrant(publicClient, tokens.refresh_token!))).toMatchObject({ status: 400 });
    const refreshed = await oidc.refreshTokenGrant(publicClient, tokens.refresh_token!, undefined, { DPoP });
    expect(refreshed.token_type.toLowerCase()).toBe("dpop");
  });

  it("binds client_credentials tokens", async () => {
    const { keyPair, jkt } = await dpopKey();
    const tokens = await oidc.clientCredentialsGrant(confidential, undefined, { DPoP: oidc.getDPoPHandle(confidential, keyPair) });
    expect(tokens.token_type.toLowerCase()).toBe("dpop");
    expect((await verifyWithJwks(porta, org, tokens.access_token)).payload.cnf).toEqual({ jkt });
  });

  it("refuses a proof signed with RS256", async () => {
    const tokenEndpoint = `${issuerOf(porta, org)}/auth/token`;
    const send = async (alg: "ES256" | "RS256") =>
      fetch(tokenEndpoint, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", dpop: await proof(alg, "POST", tokenEndpoint) },
        body: new URLSearchParams({ grant_type: "client_credentials", client_id: confidentialId, client_secret: confidentialSecret }),
      });
    // The same hand-made proof with ES256 is accepted, so only the algorithm differs.
    expect((await send("ES256")).status).toBe(200);
    const answer = await send("RS256");
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { error: string }).error).toBe("invalid_dpop_proof");
  });
});
