import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, createOrganization, createUser } from "../support/factories";
import { basicAuth, clientConfiguration, codeFlow, issuerOf, oidcError, postForm, type OrgRef } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

let porta: TestPorta;
let org: OrgRef;
let other: OrgRef;
let userId: string;
let rp: { id: string; secret: string; config: oidc.Configuration };
let resourceServer: { id: string; secret: string; config: oidc.Configuration };
let publicClient: { id: string; config: oidc.Configuration };
let otherOrgClient: { id: string; secret: string; config: oidc.Configuration };

const CB = "https://rp.example.com/cb";

beforeAll(async () => {
  porta = await startTestPorta();
  const prisma = porta.services.db.prisma;
  org = await createOrganization(prisma);
  other = await createOrganization(prisma);
  userId = (await createUser(prisma, org.id)).id;
  const confidential = async (orgRef: OrgRef, grantTypes = ["authorization_code", "refresh_token", "client_credentials"]) => {
    const { client, secret } = await createClient(prisma, orgRef.id, { grantTypes });
    return { id: client.id, secret: secret!.value, config: await clientConfiguration(porta, orgRef, client, { secret: secret!.value }) };
  };
  rp = await confidential(org);
  resourceServer = await confidential(org, ["client_credentials"]);
  otherOrgClient = await confidential(other);
  const { client } = await createClient(prisma, org.id, { confidential: false, applicationType: "native", redirectUris: ["http://127.0.0.1/callback"] });
  publicClient = { id: client.id, config: await clientConfiguration(porta, org, client) };
});
afterAll(async () => {
  await porta?.stop();
});

const signIn = () => codeFlow(porta, org, rp.config, { accountId: userId, scope: "openid email offline_access", redirectUri: CB, params: { prompt: "consent" } });

async function userinfoStatus(accessToken: string) {
  const response = await fetch(`${issuerOf(porta, org)}/me`, { headers: { authorization: `Bearer ${accessToken}` } });
  await response.body?.cancel();
  return response.status;
}

describe("introspection", () => {
  it("reports a valid JWT access token as active, with its claims", async () => {
    const tokens = await signIn();
    const result = await oidc.tokenIntrospection(rp.config, tokens.access_token);
    expect(result).toMatchObject({
      active: true,
      sub: userId,
      client_id: rp.id,
      iss: issuerOf(porta, org),
      token_type: "Bearer",
    });
    expect(String(result.scope).split(" ").sort()).toEqual(["email", "offline_access", "openid"]);
    expect(result.exp).toBeGreaterThan(Math.floor(Date.now() / 1000));
  });

  it("reports a refresh token as active", async () => {
    const tokens = await signIn();
    const result = await oidc.tokenIntrospection(rp.config, tokens.refresh_token!, { token_type_hint: "refresh_token" });
    expect(result).toMatchObject({ active: true, sub: userId, client_id: rp.id, iss: issuerOf(porta, org) });
    expect(String(result.scope).split(" ")).toContain("offline_access");
    // Without a hint too.
    expect((await oidc.tokenIntrospection(rp.config, tokens.refresh_token!)).active).toBe(true);
  });

  it("lets another confidential client of the organization (a resource server) introspect", async () => {
    const tokens = await signIn();
    const result = await oidc.tokenIntrospection(resourceServer.config, tokens.access_token);
    expect(result).toMatchObject({ active: true, sub: userId, client_id: rp.id });
  });

  it("reports a client_credentials token as active", async () => {
    const cc = await oidc.clientCredentialsGrant(resourceServer.config);
    const result = await oidc.tokenIntrospection(rp.config, cc.access_token);
    expect(result).toMatchObject({ active: true, client_id: resourceServer.id });
  });

  it("reports garbage, and a JWT of nobody's, as inactive", async () => {
    expect(await oidc.tokenIntrospection(rp.config, "not-a-token")).toEqual({ active: false });
    const forged = [Buffer.from('{"alg":"ES256","typ":"at+jwt"}').toString("base64url"), Buffer.from("{}").toString("base64url"), "c2ln"].join(".");
    expect(await oidc.tokenIntrospection(rp.config, forged)).toEqual({ active: false });
  });

  it("tells a public client nothing", async () => {
    const tokens = await signIn();
    expect(await oidc.tokenIntrospection(publicClient.config, tokens.access_token)).toEqual({ active: false });
    expect(await oidc.tokenIntrospection(publicClient.config, tokens.refresh_token!)).toEqual({ active: false });
  });

  it("refuses an unauthenticated caller", async () => {
    const tokens = await signIn();
    const answer = await postForm(`${issuerOf(porta, org)}/token/introspection`, { token: tokens.access_token });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe("invalid_request");
    const wrong = await postForm(`${issuerOf(porta, org)}/token/introspection`, { token: tokens.access_token }, { authorization: basicAuth(rp.id, "wrong") });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe("invalid_client");
  });

  it("keeps organizations apart: A's tokens are inactive when B's client introspects them at B", async () => {
    const tokens = await signIn();
    const cc = await oidc.clientCredentialsGrant(rp.config);
    for (const token of [tokens.access_token, tokens.refresh_token!, cc.access_token]) {
      const answer = await postForm(`${issuerOf(porta, other)}/token/introspection`, { token }, { authorization: basicAuth(otherOrgClient.id, otherOrgClient.secret) });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ active: false });
    }
    // And A's client cannot authenticate at B at all.
    const crossed = await postForm(`${issuerOf(porta, other)}/token/introspection`, { token: tokens.access_token }, { authorization: basicAuth(rp.id, rp.secret) });
    expect(crossed.body.error).toBe("invalid_client");
    // At A they are still active.
    expect((await oidc.tokenIntrospection(rp.config, tokens.access_token)).active).toBe(true);
  });

  it("reports a revoked access token and a revoked refresh token as inactive", async () => {
    const tokens = await signIn();
    await oidc.tokenRevocation(rp.config, tokens.access_token);
    expect(await oidc.tokenIntrospection(rp.config, tokens.access_token)).toEqual({ active: false });
    const fresh = await signIn();
    await oidc.tokenRevocation(rp.config, fresh.refresh_token!);
    expect(await oidc.tokenIntrospection(rp.config, fresh.refresh_token!)).toEqual({ active: false });
  });

  it("reports a client_credentials token as inactive once revoked", async () => {
    const cc = await oidc.clientCredentialsGrant(resourceServer.config);
    await oidc.tokenRevocation(resourceServer.config, cc.access_token);
    expect(await oidc.tokenIntrospection(rp.config, cc.access_token)).toEqual({ active: false });
  });
});

