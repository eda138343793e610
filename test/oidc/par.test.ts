import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, createOrganization, createUser } from "../support/factories";
import { basicAuth, clientConfiguration, CookieJar, followAuthorization, issuerOf, oidcError, pkcePair, postForm, type OrgRef } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

let porta: TestPorta;
let org: OrgRef;
let userId: string;
let confidential: { id: string; secret: string; config: oidc.Configuration };
let publicConfig: oidc.Configuration;

const CB = "https://rp.example.com/cb";

beforeAll(async () => {
  porta = await startTestPorta();
  const prisma = porta.services.db.prisma;
  org = await createOrganization(prisma);
  userId = (await createUser(prisma, org.id)).id;
  const { client, secret } = await createClient(prisma, org.id);
  confidential = { id: client.id, secret: secret!.value, config: await clientConfiguration(porta, org, client, { secret: secret!.value }) };
  const pub = await createClient(prisma, org.id, { confidential: false, applicationType: "native", redirectUris: ["http://127.0.0.1/callback"] });
  publicConfig = await clientConfiguration(porta, org, pub.client);
});
afterAll(async () => {
  await porta?.stop();
});

describe("pushed authorization requests", () => {
  it("completes the code flow from a pushed request (confidential client)", async () => {
    const { verifier, challenge } = await pkcePair();
    const state = oidc.randomState();
    const url = await oidc.buildAuthorizationUrlWithPAR(confidential.config, {
      redirect_uri: CB,
      scope: "openid email",
      code_challenge: challenge,
      code_challenge_method: "S256",
      state,
    });
    // Only the reference travels through the browser.
    expect(url.href.startsWith(`${issuerOf(porta, org)}/auth/authorize?`)).toBe(true);
    expect([...url.searchParams.keys()].sort()).toEqual(["client_id", "request_uri"]);
    expect(url.searchParams.get("request_uri")).toMatch(/^urn:ietf:params:oauth:request_uri:/);

    const callback = await followAuthorization(porta, org, url, { accountId: userId });
    const tokens = await oidc.authorizationCodeGrant(confidential.config, callback, { pkceCodeVerifier: verifier, expectedState: state });
    expect(tokens.claims()?.sub).toBe(userId);
    expect(tokens.scope?.split(" ").sort()).toEqual(["email", "openid"]);
  });

  it("completes the code flow from a pushed request (public client)", async () => {
    const { verifier, challenge } = await pkcePair();
    const url = await oidc.buildAuthorizationUrlWithPAR(publicConfig, {
      redirect_uri: "http://127.0.0.1:40123/callback",
      scope: "openid",
      code_challenge: challenge,
      code_challenge_method: "S256",
    });
    const callback = await followAuthorization(porta, org, url, { accountId: userId });
    const tokens = await oidc.authorizationCodeGrant(publicConfig, callback, { pkceCodeVerifier: verifier, expectedState: oidc.skipStateCheck });
    expect(tokens.claims()?.sub).toBe(userId);
  });

  it("uses a request_uri once", async () => {
    const { challenge } = await pkcePair();
    const url = await oidc.buildAuthorizationUrlWithPAR(confidential.config, { redirect_uri: CB, scope: "openid", code_challenge: challenge, code_challenge_method: "S256" });
    const callback = await followAuthorization(porta, org, url, { accountId: userId });
    expect(callback.searchParams.get("code")).toBeTruthy();
    const again = await new CookieJar().fetch(url);
    const location = again.headers.get("location");
    const error = location ? new URL(location).searchParams.get("error") : /Error code: <code>([a-z_]+)<\/code>/.exec(await again.text())?.[1];
    expect(error).toBe("invalid_request_uri");
  });

  it("validates the pushed request at the PAR endpoint", async () => {
    const { challenge } = await pkcePair();
    const params = { redirect_uri: CB, scope: "openid", code_challenge: challenge, code_challenge_method: "S256" };
    expect(await oidcError(oidc.buildAuthorizationUrlWithPAR(confidential.config, { ...params, code_challenge_method: "plain" }))).toMatchObject({ error: "invalid_request", status: 400 });
    expect(await oidcError(oidc.buildAuthorizationUrlWithPAR(confidential.config, { ...params, redirect_uri: "https://evil.example.com/cb" }))).toMatchObject({ status: 400 });
    expect(await oidcError(oidc.buildAuthorizationUrlWithPAR(publicConfig, { redirect_uri: "http://127.0.0.1/callback", scope: "openid" }))).toMatchObject({ error: "invalid_request" });

    const wrongSecret = await postForm(`${issuerOf(porta, org)}/auth/par`, { ...params, response_type: "code" }, { authorization: basicAuth(confidential.id, "wrong") });
    expect(wrongSecret.status).toBe(401);
    expect(wrongSecret.body.error).toBe("invalid_client");
  });

  it("does not let a request pushed at one organization be used at another", async () => {
    const prisma = porta.services.db.prisma;
    const other = await createOrganization(prisma);
    const { challenge } = await pkcePair();
    const url = await oidc.buildAuthorizationUrlWithPAR(confidential.config, { redirect_uri: CB, scope: "openid", code_challenge: challenge, code_challenge_method: "S256" });
    const elsewhere = new URL(`${issuerOf(porta, other)}/auth/authorize${url.search}`);
    const answer = await new CookieJar().fetch(elsewhere);
    // The client is unknown there, so the provider shows an error page and redirects nowhere.
    expect(answer.status).toBe(400);
    expect(answer.headers.get("location")).toBeNull();
  });
});
