import { createHash } from "node:crypto";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../support/factories";
import { authorizationUrl, codeFlow, CookieJar, followAuthorization, issuerOf, pkcePair, type OrgRef, relyingPartySetup } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

let porta: TestPorta;
let org: OrgRef;
let userId: string;
let clientId: string;
let config: oidc.Configuration;

const CB = "https://rp.example.com/cb";
const LOGGED_OUT = "https://rp.example.com/logged-out";

beforeAll(async () => {
  porta = await startTestPorta();
  ({ org, userId, clientId, config } = await relyingPartySetup(porta, { postLogoutRedirectUris: [LOGGED_OUT] }));
});
afterAll(async () => {
  await porta?.stop();
});

async function signedIn(accountId = userId) {
  const jar = new CookieJar();
  const tokens = await codeFlow(porta, org, config, { accountId, scope: "openid email", redirectUri: CB, jar });
  return { jar, tokens };
}

/** The confirmation page's form: where it posts and its hidden xsrf value. */
function logoutForm(html: string) {
  const form = /<form id="op\.logoutForm" method="post" action="([^"]+)">(.*?)<\/form>/s.exec(html);
  const xsrf = form && /name="xsrf" value="([^"]+)"/.exec(form[2]!);
  if (!form || !xsrf) throw new Error(`no logout form in ${html.slice(0, 500)}`);
  return { action: form[1]!.replace(/&amp;/g, "&"), xsrf: xsrf[1]! };
}

const postForm = (jar: CookieJar, action: string, fields: Record<string, string>) =>
  jar.fetch(action, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields) });

async function userinfoStatus(accessToken: string) {
  const response = await fetch(`${issuerOf(porta, org)}/me`, { headers: { authorization: `Bearer ${accessToken}` } });
  await response.body?.cancel();
  return response.status;
}

/** What the page's script posts: the form with every hidden field it holds. */
function hiddenFields(html: string): Record<string, string> {
  const form = /<form id="op\.logoutForm"[^>]*>(.*?)<\/form>/s.exec(html)?.[1] ?? "";
  return Object.fromEntries([...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/?>/g)].map((m) => [m[1]!, m[2]!]));
}

/** The page's inline scripts, each allowed by the response's Content-Security-Policy. */
function scriptsAllowedByPolicy(html: string, policy: string | null): boolean {
  const scripts = [...html.matchAll(/<script>(.*?)<\/script>/gs)].map((m) => m[1]!);
  const scriptSrc = (policy ?? "").split(";").find((d) => d.trim().startsWith("script-src")) ?? "";
  return scripts.length > 0 && scripts.every((script) => scriptSrc.includes(`'sha256-${createHash("sha256").update(script).digest("base64")}'`));
}

