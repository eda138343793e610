import { decodeJwt } from "jose";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { csrfOf, startAuthorization } from "../support/browser";
import { createClient, createOrganization, createUser } from "../support/factories";
import { clientConfiguration, codeFlow, issuerOf, oidcError, type OrgRef } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";
import { PASSWORD, RP_CALLBACK, unique } from "../admin/helpers";

/**
 * What an operator sets per client, as the provider enforces it (decision 036), seen by a
 * relying party through openid-client: the browser origins allowed at the token endpoint, a
 * first-party client that never shows the consent page, and the client's own token lifetimes.
 */
let porta: TestPorta;
let org: OrgRef;
let email: string;

beforeAll(async () => {
  porta = await startTestPorta();
  const prisma = porta.services.db.prisma;
  const slug = unique("policy");
  org = await prisma.organization.create({ data: { slug, name: `Policy ${slug}` } });
  email = `${unique("person")}@example.com`;
  await createUser(prisma, org.id, { email, password: PASSWORD });
});
afterAll(async () => {
  await porta?.stop();
});

/** An openid-client configuration whose requests carry `origin` as a browser would; `seen` gets each response's CORS header. */
function fromOrigin(config: oidc.Configuration, origin: string, seen: Array<string | null>) {
  config[oidc.customFetch] = async (url, options) => {
    const headers = new Headers(options.headers as HeadersInit);
    headers.set("origin", origin);
    const response = await fetch(url, { ...options, headers } as RequestInit);
    seen.push(response.headers.get("access-control-allow-origin"));
    return response;
  };
  return config;
}

describe("allowed CORS origins", () => {
  const SPA = "https://spa.example.com";

  async function machine(allowedCorsOrigins: string[]) {
    const { client, secret } = await createClient(porta.services.db.prisma, org.id, { grantTypes: ["client_credentials"], redirectUris: [], scope: "email", allowedCorsOrigins });
    return { client, secret: secret!.value };
  }

  it("answers a token request from an allowed origin with that origin in Access-Control-Allow-Origin", async () => {
    const { client, secret } = await machine([SPA]);
    const seen: Array<string | null> = [];
    const config = fromOrigin(await clientConfiguration(porta, org, client, { secret }), SPA, seen);
    const tokens = await oidc.clientCredentialsGrant(config);
    expect(tokens.access_token).toBeTruthy();
    expect(seen.at(-1)).toBe(SPA);
  });

  it("refuses another origin: no Access-Control-Allow-Origin, invalid_request", async () => {
    const { client, secret } = await machine([SPA]);
    const seen: Array<string | null> = [];
    const config = fromOrigin(await clientConfiguration(porta, org, client, { secret }), "https://elsewhere.example.com", seen);
    const failure = await oidcError(oidc.clientCredentialsGrant(config));
    expect(failure.error).toBe("invalid_request");
    expect(failure.description).toContain("not allowed");
    expect(seen.at(-1)).toBeNull();
  });

  it("refuses the same origin for a client that does not list it", async () => {
    const { client, secret } = await machine([]);
    const seen: Array<string | null> = [];
    const config = fromOrigin(await clientConfiguration(porta, org, client, { secret }), SPA, seen);
    expect((await oidcError(oidc.clientCredentialsGrant(config))).error).toBe("invalid_request");
    expect(seen.at(-1)).toBeNull();
  });

  it("answers a token endpoint's preflight only for an origin some client of the organization registered", async () => {
    const prisma = porta.services.db.prisma;
    const own = await createOrganization(prisma);
    await createClient(prisma, own.id, { grantTypes: ["client_credentials"], redirectUris: [], allowedCorsOrigins: [SPA] });
    await createClient(prisma, own.id, { confidential: false, redirectUris: ["https://app.example.com/cb"] });
    // Registered on a client of another organization only.
    await createClient(prisma, org.id, { confidential: false, redirectUris: ["https://other-tenant.example.com/cb"] });
    const preflight = (path: string, origin: string) =>
      fetch(`${issuerOf(porta, own)}${path}`, {
        method: "OPTIONS",
        headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type" },
      });
    for (const path of ["/auth/token", "/token", "/token/introspection", "/token/revocation", "/auth/par", "/device/auth"]) {
      for (const origin of [SPA, "https://app.example.com"]) {
        const allowed = await preflight(path, origin);
        expect(allowed.status, `${path} ${origin}`).toBe(204);
        expect(allowed.headers.get("access-control-allow-origin"), `${path} ${origin}`).toBe(origin);
      }
      for (const origin of ["https://elsewhere.example.com", "https://other-tenant.example.com", "null"]) {
        const refused = await preflight(path, origin);
        expect(refused.status, `${path} ${origin}`).toBe(403);
        expect(refused.headers.get("access-control-allow-origin"), `${path} ${origin}`).toBeNull();
        expect(refused.headers.get("access-control-allow-methods"), `${path} ${origin}`).toBeNull();
        expect(((await refused.json()) as { error: string }).error).toBe("invalid_request");
      }
    }
  });

  it("keeps allowing the origins of the client's redirect URIs", async () => {
    const { client } = await createClient(porta.services.db.prisma, org.id, { confidential: false, redirectUris: ["https://app.example.com/cb"], allowedCorsOrigins: [SPA] });
    for (const origin of ["https://app.example.com", SPA]) {
      const response = await fetch(`${issuerOf(porta, org)}/auth/token`, {
        method: "POST",
        headers: { origin, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "authorization_code", code: "unknown", client_id: client.id, redirect_uri: "https://app.example.com/cb", code_verifier: "x".repeat(43) }),
      });
      // The code is unknown (invalid_grant), but the browser may read that answer.
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toBe("invalid_grant");
      expect(response.headers.get("access-control-allow-origin")).toBe(origin);
    }
  });
});

