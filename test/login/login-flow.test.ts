import * as oidc from "openid-client";
import { decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { csrfOf, TestBrowser } from "../support/browser";
import { freePort } from "../support/process";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import {
  auditDuring,
  createTenant,
  followToCallback,
  mainOf,
  message,
  openLoginPage,
  PASSWORD,
  passwordLoginToCallback,
  redeem,
  submitPassword,
  type Tenant,
} from "./helpers";

/**
 * A person signs in through the real pages: password, consent (allow or deny), and the relying
 * party (openid-client) redeems the code. Consent is remembered across sessions.
 */
let porta: TestPorta;
let web: Tenant;
beforeAll(async () => {
  porta = await startTestPorta();
  web = await createTenant(porta);
});
afterAll(async () => {
  await porta?.stop();
});

describe("password login of a confidential web client", () => {
  it("password → consent → allow → code → tokens, audited as auth.login.success", async () => {
    const user = await createUser(porta.services.db.prisma, web.org.id, { password: PASSWORD, givenName: "Grace", familyName: "Hopper" });
    const page = await openLoginPage(web);
    expect(page.res.status).toBe(200);

    const { result: posted, entries } = await auditDuring(porta, { eventType: "auth.login.success", organizationId: web.org.id }, () =>
      submitPassword(page, user.email, PASSWORD),
    );
    expect(posted.status).toBe(302);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      organizationId: web.org.id,
      actorType: "user",
      actorId: user.id,
      targetType: "user",
      targetId: user.id,
      data: { method: "password", clientId: web.client.id },
    });
    expect(entries[0]!.ip).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
    expect(JSON.stringify(entries[0])).not.toContain(PASSWORD);

    // The provider resumes and asks for consent on Porta's consent page.
    const consent = await followToCallback(page.browser, posted, page.interactionUrl, web.redirectUri);
    expect(consent.url).toMatch(new RegExp(`^${porta.baseUrl}/interaction/[^/?]+$`));
    expect(consent.res.status).toBe(200);
    const consentHtml = await consent.res.text();
    const consentMain = mainOf(consentHtml);
    expect(consentMain).toContain(message("en", (m) => m.consent.allow));
    expect(consentMain).toContain(message("en", (m) => m.consent.deny));
    expect(consentMain).toContain(user.email);

    const allowed = await page.browser.post(`${consent.url}/consent`, { csrf: csrfOf(consentHtml), decision: "allow" });
    const callback = await followToCallback(page.browser, allowed, `${consent.url}/consent`, web.redirectUri);
    const callbackUrl = new URL(callback.url);
    expect(callbackUrl.origin + callbackUrl.pathname).toBe(web.redirectUri);
    expect(callbackUrl.searchParams.get("code")).toBeTruthy();
    expect(callbackUrl.searchParams.get("iss")).toBe(web.issuer);

    const tokens = await redeem(page, callbackUrl);
    expect(tokens.access_token).toBeTruthy();
    expect(tokens.token_type.toLowerCase()).toBe("bearer");
    expect(decodeProtectedHeader(tokens.id_token!).alg).toBe("ES256");
    const claims = tokens.claims()!;
    expect(claims.sub).toBe(user.id);
    expect(claims.email).toBe(user.email);
    expect(claims.given_name).toBe("Grace");

    // The access token is good at userinfo.
    const info = await oidc.fetchUserInfo(page.config, tokens.access_token, user.id);
    expect(info.email).toBe(user.email);
  });

  it("remembers consent: a new browser session for the same user and client goes straight to the callback", async () => {
    const user = await createUser(porta.services.db.prisma, web.org.id, { password: PASSWORD });
    const first = await passwordLoginToCallback(await openLoginPage(web), user.email, PASSWORD, web.redirectUri);
    expect(first.consentShown).toBe(true);

    // A fresh browser: no cookies, so a new session and a new login.
    const page = await openLoginPage(web, { browser: new TestBrowser() });
    expect(mainOf(page.html)).toContain('name="password"');
    const posted = await submitPassword(page, user.email, PASSWORD);
    expect(posted.status).toBe(302);
    const visited: string[] = [];
    const end = await page.browser.follow(posted, page.interactionUrl, (url) => {
      visited.push(url);
      return url.startsWith(web.redirectUri);
    });
    // Nothing between the login and the callback rendered a page (no consent prompt).
    expect(end.url.startsWith(web.redirectUri)).toBe(true);
    expect(visited.filter((url) => url.includes("/interaction/"))).toEqual([]);
    const tokens = await redeem(page, new URL(end.url));
    expect(tokens.claims()!.sub).toBe(user.id);
  });

  it("deny gives error=access_denied at the redirect_uri", async () => {
    const user = await createUser(porta.services.db.prisma, web.org.id, { password: PASSWORD });
    const page = await openLoginPage(web);
    const posted = await submitPassword(page, user.email, PASSWORD);
    const consent = await followToCallback(page.browser, posted, page.interactionUrl, web.redirectUri);
    const consentHtml = await consent.res.text();
    expect(mainOf(consentHtml)).toContain(message("en", (m) => m.consent.deny));

    const denied = await page.browser.post(`${consent.url}/consent`, { csrf: csrfOf(consentHtml), decision: "deny" });
    const callback = await followToCallback(page.browser, denied, `${consent.url}/consent`, web.redirectUri);
    const url = new URL(callback.url);
    expect(url.origin + url.pathname).toBe(web.redirectUri);
    expect(url.searchParams.get("error")).toBe("access_denied");
    expect(url.searchParams.get("code")).toBeNull();
    expect(url.searchParams.get("iss")).toBe(web.issuer);
    // openid-client, as the relying party, reports the error.
    await expect(redeem(page, url)).rejects.toMatchObject({ error: "access_denied" });

    // Denial is not remembered: the next authorization asks again.
    const again = await passwordLoginToCallback(await openLoginPage(web), user.email, PASSWORD, web.redirectUri);
    expect(again.consentShown).toBe(true);
  });
});

