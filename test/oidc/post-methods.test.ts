import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../support/factories";
import { basicAuth, codeFlow, CookieJar, followAuthorization, issuerOf, pkcePair, postForm, type OrgRef, relyingPartySetup } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

/**
 * Decision 043: the authorization endpoint (OpenID Connect Core §3.1.2.1) and the end-session
 * endpoint (RP-Initiated Logout §2) MUST accept POST. Porta parks the posted parameters and
 * sends the browser on with 303 to a GET that carries only a single-use handle (decision 043),
 * so the session cookie keeps SameSite=Lax and nothing posted appears in a URL.
 */
const CB = "https://rp.example.com/cb";
const LOGGED_OUT = "https://rp.example.com/logged-out";

let porta: TestPorta;
let org: OrgRef;
let userId: string;
let clientId: string;
let config: oidc.Configuration;

beforeAll(async () => {
  porta = await startTestPorta();
  ({ org, userId, clientId, config } = await relyingPartySetup(porta, { postLogoutRedirectUris: [LOGGED_OUT] }));
});
afterAll(async () => {
  await porta?.stop();
});

const postBrowserForm = (jar: CookieJar, url: string, form: Record<string, string>) =>
  jar.fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", accept: "text/html" }, body: new URLSearchParams(form) });

describe("POST at the authorization endpoint", () => {
  it("completes the code flow: 303 to a GET carrying only a handle, then the usual sign-in and a code", async () => {
    const jar = new CookieJar();
    const { verifier, challenge } = await pkcePair();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const form = { client_id: clientId, response_type: "code", redirect_uri: CB, scope: "openid email", state, nonce, code_challenge: challenge, code_challenge_method: "S256", login_hint: "ada@example.com" };
    const posted = await postBrowserForm(jar, `${issuerOf(porta, org)}/auth/authorize`, form);
    expect(posted.status).toBe(303);
    expect(posted.headers.get("cache-control")).toBe("no-store");
    const location = new URL(posted.headers.get("location")!, porta.baseUrl);
    expect(location.pathname).toBe(`/${org.slug}/auth/authorize`);
    expect([...location.searchParams.keys()]).toEqual(["porta_post"]);
    // Nothing the relying party posted is in the URL.
    for (const value of Object.values(form)) expect(location.href).not.toContain(encodeURIComponent(value));

    const callback = await followAuthorization(porta, org, location, { accountId: userId, jar });
    expect(callback.origin + callback.pathname).toBe(CB);
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce });
    expect(tokens.claims()?.sub).toBe(userId);

    // The handle works once: replayed, it is a request without parameters, answered by the branded error page.
    const replayed = await jar.fetch(location, { headers: { accept: "text/html" } });
    expect(replayed.status).toBe(400);
    const html = await replayed.text();
    expect(html).toContain("We could not complete the sign-in");
    expect(html).toContain("<code>invalid_request</code>");
  });

  it("keeps the person's session: an already signed-in browser gets its code without signing in again", async () => {
    const jar = new CookieJar();
    await codeFlow(porta, org, config, { accountId: userId, scope: "openid", redirectUri: CB, jar });
    const { challenge } = await pkcePair();
    const posted = await postBrowserForm(jar, `${issuerOf(porta, org)}/auth/authorize`, { client_id: clientId, response_type: "code", redirect_uri: CB, scope: "openid", code_challenge: challenge, code_challenge_method: "S256" });
    const prompts: string[] = [];
    const callback = await followAuthorization(porta, org, new URL(posted.headers.get("location")!, porta.baseUrl), { accountId: userId, jar, prompts });
    expect(prompts).toEqual([]);
    expect(callback.searchParams.get("code")).toBeTruthy();
  });

  it("refuses what the GET would refuse: an unregistered redirect URI, repeated parameters, unstorable text", async () => {
    const jar = new CookieJar();
    const unregistered = await postBrowserForm(jar, `${issuerOf(porta, org)}/auth/authorize`, { client_id: clientId, response_type: "code", redirect_uri: "https://evil.example.com/cb", scope: "openid" });
    const page = await jar.fetch(new URL(unregistered.headers.get("location")!, porta.baseUrl), { headers: { accept: "text/html" } });
    expect(page.status).toBe(400);
    expect(page.headers.get("location")).toBeNull();
    expect(await page.text()).toContain("redirect_uri did not match any of the client&#39;s registered redirect_uris");

    const twice = await jar.fetch(`${issuerOf(porta, org)}/auth/authorize`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `client_id=${clientId}&client_id=${clientId}&response_type=code&redirect_uri=${encodeURIComponent(CB)}&scope=openid`,
    });
    const twicePage = await jar.fetch(new URL(twice.headers.get("location")!, porta.baseUrl), { headers: { accept: "text/html" } });
    expect(twicePage.status).toBe(400);
    expect(await twicePage.text()).toContain("invalid_request");

    const nul = await postBrowserForm(jar, `${issuerOf(porta, org)}/auth/authorize`, { client_id: clientId, state: "a\u0000b" });
    expect(nul.status).toBe(400);
    expect(nul.headers.get("location")).toBeNull();
  });

  it("treats a made-up handle, or a handle beside other parameters, as no handle", async () => {
    const jar = new CookieJar();
    const madeUp = await jar.fetch(`${issuerOf(porta, org)}/auth/authorize?porta_post=${"A".repeat(32)}`, { headers: { accept: "text/html" } });
    expect(madeUp.status).toBe(400);
    expect(await madeUp.text()).toContain("We could not complete the sign-in");
    // Beside real parameters the handle is just an unknown parameter: the GET goes on as sent.
    const { challenge } = await pkcePair();
    const url = new URL(`${issuerOf(porta, org)}/auth/authorize`);
    for (const [k, v] of Object.entries({ client_id: clientId, response_type: "code", redirect_uri: CB, scope: "openid", code_challenge: challenge, code_challenge_method: "S256", porta_post: "B".repeat(32) })) url.searchParams.set(k, v);
    const callback = await followAuthorization(porta, org, url, { accountId: userId, jar });
    expect(callback.searchParams.get("code")).toBeTruthy();
  });
});

