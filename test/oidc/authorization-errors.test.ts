import { generateKeyPair, SignJWT, UnsecuredJWT } from "jose";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, createOrganization, createUser } from "../support/factories";
import { authorize, authorizationUrl, basicAuth, CookieJar, issuerOf, pkcePair, postForm, type OrgRef } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

let porta: TestPorta;
let org: OrgRef;
let userId: string;
let web: { id: string; secret: string };
let native: { id: string };
let loopbackWeb: { id: string; secret: string };

const WEB_CB = "https://rp.example.com/cb";

beforeAll(async () => {
  porta = await startTestPorta();
  const prisma = porta.services.db.prisma;
  org = await createOrganization(prisma);
  userId = (await createUser(prisma, org.id)).id;
  const w = await createClient(prisma, org.id, { redirectUris: [WEB_CB] });
  web = { id: w.client.id, secret: w.secret!.value };
  native = (await createClient(prisma, org.id, { confidential: false, applicationType: "native", redirectUris: ["http://127.0.0.1/callback"] })).client;
  const lw = await createClient(prisma, org.id, { applicationType: "web", redirectUris: ["http://127.0.0.1/callback"] });
  loopbackWeb = { id: lw.client.id, secret: lw.secret!.value };
});
afterAll(async () => {
  await porta?.stop();
});

const tokenEndpoint = () => `${issuerOf(porta, org)}/auth/token`;

/** What the authorization endpoint answers to a request, without following anything. */
async function authorizationAnswer(clientId: string, params: Record<string, string>) {
  const response = await new CookieJar().fetch(authorizationUrl(porta, org, { id: clientId }, params));
  const location = response.headers.get("location");
  return { status: response.status, location: location ? new URL(location, porta.baseUrl) : undefined, body: await response.text() };
}

/** An error returned to the client's redirect URI. */
function redirectedError(answer: { status: number; location?: URL | undefined }, redirectUri: string) {
  expect(answer.status).toBe(303);
  expect(answer.location!.origin + answer.location!.pathname).toBe(redirectUri);
  expect(answer.location!.searchParams.get("code")).toBeNull();
  expect(answer.location!.searchParams.get("iss")).toBe(issuerOf(porta, org));
  return { error: answer.location!.searchParams.get("error"), description: answer.location!.searchParams.get("error_description") };
}

/** An error the provider shows as a page, because the redirect URI cannot be trusted. */
function renderedError(answer: { status: number; location?: URL | undefined; body: string }) {
  expect(answer.status).toBe(400);
  expect(answer.location).toBeUndefined();
  return /Error code: <code>([a-z_]+)<\/code>/.exec(answer.body)?.[1];
}

async function codeFor(clientId: string, redirectUri: string, challenge: string) {
  const callback = await authorize(porta, org, { id: clientId }, { redirect_uri: redirectUri, scope: "openid", code_challenge: challenge, code_challenge_method: "S256" }, { accountId: userId });
  const code = callback.searchParams.get("code");
  if (!code) throw new Error(`no code in ${callback.href}`);
  return code;
}