describe("RP-initiated logout", () => {
  it("signs out without a question when the ID token hint is this session's and the post_logout_redirect_uri registered", async () => {
    const { jar, tokens } = await signedIn();
    const url = oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: LOGGED_OUT, state: "bye-1" });
    expect(url.href.startsWith(`${issuerOf(porta, org)}/session/end?`)).toBe(true);

    const page = await jar.fetch(url);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    const html = await page.text();
    expect(html).not.toContain("Sign out?");
    expect(html).not.toContain("No, stay signed in");
    expect(html).toContain("Signing you out");
    // The page posts itself: its script runs under the page's policy (a button without script).
    expect(scriptsAllowedByPolicy(html, page.headers.get("content-security-policy"))).toBe(true);
    const fields = hiddenFields(html);
    expect(fields.logout).toBe("yes");
    const { action } = logoutForm(html);
    expect(action).toBe(`${issuerOf(porta, org)}/session/end/confirm`);

    const confirmed = await postForm(jar, action, fields);
    expect(confirmed.status).toBe(303);
    const back = new URL(confirmed.headers.get("location")!);
    expect(back.origin + back.pathname).toBe(LOGGED_OUT);
    expect(back.searchParams.get("state")).toBe("bye-1");

    // The session is gone: the next authorization request asks for a login again.
    const { challenge } = await pkcePair();
    const next = await jar.fetch(authorizationUrl(porta, org, { id: clientId }, { redirect_uri: CB, scope: "openid", code_challenge: challenge, code_challenge_method: "S256" }));
    expect(new URL(next.headers.get("location")!, porta.baseUrl).pathname).toMatch(/^\/interaction\//);
    // And the session's (online) tokens were revoked with it.
    expect(await userinfoStatus(tokens.access_token)).toBe(401);
  });

  it("asks first when the request has no ID token hint", async () => {
    const { jar, tokens } = await signedIn();
    const page = await jar.fetch(oidc.buildEndSessionUrl(config, { client_id: clientId, post_logout_redirect_uri: LOGGED_OUT }));
    const html = await page.text();
    expect(html).toContain("Sign out?");
    expect(html).toMatch(/<button[^>]*form="op\.logoutForm"[^>]*name="logout"[^>]*value="yes"/);
    expect(html).not.toContain("<script>");
    expect(hiddenFields(html).logout).toBeUndefined();
    expect(await userinfoStatus(tokens.access_token)).toBe(200);
  });

  it("asks first when the ID token hint is another sign-in's: another person's, or an earlier one in this browser", async () => {
    const { jar, tokens } = await signedIn();
    const other = await signedIn((await createUser(porta.services.db.prisma, org.id)).id);
    const foreign = await jar.fetch(oidc.buildEndSessionUrl(config, { id_token_hint: other.tokens.id_token!, post_logout_redirect_uri: LOGGED_OUT }));
    expect(await foreign.text()).toContain("Sign out?");

    // The same person signs in again in this browser a second later: the first ID token is the earlier sign-in's.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const { challenge } = await pkcePair();
    await followAuthorization(porta, org, authorizationUrl(porta, org, { id: clientId }, { redirect_uri: CB, scope: "openid", prompt: "login", code_challenge: challenge, code_challenge_method: "S256" }), {
      accountId: userId,
      jar,
    });
    const earlier = await jar.fetch(oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: LOGGED_OUT }));
    expect(await earlier.text()).toContain("Sign out?");
  });

  it("refuses a forged confirmation (wrong xsrf)", async () => {
    const { jar, tokens } = await signedIn();
    const page = await jar.fetch(oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: LOGGED_OUT }));
    const { action } = logoutForm(await page.text());
    const forged = await postForm(jar, action, { xsrf: "forged", logout: "yes" });
    expect(forged.status).toBe(400);
    expect(forged.headers.get("location")).toBeNull();
    expect(await userinfoStatus(tokens.access_token)).toBe(200);
  });

  it("refuses an unregistered post_logout_redirect_uri", async () => {
    const { jar, tokens } = await signedIn();
    const page = await jar.fetch(oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: "https://evil.example.com/bye" }), { headers: { accept: "text/html" } });
    expect(page.status).toBe(400);
    expect(page.headers.get("location")).toBeNull();
    const html = await page.text();
    expect(html).toContain("invalid_request");
    expect(html).toContain("We could not complete the sign-out");
    expect(html).not.toContain("sign-in");
  });

  it("shows Porta's own page when no post_logout_redirect_uri is given", async () => {
    const { jar, tokens } = await signedIn();
    const page = await jar.fetch(oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token! }));
    const { action, xsrf } = logoutForm(await page.text());
    const confirmed = await postForm(jar, action, { xsrf, logout: "yes" });
    expect(confirmed.status).toBe(303);
    const success = new URL(confirmed.headers.get("location")!);
    expect(success.href.startsWith(`${issuerOf(porta, org)}/session/end/success`)).toBe(true);
    const done = await jar.fetch(success);
    expect(done.status).toBe(200);
    expect(await done.text()).toContain("You are signed out");
  });

  it("signs the browser out of this client only when the person declines the full sign-out", async () => {
    // A user with this one sign-in: consent given in another live sign-in would be remembered.
    const loner = (await createUser(porta.services.db.prisma, org.id)).id;
    const { jar, tokens } = await signedIn(loner);
    // Without an ID token hint, so that the question comes.
    const page = await jar.fetch(oidc.buildEndSessionUrl(config, { client_id: clientId, post_logout_redirect_uri: LOGGED_OUT }));
    const { action, xsrf } = logoutForm(await page.text());
    const declined = await postForm(jar, action, { xsrf });
    expect(declined.status).toBe(303);
    expect(new URL(declined.headers.get("location")!).origin + new URL(declined.headers.get("location")!).pathname).toBe(LOGGED_OUT);
    // The account is still signed in at the provider: a new request needs no login, only a
    // new consent, because this client's part of the session (and its grant, the account's
    // only one for the client) ended.
    const { challenge } = await pkcePair();
    const next = await jar.fetch(authorizationUrl(porta, org, { id: clientId }, { redirect_uri: CB, scope: "openid", code_challenge: challenge, code_challenge_method: "S256" }));
    const location = new URL(next.headers.get("location")!, porta.baseUrl);
    expect(location.pathname).toMatch(/^\/interaction\//);
    const interaction = await (await porta.services.oidc.get(org.slug))!.provider.Interaction.find(location.pathname.split("/").pop()!);
    expect(interaction!.prompt.name).toBe("consent");
    expect(interaction!.session?.accountId).toBe(loner);
    expect(await userinfoStatus(tokens.access_token)).toBe(401);
  });

  it("speaks the person's language and wears the organization's branding: confirmation, signed-out page and errors", async () => {
    const prisma = porta.services.db.prisma;
    await prisma.organization.update({ where: { id: org.id }, data: { branding: { displayName: "Contoso Login", primaryColor: "#aa3300" } } });
    await porta.services.oidc.invalidate(org.id);
    try {
      const { jar, tokens } = await signedIn();
      // ui_locales of the logout request (RP-Initiated Logout §2) wins over the browser's language.
      const url = oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, ui_locales: "de-CH" });
      const page = await jar.fetch(url, { headers: { "accept-language": "en" } });
      const html = await page.text();
      expect(html).toContain('<html lang="de">');
      expect(html).toContain("Abmelden?");
      expect(html).toContain("Möchten Sie sich auf diesem Gerät bei Contoso Login abmelden?");
      expect(html).toContain("--porta-primary:#aa3300");
      expect(html).toMatch(/<button[^>]*name="logout"[^>]*value="yes"[^>]*>Ja, abmelden</);
      const { action, xsrf } = logoutForm(html);
      const confirmed = await postForm(jar, action, { xsrf, logout: "yes" });
      const done = await jar.fetch(new URL(confirmed.headers.get("location")!), { headers: { "accept-language": "de-DE,de;q=0.9" } });
      const doneHtml = await done.text();
      expect(doneHtml).toContain("Sie sind abgemeldet");
      // Not a dead end: the organization's account page is the next step.
      expect(doneHtml).toContain(`href="${issuerOf(porta, org)}/account"`);

      const refused = await jar.fetch(oidc.buildEndSessionUrl(config, { post_logout_redirect_uri: "https://evil.example.com/bye" }), { headers: { "accept-language": "de", accept: "text/html" } });
      expect(refused.status).toBe(400);
      const refusedHtml = await refused.text();
      // A sign-out's error is named a sign-out's.
      expect(refusedHtml).toContain("Die Abmeldung konnte nicht abgeschlossen werden");
      expect(refusedHtml).not.toContain("Anmeldung");
      expect(refusedHtml).toContain("<code>invalid_request</code>");
      expect(refusedHtml).toContain("Contoso Login");
    } finally {
      await prisma.organization.update({ where: { id: org.id }, data: { branding: {} } });
      await porta.services.oidc.invalidate(org.id);
    }
  });
});
