import { decodeProtectedHeader } from "jose";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { invalidateUser } from "~/.server/directory/users";
import { recordLogin } from "~/.server/oidc/provider/interaction-results";
import { createClient, createOrganization, createUser } from "../support/factories";
import { authorizationUrl, clientConfiguration, codeFlow, CookieJar, followAuthorization, issuerOf, pkcePair, verifyWithJwks } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

let porta: TestPorta;
beforeAll(async () => {
  porta = await startTestPorta();
});
afterAll(async () => {
  await porta?.stop();
});

async function setUp(kind: "public" | "confidential") {
  const prisma = porta.services.db.prisma;
  const org = await createOrganization(prisma);
  const { client, secret } = await createClient(
    prisma,
    org.id,
    kind === "public"
      ? { confidential: false, applicationType: "native", redirectUris: ["http://127.0.0.1/callback", "com.example.app:/callback"] }
      : { confidential: true, redirectUris: ["https://rp.example.com/cb"] },
  );
  const user = await createUser(prisma, org.id, { givenName: "Grace", familyName: "Hopper" });
  const config = await clientConfiguration(porta, org, client, { secret: secret?.value });
  return { org, client, user, config };
}

describe("authorization code with PKCE", () => {
  for (const kind of ["public", "confidential"] as const) {
    it(`issues verifiable ES256 tokens to a ${kind} client`, async () => {
      const { org, client, user, config } = await setUp(kind);
      const issuer = issuerOf(porta, org);
      const redirectUri = kind === "public" ? "http://127.0.0.1:49152/callback" : "https://rp.example.com/cb";
      const nonce = oidc.randomNonce();
      const tokens = await codeFlow(porta, org, config, {
        accountId: user.id,
        scope: "openid profile email",
        redirectUri,
        params: { nonce },
      });

      expect(tokens.token_type.toLowerCase()).toBe("bearer");
      expect(tokens.expires_in).toBeGreaterThan(0);
      expect(tokens.scope?.split(" ").sort()).toEqual(["email", "openid", "profile"]);

      // ID token: ES256, verified against the published JWKS.
      expect(decodeProtectedHeader(tokens.id_token!).alg).toBe("ES256");
      const idToken = await verifyWithJwks(porta, org, tokens.id_token!, { audience: client.id });
      expect(idToken.protectedHeader.alg).toBe("ES256");
      expect(idToken.payload).toMatchObject({ iss: issuer, aud: client.id, sub: user.id, nonce, given_name: "Grace", email: user.email });
      expect(idToken.payload.exp).toBeGreaterThan(Math.floor(Date.now() / 1000));
      expect(tokens.claims()?.sub).toBe(user.id);

      // Access token: an ES256 JWT for the organization's own resource.
      const accessToken = await verifyWithJwks(porta, org, tokens.access_token, { audience: issuer, typ: "at+jwt" });
      expect(accessToken.protectedHeader.alg).toBe("ES256");
      expect(accessToken.protectedHeader.kid).toBe(idToken.protectedHeader.kid);
      expect(accessToken.payload).toMatchObject({ iss: issuer, aud: issuer, sub: user.id, client_id: client.id });
      expect(String(accessToken.payload.scope).split(" ").sort()).toEqual(["email", "openid", "profile"]);
      expect(accessToken.payload.exp).toBeGreaterThan(Math.floor(Date.now() / 1000));
      expect(typeof accessToken.payload.jti).toBe("string");

      // The access token works at userinfo.
      const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, user.id);
      expect(userinfo).toMatchObject({ sub: user.id, email: user.email, name: "Grace Hopper" });
    });
  }

  it("accepts a custom-scheme redirect of a native client", async () => {
    const { org, user, config } = await setUp("public");
    const tokens = await codeFlow(porta, org, config, { accountId: user.id, scope: "openid", redirectUri: "com.example.app:/callback" });
    expect(tokens.claims()?.sub).toBe(user.id);
  });

  it("returns state and the issuer (RFC 9207) in the callback", async () => {
    const { org, client, user } = await setUp("confidential");
    const { challenge } = await pkcePair();
    const url = authorizationUrl(porta, org, client, {
      redirect_uri: "https://rp.example.com/cb",
      scope: "openid",
      state: "s-123",
      code_challenge: challenge,
      code_challenge_method: "S256",
    });
    const callback = await followAuthorization(porta, org, url, { accountId: user.id });
    expect(callback.origin + callback.pathname).toBe("https://rp.example.com/cb");
    expect(callback.searchParams.get("state")).toBe("s-123");
    expect(callback.searchParams.get("iss")).toBe(issuerOf(porta, org));
    expect(callback.searchParams.get("code")).toBeTruthy();
  });

  it("keeps the session: a second request is answered at once, without login or consent", async () => {
    const { org, user, config } = await setUp("confidential");
    const jar = new CookieJar();
    const first = await codeFlow(porta, org, config, { accountId: user.id, scope: "openid", redirectUri: "https://rp.example.com/cb", jar });
    expect(first.claims()?.sub).toBe(user.id);
    const { verifier, challenge } = await pkcePair();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: "https://rp.example.com/cb", scope: "openid", code_challenge: challenge, code_challenge_method: "S256" });
    const response = await jar.fetch(url);
    expect(response.status).toBe(303);
    const callback = new URL(response.headers.get("location")!);
    expect(callback.origin + callback.pathname).toBe("https://rp.example.com/cb");
    const second = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: oidc.skipStateCheck });
    expect(second.claims()?.sub).toBe(user.id);
  });

  it("keeps the sessions of two organizations apart in one browser", async () => {
    const a = await setUp("confidential");
    const b = await setUp("confidential");
    const jar = new CookieJar();
    await codeFlow(porta, a.org, a.config, { accountId: a.user.id, scope: "openid", redirectUri: "https://rp.example.com/cb", jar });
    await codeFlow(porta, b.org, b.config, { accountId: b.user.id, scope: "openid", redirectUri: "https://rp.example.com/cb", jar });
    // Each organization's session cookie lives under its own path; both are still there.
    for (const { org, client } of [a, b]) {
      const { challenge } = await pkcePair();
      const again = await jar.fetch(authorizationUrl(porta, org, client, { redirect_uri: "https://rp.example.com/cb", scope: "openid", code_challenge: challenge, code_challenge_method: "S256" }));
      expect(again.status).toBe(303);
      expect(again.headers.get("location")).toMatch(/^https:\/\/rp\.example\.com\/cb\?code=/);
    }
  });

  it("works when the slug is written in another case, with canonical URLs throughout", async () => {
    const { org, client, user, config } = await setUp("confidential");
    const { verifier, challenge } = await pkcePair();
    const url = authorizationUrl(porta, { slug: org.slug.toUpperCase() }, client, {
      redirect_uri: "https://rp.example.com/cb",
      scope: "openid",
      code_challenge: challenge,
      code_challenge_method: "S256",
    });
    const jar = new CookieJar();
    const callback = await followAuthorization(porta, org, url, { accountId: user.id, jar });
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: oidc.skipStateCheck });
    expect(tokens.claims()?.iss).toBe(issuerOf(porta, org));
    // The session cookie lives under the canonical prefix.
    const again = await jar.fetch(authorizationUrl(porta, org, client, { redirect_uri: "https://rp.example.com/cb", scope: "openid", code_challenge: challenge, code_challenge_method: "S256" }));
    expect(again.status).toBe(303);
    expect(again.headers.get("location")).toMatch(/^https:\/\/rp\.example\.com\/cb\?code=/);
  });

  it("asks for a new login instead of signing in an account that is not of the organization", async () => {
    const prisma = porta.services.db.prisma;
    const { org, client } = await setUp("confidential");
    const other = await createOrganization(prisma);
    const stranger = await createUser(prisma, other.id);
    const { challenge } = await pkcePair();
    const jar = new CookieJar();
    const tenant = (await porta.services.oidc.get(org.slug))!;
    const start = await jar.fetch(authorizationUrl(porta, org, client, { redirect_uri: "https://rp.example.com/cb", scope: "openid", code_challenge: challenge, code_challenge_method: "S256" }));
    const first = await tenant.provider.Interaction.find(start.headers.get("location")!.split("/").pop()!);
    const resumed = await jar.fetch(await recordLogin(first!, { accountId: stranger.id, amr: ["pwd"] }));
    expect(resumed.status).toBe(303);
    const location = new URL(resumed.headers.get("location")!, porta.baseUrl);
    expect(location.pathname).toMatch(/^\/interaction\//);
    const second = await tenant.provider.Interaction.find(location.pathname.split("/").pop()!);
    expect(second!.prompt.name).toBe("login");
    expect(second!.prompt.reasons).toContain("account_unavailable");
  });

  it("asks a session whose user was deactivated to sign in again (login_required with prompt=none)", async () => {
    const prisma = porta.services.db.prisma;
    const { org, client, user, config } = await setUp("confidential");
    const jar = new CookieJar();
    await codeFlow(porta, org, config, { accountId: user.id, scope: "openid", redirectUri: "https://rp.example.com/cb", jar });

    await prisma.user.update({ where: { id: user.id }, data: { status: "inactive" } });
    await invalidateUser(porta.services.cache, user.id);

    const { challenge } = await pkcePair();
    const params = { redirect_uri: "https://rp.example.com/cb", scope: "openid", code_challenge: challenge, code_challenge_method: "S256" };
    const silent = await jar.fetch(authorizationUrl(porta, org, client, { ...params, prompt: "none" }));
    expect(silent.status).toBe(303);
    const callback = new URL(silent.headers.get("location")!);
    expect(callback.origin + callback.pathname).toBe("https://rp.example.com/cb");
    expect(callback.searchParams.get("error")).toBe("login_required");

    const interactive = await jar.fetch(authorizationUrl(porta, org, client, params));
    expect(interactive.status).toBe(303);
    expect(new URL(interactive.headers.get("location")!, porta.baseUrl).pathname).toMatch(/^\/interaction\//);
  });
});