describe("addresses on a single-label domain (admin@localhost)", () => {
  it("sign in with a password, and get the generic answer from the magic-link and reset forms", async () => {
    const email = `ada-${Date.now()}@localhost`;
    await createUser(porta.services.db.prisma, web.org.id, { email, password: PASSWORD });
    const page = await openLoginPage(web);
    const { callback } = await passwordLoginToCallback(page, email, PASSWORD, web.redirectUri);
    expect(callback.searchParams.get("code")).toBeTruthy();

    const magic = await openLoginPage(web);
    const sent = await magic.browser.post(`${magic.interactionUrl}/magic-link`, { csrf: csrfOf(magic.html), email });
    expect(sent.status).toBe(200);
    expect(mainOf(await sent.text())).toContain(message("en", (m) => m.magicLink.sent, { email }));

    const forgot = await openLoginPage(web);
    const form = await forgot.browser.get(`${forgot.interactionUrl}/forgot-password`);
    const requested = await forgot.browser.post(`${forgot.interactionUrl}/forgot-password`, { csrf: csrfOf(await form.text()), email });
    expect(requested.status).toBe(200);
    expect(await requested.text()).not.toContain(message("en", (m) => m.signIn.emailInvalid));
  });
});

describe("public native client (PKCE, loopback redirect on any port)", () => {
  it("openid-client completes a login through the real pages", async () => {
    const native = await createTenant(porta, {
      client: { confidential: false, applicationType: "native", redirectUris: ["http://127.0.0.1/callback"] },
    });
    expect(native.secret).toBeUndefined();
    const user = await createUser(porta.services.db.prisma, native.org.id, { password: PASSWORD });
    // The loopback port the CLI would listen on: any port matches the registered URI (RFC 8252 §7.3).
    const redirectUri = `http://127.0.0.1:${await freePort()}/callback`;

    const page = await openLoginPage(native, { redirectUri });
    expect(page.res.status).toBe(200);
    const { callback, consentShown } = await passwordLoginToCallback(page, user.email, PASSWORD, redirectUri);
    expect(consentShown).toBe(true);
    expect(callback.searchParams.get("code")).toBeTruthy();

    // Redeemed without a client secret, with the PKCE verifier and the same loopback redirect.
    const tokens = await oidc.authorizationCodeGrant(page.config, callback, { pkceCodeVerifier: page.verifier });
    expect(tokens.claims()!.sub).toBe(user.id);
    expect(decodeProtectedHeader(tokens.id_token!).alg).toBe("ES256");

    // Without the verifier the same kind of code is refused. (A native client's redirect can be
    // claimed by any local app, so oidc-provider asks the person again every time: native_client_prompt.)
    const second = await passwordLoginToCallback(await openLoginPage(native, { redirectUri }), user.email, PASSWORD, redirectUri);
    expect(second.consentShown).toBe(true);
    await expect(oidc.authorizationCodeGrant(page.config, second.callback, { pkceCodeVerifier: oidc.randomPKCECodeVerifier() })).rejects.toMatchObject({
      error: "invalid_grant",
    });
  });
});