describe("POST at the end-session endpoint", () => {
  it("confirms and signs out, returning to the post-logout URI with its state; the ID token never appears in a URL", async () => {
    const jar = new CookieJar();
    const tokens = await codeFlow(porta, org, config, { accountId: userId, scope: "openid", redirectUri: CB, jar });
    const posted = await postBrowserForm(jar, `${issuerOf(porta, org)}/session/end`, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: LOGGED_OUT, state: "bye-post" });
    expect(posted.status).toBe(303);
    const location = new URL(posted.headers.get("location")!, porta.baseUrl);
    expect(location.pathname).toBe(`/${org.slug}/session/end`);
    expect(location.href).not.toContain(tokens.id_token!.split(".")[1]!);

    const page = await jar.fetch(location);
    expect(page.status).toBe(200);
    const html = await page.text();
    const form = /<form id="op\.logoutForm" method="post" action="([^"]+)">(.*?)<\/form>/s.exec(html)!;
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(form[2]!)![1]!;
    const confirmed = await postBrowserForm(jar, form[1]!.replace(/&amp;/g, "&"), { xsrf, logout: "yes" });
    expect(confirmed.status).toBe(303);
    const back = new URL(confirmed.headers.get("location")!);
    expect(back.origin + back.pathname).toBe(LOGGED_OUT);
    expect(back.searchParams.get("state")).toBe("bye-post");
    const userinfo = await fetch(`${issuerOf(porta, org)}/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(userinfo.status).toBe(401);
  });
});

describe("token endpoint error codes (RFC 6749 §5.2)", () => {
  it("answers unauthorized_client to a public client asking for client_credentials", async () => {
    const { client } = await createClient(porta.services.db.prisma, org.id, { confidential: false, grantTypes: ["authorization_code"], applicationType: "native", redirectUris: ["http://127.0.0.1/cb"] });
    const res = await postForm(`${issuerOf(porta, org)}/auth/token`, { grant_type: "client_credentials", client_id: client.id, scope: "openid" });
    expect(res.status).toBe(400);
    expect(res.body.error, JSON.stringify(res.body)).toBe("unauthorized_client");
  });

  it("answers each of the section's codes where the section says", async () => {
    const prisma = porta.services.db.prisma;
    const full = await createClient(prisma, org.id, { grantTypes: ["authorization_code", "refresh_token", "client_credentials"], scope: "openid email", redirectUris: [CB] });
    const codeOnly = await createClient(prisma, org.id, { grantTypes: ["authorization_code"], scope: "openid email", redirectUris: [CB] });
    const token = `${issuerOf(porta, org)}/auth/token`;
    const as = (client: typeof full, secret = client.secret!.value) => ({ authorization: basicAuth(client.client.id, secret) });
    const cases: Array<[string, Record<string, string>, Record<string, string>, number, string]> = [
      ["no grant_type", {}, as(full), 400, "invalid_request"],
      ["a grant type Porta does not offer", { grant_type: "password", username: "a", password: "b" }, as(full), 400, "unsupported_grant_type"],
      ["a wrong secret", { grant_type: "client_credentials" }, as(full, "not the secret"), 401, "invalid_client"],
      ["an unknown code", { grant_type: "authorization_code", code: "no-such-code", redirect_uri: CB, code_verifier: "v".repeat(43) }, as(full), 400, "invalid_grant"],
      ["an unknown refresh token", { grant_type: "refresh_token", refresh_token: "no-such-token" }, as(full), 400, "invalid_grant"],
      ["a grant type the client is not registered for", { grant_type: "client_credentials" }, as(codeOnly), 400, "unauthorized_client"],
      ["a scope the client does not have", { grant_type: "client_credentials", scope: "email profile" }, as(full), 400, "invalid_scope"],
      ["a scope the organization does not have", { grant_type: "client_credentials", scope: "email payments:write" }, as(full), 400, "invalid_scope"],
    ];
    for (const [what, form, headers, status, error] of cases) {
      const res = await postForm(token, form, headers);
      expect({ what, status: res.status, error: res.body.error }, JSON.stringify(res.body)).toEqual({ what, status, error });
      // §5.2: the client authenticated with the Authorization header, so a 401 names the scheme.
      if (status === 401) expect(res.headers.get("www-authenticate"), what).toMatch(/^Basic /);
    }
  });
});