describe("skip-consent", () => {
  /** Signs the person in through the real login page; says whether the consent page was shown. */
  async function signIn(clientId: string, secret: string, scope: string, extra: Record<string, string> = {}) {
    const start = await startAuthorization({ issuer: issuerOf(porta, org), clientId, clientSecret: secret, redirectUri: RP_CALLBACK, scope, extra });
    const page = await start.browser.get(start.interactionUrl);
    const posted = await start.browser.post(start.interactionUrl, { csrf: csrfOf(await page.text()), email, password: PASSWORD });
    expect([302, 303]).toContain(posted.status);
    let step = await start.browser.follow(posted, start.interactionUrl, (u) => u.startsWith(RP_CALLBACK));
    let consentShown = false;
    if (!step.url.startsWith(RP_CALLBACK)) {
      expect(step.res.status).toBe(200);
      consentShown = true;
      const allow = await start.browser.post(`${step.url}/consent`, { csrf: csrfOf(await step.res.text()), decision: "allow" });
      step = await start.browser.follow(allow, `${step.url}/consent`, (u) => u.startsWith(RP_CALLBACK));
    }
    expect(step.url.startsWith(RP_CALLBACK), step.url).toBe(true);
    const tokens = await oidc.authorizationCodeGrant(start.config, new URL(step.url), { pkceCodeVerifier: start.verifier });
    return { tokens, consentShown };
  }

  async function webClient(skipConsent: boolean) {
    const { client, secret } = await createClient(porta.services.db.prisma, org.id, { redirectUris: [RP_CALLBACK], skipConsent });
    return { id: client.id, secret: secret!.value };
  }

  it("a first-party client gets what it asks for without the consent page", async () => {
    const client = await webClient(true);
    const { tokens, consentShown } = await signIn(client.id, client.secret, "openid profile email");
    expect(consentShown).toBe(false);
    expect(tokens.scope?.split(" ").sort()).toEqual(["email", "openid", "profile"]);
    expect(decodeJwt(tokens.id_token!).email).toBe(email);
  });

  it("…also when it asks for offline_access with prompt=consent: a refresh token, no page", async () => {
    const client = await webClient(true);
    const { tokens, consentShown } = await signIn(client.id, client.secret, "openid email offline_access", { prompt: "consent" });
    expect(consentShown).toBe(false);
    expect(tokens.refresh_token).toBeTruthy();
  });

  it("the provider itself asks for no consent (its grant already holds what was asked); for other clients it does", async () => {
    const userId = (await porta.services.db.prisma.user.findFirstOrThrow({ where: { organizationId: org.id, email } })).id;
    const prompts = async (skipConsent: boolean) => {
      const client = await webClient(skipConsent);
      const seen: string[] = [];
      const config = await clientConfiguration(porta, org, { id: client.id }, { secret: client.secret });
      const tokens = await codeFlow(porta, org, config, { accountId: userId, scope: "openid profile email", redirectUri: RP_CALLBACK, prompts: seen });
      expect(tokens.scope?.split(" ").sort()).toEqual(["email", "openid", "profile"]);
      return seen;
    };
    expect(await prompts(true)).toEqual(["login"]);
    expect(await prompts(false)).toEqual(["login", "consent"]);
  });

  it("any other client shows the consent page", async () => {
    const client = await webClient(false);
    const { consentShown } = await signIn(client.id, client.secret, "openid profile email");
    expect(consentShown).toBe(true);
  });

  it("a native client is asked even if its row says skip-consent (the Admin API refuses that combination)", async () => {
    const { client } = await createClient(porta.services.db.prisma, org.id, { confidential: false, applicationType: "native", redirectUris: ["http://127.0.0.1:7777/cb"], skipConsent: true });
    const start = await startAuthorization({ issuer: issuerOf(porta, org), clientId: client.id, redirectUri: "http://127.0.0.1:7777/cb", scope: "openid email" });
    const page = await start.browser.get(start.interactionUrl);
    const posted = await start.browser.post(start.interactionUrl, { csrf: csrfOf(await page.text()), email, password: PASSWORD });
    const step = await start.browser.follow(posted, start.interactionUrl, (u) => u.startsWith("http://127.0.0.1:7777/"));
    expect(step.url).toMatch(/\/interaction\//);
    expect(step.res.status).toBe(200);
  });
});

describe("token lifetimes per client", () => {
  const lifetime = (jwt: string) => {
    const { exp, iat } = decodeJwt(jwt);
    return exp! - iat!;
  };

  it("a machine client's access tokens live as long as its own setting; another's the organization's", async () => {
    const prisma = porta.services.db.prisma;
    const own = await createClient(prisma, org.id, { grantTypes: ["client_credentials"], redirectUris: [], scope: "email", accessTokenTtlSeconds: 120 });
    const plain = await createClient(prisma, org.id, { grantTypes: ["client_credentials"], redirectUris: [], scope: "email" });
    const ownTokens = await oidc.clientCredentialsGrant(await clientConfiguration(porta, org, own.client, { secret: own.secret!.value }));
    const plainTokens = await oidc.clientCredentialsGrant(await clientConfiguration(porta, org, plain.client, { secret: plain.secret!.value }));
    expect(ownTokens.expires_in).toBe(120);
    expect(lifetime(ownTokens.access_token)).toBe(120);
    const orgDefault = await porta.services.settings.get("tokens.accessTokenTtlSeconds");
    expect(orgDefault).not.toBe(120);
    expect(plainTokens.expires_in).toBe(orgDefault);
  });

  it("a code-flow client's access and refresh tokens follow its settings, after a refresh too", async () => {
    const { client, secret } = await createClient(porta.services.db.prisma, org.id, { redirectUris: [RP_CALLBACK], skipConsent: true, accessTokenTtlSeconds: 300, refreshTokenTtlSeconds: 900 });
    const start = await startAuthorization({ issuer: issuerOf(porta, org), clientId: client.id, clientSecret: secret!.value, redirectUri: RP_CALLBACK, scope: "openid offline_access", extra: { prompt: "consent" } });
    const page = await start.browser.get(start.interactionUrl);
    const posted = await start.browser.post(start.interactionUrl, { csrf: csrfOf(await page.text()), email, password: PASSWORD });
    const step = await start.browser.follow(posted, start.interactionUrl, (u) => u.startsWith(RP_CALLBACK));
    const tokens = await oidc.authorizationCodeGrant(start.config, new URL(step.url), { pkceCodeVerifier: start.verifier });
    expect(tokens.expires_in).toBe(300);
    expect(lifetime(tokens.access_token)).toBe(300);

    const introspected = await oidc.tokenIntrospection(start.config, tokens.refresh_token!);
    expect(introspected.active).toBe(true);
    expect(introspected.exp! - introspected.iat!).toBe(900);

    const refreshed = await oidc.refreshTokenGrant(start.config, tokens.refresh_token!);
    expect(refreshed.expires_in).toBe(300);
    const again = await oidc.tokenIntrospection(start.config, refreshed.refresh_token!);
    expect(again.exp! - again.iat!).toBe(900);
  });
});