describe("revocation", () => {
  it("revoking a refresh token ends the grant: refresh fails, and so do its access tokens", async () => {
    const tokens = await signIn();
    await oidc.tokenRevocation(rp.config, tokens.refresh_token!);
    expect(await oidcError(oidc.refreshTokenGrant(rp.config, tokens.refresh_token!))).toMatchObject({ error: "invalid_grant" });
    expect(await userinfoStatus(tokens.access_token)).toBe(401);
  });

  it("revoking an access token stops userinfo for it, and ends the tokens of its grant but not the consent", async () => {
    const tokens = await signIn();
    expect(await userinfoStatus(tokens.access_token)).toBe(200);
    await oidc.tokenRevocation(rp.config, tokens.access_token, { token_type_hint: "access_token" });
    expect(await userinfoStatus(tokens.access_token)).toBe(401);
    expect(await oidcError(oidc.fetchUserInfo(rp.config, tokens.access_token, userId))).toMatchObject({ error: "invalid_token", status: 401 });
    // oidc-provider revokes every token of the grant with it, keeping the grant (the consent) itself.
    expect(await oidcError(oidc.refreshTokenGrant(rp.config, tokens.refresh_token!))).toMatchObject({ error: "invalid_grant" });
  });

  it("answers 200 for an unknown token, and for a token of another organization, without effect", async () => {
    const tokens = await signIn();
    const unknown = await postForm(`${issuerOf(porta, org)}/token/revocation`, { token: "not-a-token" }, { authorization: basicAuth(rp.id, rp.secret) });
    expect(unknown.status).toBe(200);
    for (const token of [tokens.access_token, tokens.refresh_token!]) {
      const answer = await postForm(`${issuerOf(porta, other)}/token/revocation`, { token }, { authorization: basicAuth(otherOrgClient.id, otherOrgClient.secret) });
      expect(answer.status).toBe(200);
    }
    expect(await userinfoStatus(tokens.access_token)).toBe(200);
    expect((await oidc.tokenIntrospection(rp.config, tokens.refresh_token!)).active).toBe(true);
  });

  it("does not let another client of the organization revoke a client's token", async () => {
    const tokens = await signIn();
    const answer = await postForm(`${issuerOf(porta, org)}/token/revocation`, { token: tokens.refresh_token! }, { authorization: basicAuth(resourceServer.id, resourceServer.secret) });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: "invalid_request", error_description: "client is not authorized to revoke the presented token" });
    expect((await oidc.tokenIntrospection(rp.config, tokens.refresh_token!)).active).toBe(true);
    expect(await userinfoStatus(tokens.access_token)).toBe(200);
  });

  it("lets a public client revoke its own tokens", async () => {
    const tokens = await codeFlow(porta, org, publicClient.config, { accountId: userId, scope: "openid offline_access", redirectUri: "http://127.0.0.1:50000/callback", params: { prompt: "consent" } });
    expect(tokens.refresh_token).toBeTruthy();
    await oidc.tokenRevocation(publicClient.config, tokens.refresh_token!);
    expect(await oidcError(oidc.refreshTokenGrant(publicClient.config, tokens.refresh_token!))).toMatchObject({ error: "invalid_grant" });
  });
});