describe("PKCE", () => {
  it("refuses a token request without the code verifier", async () => {
    const { challenge } = await pkcePair();
    const code = await codeFor(web.id, WEB_CB, challenge);
    const answer = await postForm(tokenEndpoint(), { grant_type: "authorization_code", code, redirect_uri: WEB_CB }, { authorization: basicAuth(web.id, web.secret) });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe("invalid_grant");
  });

  it("refuses a wrong code verifier", async () => {
    const { challenge } = await pkcePair();
    const code = await codeFor(native.id, "http://127.0.0.1/callback", challenge);
    const wrong = await postForm(tokenEndpoint(), {
      grant_type: "authorization_code",
      code,
      redirect_uri: "http://127.0.0.1/callback",
      client_id: native.id,
      code_verifier: oidc.randomPKCECodeVerifier(),
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe("invalid_grant");
    expect(wrong.body.access_token).toBeUndefined();
  });

  it("refuses code_challenge_method=plain at the authorization endpoint", async () => {
    const verifier = oidc.randomPKCECodeVerifier();
    for (const client of [native.id, web.id]) {
      const redirectUri = client === native.id ? "http://127.0.0.1/callback" : WEB_CB;
      const answer = await authorizationAnswer(client, { redirect_uri: redirectUri, scope: "openid", code_challenge: verifier, code_challenge_method: "plain" });
      expect(redirectedError(answer, redirectUri).error).toBe("invalid_request");
    }
  });

  it("refuses a public client's request without PKCE", async () => {
    const answer = await authorizationAnswer(native.id, { redirect_uri: "http://127.0.0.1/callback", scope: "openid" });
    const { error, description } = redirectedError(answer, "http://127.0.0.1/callback");
    expect(error).toBe("invalid_request");
    expect(description).toMatch(/PKCE/);
  });
});

describe("response types other than code", () => {
  // express-openid-connect's default is response_type=id_token with response_mode=form_post;
  // the library then reports only "invalid response encountered", so the description must say it all.
  const ONLY_CODE = "only response_type=code is supported (the authorization code flow); ask for response_type=code";

  it("names the one supported response type, at the redirect URI, whatever the response mode", async () => {
    const { challenge } = await pkcePair();
    const base = { redirect_uri: WEB_CB, scope: "openid", nonce: "n", state: "s", code_challenge: challenge, code_challenge_method: "S256" };
    for (const responseType of ["id_token", "code id_token", "id_token token", "token"]) {
      const answer = await authorizationAnswer(web.id, { ...base, response_type: responseType });
      expect(answer.status, responseType).toBe(303);
      expect(answer.location!.origin + answer.location!.pathname).toBe(WEB_CB);
      // The implicit and hybrid types answer in the fragment.
      const fragment = new URLSearchParams(answer.location!.hash.slice(1));
      expect(fragment.get("error"), responseType).toBe("unsupported_response_type");
      expect(fragment.get("error_description"), responseType).toBe(ONLY_CODE);
    }
    const posted = await authorizationAnswer(web.id, { ...base, response_type: "id_token", response_mode: "form_post" });
    // The form the browser posts to the client's redirect URI (the status is the error's).
    expect(posted.body).toContain(`<form method="post" action="${WEB_CB}">`);
    expect(posted.body).toContain('name="error" value="unsupported_response_type"');
    expect(posted.body.replaceAll("&#x3D;", "=").replaceAll("&#61;", "=")).toContain(`name="error_description" value="${ONLY_CODE}"`);
  });
});

describe("authorization codes", () => {
  it("refuses a reused code and revokes what the code already gave", async () => {
    const { verifier, challenge } = await pkcePair();
    const code = await codeFor(web.id, WEB_CB, challenge);
    const form = { grant_type: "authorization_code", code, redirect_uri: WEB_CB, code_verifier: verifier };
    const auth = { authorization: basicAuth(web.id, web.secret) };
    const first = await postForm(tokenEndpoint(), form, auth);
    expect(first.status).toBe(200);
    const accessToken = String(first.body.access_token);
    const userinfo = () => fetch(`${issuerOf(porta, org)}/me`, { headers: { authorization: `Bearer ${accessToken}` } });
    expect((await userinfo()).status).toBe(200);

    const second = await postForm(tokenEndpoint(), form, auth);
    expect(second.status).toBe(400);
    expect(second.body.error).toBe("invalid_grant");
    // The replay revoked the grant: the first access token stops working.
    const after = await userinfo();
    expect(after.status).toBe(401);
    expect(after.headers.get("www-authenticate")).toMatch(/invalid_token/);
  });

  it("refuses a code redeemed by another client, or with another redirect_uri", async () => {
    const prisma = porta.services.db.prisma;
    const other = await createClient(prisma, org.id, { redirectUris: [WEB_CB, "https://rp.example.com/other"] });
    const { verifier, challenge } = await pkcePair();
    const code = await codeFor(web.id, WEB_CB, challenge);
    const stolen = await postForm(
      tokenEndpoint(),
      { grant_type: "authorization_code", code, redirect_uri: WEB_CB, code_verifier: verifier },
      { authorization: basicAuth(other.client.id, other.secret!.value) },
    );
    expect(stolen.body.error).toBe("invalid_grant");

    const { verifier: v2, challenge: c2 } = await pkcePair();
    const code2 = await codeFor(other.client.id, WEB_CB, c2);
    const moved = await postForm(
      tokenEndpoint(),
      { grant_type: "authorization_code", code: code2, redirect_uri: "https://rp.example.com/other", code_verifier: v2 },
      { authorization: basicAuth(other.client.id, other.secret!.value) },
    );
    expect(moved.body.error).toBe("invalid_grant");
  });

  it("refuses a confidential client's code exchange with a wrong secret", async () => {
    const { verifier, challenge } = await pkcePair();
    const code = await codeFor(web.id, WEB_CB, challenge);
    const answer = await postForm(tokenEndpoint(), { grant_type: "authorization_code", code, redirect_uri: WEB_CB, code_verifier: verifier }, { authorization: basicAuth(web.id, "not-the-secret") });
    expect(answer.status).toBe(401);
    expect(answer.body.error).toBe("invalid_client");
  });
});

describe("request objects (JAR)", () => {
  const claimsFor = (clientId: string, challenge: string) => ({
    client_id: clientId,
    response_type: "code",
    redirect_uri: WEB_CB,
    scope: "openid",
    code_challenge: challenge,
    code_challenge_method: "S256",
  });

  it("refuses a request object signed with RS256", async () => {
    const { privateKey } = await generateKeyPair("RS256");
    const { challenge } = await pkcePair();
    const request = await new SignJWT(claimsFor(web.id, challenge))
      .setProtectedHeader({ alg: "RS256", typ: "oauth-authz-req+jwt" })
      .setIssuer(web.id)
      .setAudience(issuerOf(porta, org))
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(privateKey);
    const answer = await authorizationAnswer(web.id, { request, scope: "openid", redirect_uri: WEB_CB });
    const { error } = redirectedError(answer, WEB_CB);
    expect(error).toBe("invalid_request_object");
  });

  it("refuses an unsigned request object", async () => {
    const { challenge } = await pkcePair();
    const request = new UnsecuredJWT(claimsFor(web.id, challenge)).setIssuer(web.id).setAudience(issuerOf(porta, org)).setIssuedAt().setExpirationTime("5m").encode();
    const answer = await authorizationAnswer(web.id, { request, scope: "openid", redirect_uri: WEB_CB });
    expect(redirectedError(answer, WEB_CB).error).toBe("invalid_request_object");
  });

  it("offers no other algorithm to ask for: every signing alg in discovery is ES256 and no RS256 ID token can be obtained", async () => {
    const discovery = (await (await fetch(`${issuerOf(porta, org)}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(discovery.id_token_signing_alg_values_supported).toEqual(["ES256"]);
    expect(discovery.request_object_signing_alg_values_supported).toEqual(["ES256"]);
    expect(JSON.stringify(discovery)).not.toContain("RS256");
    // Client metadata comes from Porta's data model only (no dynamic registration), so no
    // client can ask for RS256; the ID token of every client is ES256.
    expect(discovery.registration_endpoint).toBeUndefined();
  });
});

describe("redirect URIs", () => {
  it("renders an error page (no redirect) for an unregistered redirect_uri", async () => {
    const { challenge } = await pkcePair();
    const answer = await authorizationAnswer(web.id, { redirect_uri: "https://evil.example.com/cb", scope: "openid", code_challenge: challenge, code_challenge_method: "S256" });
    expect(renderedError(answer)).toBe("invalid_redirect_uri");
  });

  it("renders an error page for an unknown client", async () => {
    const { challenge } = await pkcePair();
    const answer = await authorizationAnswer("no-such-client", { redirect_uri: WEB_CB, scope: "openid", code_challenge: challenge, code_challenge_method: "S256" });
    expect(renderedError(answer)).toBe("invalid_client");
  });

  it("accepts any loopback port for a native client, and the code is redeemed with that port", async () => {
    const { verifier, challenge } = await pkcePair();
    const redirectUri = "http://127.0.0.1:61234/callback";
    const callback = await authorize(porta, org, native, { redirect_uri: redirectUri, scope: "openid", code_challenge: challenge, code_challenge_method: "S256" }, { accountId: userId });
    expect(callback.origin + callback.pathname).toBe(redirectUri);
    const answer = await postForm(tokenEndpoint(), { grant_type: "authorization_code", code: callback.searchParams.get("code")!, redirect_uri: redirectUri, client_id: native.id, code_verifier: verifier });
    expect(answer.status).toBe(200);
    expect(answer.body.id_token).toBeTruthy();
  });

  it("does not vary the loopback port for a web client", async () => {
    const { challenge } = await pkcePair();
    const params = { scope: "openid", code_challenge: challenge, code_challenge_method: "S256" };
    const varied = await authorizationAnswer(loopbackWeb.id, { ...params, redirect_uri: "http://127.0.0.1:61234/callback" });
    expect(renderedError(varied)).toBe("invalid_redirect_uri");
    // The exact registered URI still works.
    const exact = await authorize(porta, org, loopbackWeb, { ...params, redirect_uri: "http://127.0.0.1/callback" }, { accountId: userId });
    expect(exact.origin + exact.pathname).toBe("http://127.0.0.1/callback");
    expect(exact.searchParams.get("code")).toBeTruthy();
  });

  it("does not vary a native client's path or host", async () => {
    const { challenge } = await pkcePair();
    const params = { scope: "openid", code_challenge: challenge, code_challenge_method: "S256" };
    expect(renderedError(await authorizationAnswer(native.id, { ...params, redirect_uri: "http://127.0.0.1:61234/other" }))).toBe("invalid_redirect_uri");
    expect(renderedError(await authorizationAnswer(native.id, { ...params, redirect_uri: "http://evil.example.com:61234/callback" }))).toBe("invalid_redirect_uri");
  });
});
