import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSession, saveSession } from "~/.server/console/session";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { startAuthorization, TestBrowser } from "../support/browser";
import { createUser } from "../support/factories";
import { TEST_ADMIN, startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, dataFingerprint, PASSWORD, RP_CALLBACK, signIn, unique, userinfoStatus } from "../admin/helpers";
import { consoleSignIn, cookieNamed, createServiceAdmin, pageWithCsrf, TINY_PNG, uploadLogo, type ConsoleVisit } from "./helpers";

/**
 * The admin console over HTTP, as a browser drives it: OIDC sign-in with the shared admin client,
 * the session cookie, refusal of non-admins, CSRF, organization create/edit with the ETag
 * conflict view, refresh before expiry, and sign-out with revocation.
 */
let porta: TestPorta;
/** The bootstrap admin's console, signed in once (the login rate limit counts per account). */
let admin: ConsoleVisit;
/** A second service-admin, in a browser of their own. */
const SECOND = { email: "second-admin@porta.test", password: PASSWORD };
/** A third one who signs out. */
const LEAVER = { email: "leaving-admin@porta.test", password: PASSWORD };
let second: ConsoleVisit;

beforeAll(async () => {
  porta = await startTestPorta();
  const prisma = porta.services.db.prisma;
  const superOrg = (await prisma.organization.findUnique({ where: { slug: porta.services.config.superAdminSlug } }))!;
  const role = await prisma.role.findFirstOrThrow({ where: { organizationId: superOrg.id, name: "service-admin" } });
  for (const person of [SECOND, LEAVER]) {
    const user = await createUser(prisma, superOrg.id, person);
    await prisma.userRole.create({ data: { userId: user.id, roleId: role.id } });
  }
  admin = await consoleSignIn(porta);
  second = await consoleSignIn(porta, SECOND);
});
afterAll(async () => {
  await porta?.stop();
});

const sessionIdOf = (browser: TestBrowser) => /porta_console=([^;]+)/.exec(browser.cookieHeader(`${porta.baseUrl}/console`))![1]!;

async function orgBySlug(slug: string) {
  return porta.services.db.prisma.organization.findUnique({ where: { slug } });
}

describe("sign-in", () => {
  it("sends an unknown visitor to the super-admin organization with PKCE S256, state and nonce", async () => {
    const browser = new TestBrowser();
    const res = await browser.get(`${porta.baseUrl}/console/organizations?q=x`);
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get("location")!);
    expect(`${location.origin}${location.pathname}`).toBe(`${porta.baseUrl}/${porta.services.config.superAdminSlug}/auth/authorize`);
    expect(location.searchParams.get("client_id")).toBe("porta-admin");
    expect(location.searchParams.get("redirect_uri")).toBe(`${porta.baseUrl}/api/oidc/callback`);
    expect(location.searchParams.get("code_challenge_method")).toBe("S256");
    expect(location.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(location.searchParams.get("state")).toBeTruthy();
    expect(location.searchParams.get("nonce")).toBeTruthy();
    expect(location.searchParams.get("prompt")).toBe("login");
    const stateCookie = cookieNamed(res.headers.getSetCookie(), "porta_console_signin")!;
    expect(stateCookie).toMatch(/HttpOnly/);
    expect(stateCookie).toMatch(/SameSite=Lax/);
  });

  it("signs a service-admin in, back to the page asked for, with an httpOnly Lax cookie holding only a session id", async () => {
    const { landed, callbackCookies, browser } = await consoleSignIn(porta, TEST_ADMIN, "/console/audit");
    expect(landed.url).toBe(`${porta.baseUrl}/console/audit`);
    expect(landed.res.status).toBe(200);
    const html = await landed.res.text();
    expect(html).toContain("Audit log");
    expect(html).toContain(TEST_ADMIN.email);
    const cookie = cookieNamed(callbackCookies, "porta_console")!;
    expect(cookie).toMatch(/; Path=\/;/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).not.toMatch(/Secure/); // BASE_URL is http here
    const id = sessionIdOf(browser);
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The tokens stay on the server: neither the cookie nor the page carries them.
    const session = await loadSession(porta.services, id);
    expect(session?.email).toBe(TEST_ADMIN.email);
    expect(html).not.toContain(session!.accessToken);
    expect(html).not.toContain(session!.refreshToken!);
  });

  it("speaks German to a German browser", async () => {
    const { landed } = await consoleSignIn(porta, TEST_ADMIN, "/console", { "accept-language": "de-DE,de;q=0.9" });
    const html = await landed.res.text();
    expect(html).toContain('lang="de"');
    expect(html).toContain("Übersicht");
    expect(html).toContain("Abmelden");
  });

  it("refuses a signed-in person of the super-admin organization who is not a service-admin", async () => {
    const superOrg = (await orgBySlug(porta.services.config.superAdminSlug))!;
    const email = `${unique("helper")}@porta.test`;
    await createUser(porta.services.db.prisma, superOrg.id, { email, password: PASSWORD });
    const { landed, callbackCookies, browser } = await consoleSignIn(porta, { email, password: PASSWORD });
    expect(landed.url).toBe(`${porta.baseUrl}/console/refused?reason=refused`);
    expect(landed.res.status).toBe(403);
    expect(await landed.res.text()).toContain("not a service administrator");
    expect(cookieNamed(callbackCookies, "porta_console")).toBeUndefined();
    // Still no way in: the console asks for a sign-in again.
    expect((await browser.get(`${porta.baseUrl}/console`)).status).toBe(302);
  });

  it("refuses a callback whose state does not match this browser", async () => {
    const stranger = new TestBrowser();
    const forged = await stranger.get(`${porta.baseUrl}/api/oidc/callback?code=abc&state=def`);
    expect(forged.status).toBe(302);
    expect(forged.headers.get("location")).toBe("/console/refused?reason=failed");
    expect(cookieNamed(forged.headers.getSetCookie(), "porta_console")).toBeUndefined();
    const page = await stranger.get(`${porta.baseUrl}/console/refused?reason=failed`);
    expect(page.status).toBe(400);
    expect(await page.text()).toContain("The sign-in could not be completed");
  });
});

describe("session", () => {
  it("refreshes the tokens shortly before the access token expires", async () => {
    const { browser } = admin;
    const id = sessionIdOf(browser);
    const before = (await loadSession(porta.services, id))!;
    await saveSession(porta.services, id, { ...before, expiresAt: Date.now() + 10_000 });
    const res = await browser.get(`${porta.baseUrl}/console`);
    expect(res.status).toBe(200);
    const after = (await loadSession(porta.services, id))!;
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(after.expiresAt).toBeGreaterThan(Date.now() + 60_000);
    // The new token is a working Admin API token.
    expect((await adminApi(porta, after.accessToken).get("/organizations")).status).toBe(200);
  });

  it("signs out: revokes the tokens at the provider, forgets the session and clears the cookie", async () => {
    const { browser } = await consoleSignIn(porta, LEAVER);
    const id = sessionIdOf(browser);
    const session = (await loadSession(porta.services, id))!;
    const { csrf } = await pageWithCsrf(browser, `${porta.baseUrl}/console`);

    const forged = await browser.post(`${porta.baseUrl}/console/sign-out`, { csrf: "forged" });
    expect(forged.status).toBe(403);
    expect(await forged.text()).toContain("This form has expired");
    expect(await loadSession(porta.services, id)).not.toBeNull();

    const res = await browser.post(`${porta.baseUrl}/console/sign-out`, { csrf });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/console/signed-out");
    expect(cookieNamed(res.headers.getSetCookie(), "porta_console")).toMatch(/Max-Age=0/);
    expect(await loadSession(porta.services, id)).toBeNull();
    expect((await adminApi(porta, session.accessToken).get("/organizations")).status).toBe(401);
    const refresh = await fetch(`${porta.baseUrl}/${porta.services.config.superAdminSlug}/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: session.refreshToken!, client_id: "porta-admin" }).toString(),
    });
    expect(refresh.status).toBe(400);
    expect(((await refresh.json()) as { error: string }).error).toBe("invalid_grant");
    expect((await browser.get(`${porta.baseUrl}/console/signed-out`)).status).toBe(200);
    // Coming back asks for the password again, although the provider's session cookie is still there.
    const again = await browser.get(`${porta.baseUrl}/console`);
    expect(again.status).toBe(302);
    const { url } = await browser.follow(again, `${porta.baseUrl}/console`, (u) => u.includes("/interaction/") || u.includes("/api/oidc/callback"));
    expect(url).toContain("/interaction/");
    // Other admins' sessions go on.
    expect((await admin.browser.get(`${porta.baseUrl}/console`)).status).toBe(200);
  });

  it("signing out ends the console's own sign-in only: the same admin's CLI keeps its tokens", async () => {
    const person = { email: `${unique("cli-and-console")}@porta.test`, password: PASSWORD };
    await createServiceAdmin(porta, person);
    // The CLI on another machine, then the console in a browser.
    const cli = await obtainAdminTokens(porta, person);
    const { browser } = await consoleSignIn(porta, person);
    // And `porta login` in that same browser, where the provider's session already knows the admin.
    const sameBrowser = await startAuthorization({
      issuer: `${porta.baseUrl}/${porta.services.config.superAdminSlug}`,
      clientId: "porta-admin",
      redirectUri: "http://127.0.0.1:53999/callback",
      scope: "openid profile email roles offline_access",
      browser,
    });
    const consented = await browser.get(sameBrowser.interactionUrl);
    const { url } = await browser.follow(consented, sameBrowser.interactionUrl, (u) => u.startsWith("http://127.0.0.1:53999/"));
    expect(url.startsWith("http://127.0.0.1:53999/callback?code=")).toBe(true);
    const cliHere = await oidc.authorizationCodeGrant(sameBrowser.config, new URL(url), { pkceCodeVerifier: sameBrowser.verifier });

    const { csrf } = await pageWithCsrf(browser, `${porta.baseUrl}/console`);
    expect((await browser.post(`${porta.baseUrl}/console/sign-out`, { csrf })).status).toBe(302);

    for (const [label, tokens] of [["other machine", cli], ["same browser", { accessToken: cliHere.access_token, refreshToken: cliHere.refresh_token, config: sameBrowser.config }]] as const) {
      expect((await adminApi(porta, tokens.accessToken).get("/organizations")).status, label).toBe(200);
      const refreshed = await oidc.refreshTokenGrant(tokens.config, tokens.refreshToken!);
      expect((await adminApi(porta, refreshed.access_token).get("/organizations")).status, label).toBe(200);
    }
  });
});

describe("organizations", () => {
  it("refuses a POST without the session's CSRF token and writes nothing", async () => {
    const { browser } = admin;
    const { csrf: otherCsrf } = await pageWithCsrf(second.browser, `${porta.baseUrl}/console/organizations/new`);
    const before = await dataFingerprint(porta);
    const slug = unique("csrf");
    for (const csrf of [undefined, "forged", "x".repeat(43)]) {
      const form: Record<string, string> = { name: "Forged", slug, defaultLoginMethods: "password", twoFactorPolicy: "optional", defaultLocale: "en" };
      if (csrf) form.csrf = csrf;
      const res = await browser.post(`${porta.baseUrl}/console/organizations/new`, form);
      expect(res.status).toBe(403);
      expect(await res.text()).toContain("This form has expired");
    }
    // Another session's token is no good either.
    const cross = await browser.post(`${porta.baseUrl}/console/organizations/new`, { csrf: otherCsrf, name: "Forged", slug });
    expect(cross.status).toBe(403);
    expect(await dataFingerprint(porta)).toEqual(before);
    expect(await orgBySlug(slug)).toBeNull();
  });

  it("starts the new-organization form from the defaults the Admin API and the CLI apply", async () => {
    const { html } = await pageWithCsrf(admin.browser, `${porta.baseUrl}/console/organizations/new`);
    const checkedMethods = [...html.matchAll(/<input[^>]*name="defaultLoginMethods"[^>]*>/g)].map((m) => m[0]).filter((tag) => /\bchecked\b/.test(tag)).map((tag) => /value="([^"]+)"/.exec(tag)?.[1]);
    // test/admin/organizations.test.ts holds the Admin API to the same two.
    expect(checkedMethods).toEqual(["password", "magic_link"]);
  });

  it("answers an intent that names a property every object has as an unknown action, writing nothing", async () => {
    const tenant = await createTenant(porta);
    const person = await createUser(porta.services.db.prisma, tenant.org.id, { email: `${unique("intent")}@porta.test` });
    const before = await dataFingerprint(porta);
    for (const url of [`/console/organizations/${tenant.org.id}/clients/${tenant.clientId}`, `/console/organizations/${tenant.org.id}/users/${person.id}`]) {
      const { csrf } = await pageWithCsrf(admin.browser, `${porta.baseUrl}${url}`);
      for (const intent of ["constructor", "toString", "__proto__"]) {
        const res = await admin.browser.post(`${porta.baseUrl}${url}`, { csrf, intent });
        expect(res.status, `${url} ${intent}`).toBe(400);
      }
    }
    expect(await dataFingerprint(porta)).toEqual(before);
  });

  it("shows field errors next to their fields and writes nothing for bad input", async () => {
    const { browser } = admin;
    const { csrf } = await pageWithCsrf(browser, `${porta.baseUrl}/console/organizations/new`);
    const before = await dataFingerprint(porta);
    const res = await browser.post(`${porta.baseUrl}/console/organizations/new`, { csrf, name: "", slug: "Not A Slug", twoFactorPolicy: "optional", defaultLocale: "en" });
    expect(res.status).toBe(422);
    const html = await res.text();
    expect(html).toMatch(/id="name-error"[^>]*>must not be empty</);
    expect(html).toMatch(/id="slug-error"[^>]*>may contain lower-case letters, digits and inner dashes only</);
    expect(html).toMatch(/id="defaultLoginMethods-error"[^>]*>needs at least one login method</);
    expect(html).toContain('aria-invalid="true"');
    expect(await dataFingerprint(porta)).toEqual(before);
  });

  it("creates an organization through the Admin API, audited as the signed-in admin; a taken slug is reported live and on submit", async () => {
    const { browser } = admin;
    const me = (await loadSession(porta.services, sessionIdOf(browser)))!;
    const { csrf } = await pageWithCsrf(browser, `${porta.baseUrl}/console/organizations/new`);
    const slug = unique("acme");
    const res = await browser.post(`${porta.baseUrl}/console/organizations/new`, {
      csrf,
      name: "Acme Console Ltd",
      slug,
      defaultLoginMethods: "magic_link",
      twoFactorPolicy: "required_totp",
      defaultLocale: "de",
    });
    expect(res.status).toBe(302);
    const org = (await orgBySlug(slug))!;
    expect(res.headers.get("location")).toBe(`/console/organizations/${org.id}?created=1`);
    expect(org).toMatchObject({ name: "Acme Console Ltd", defaultLoginMethods: ["magic_link"], twoFactorPolicy: "required_totp", defaultLocale: "de" });
    const audit = await porta.services.db.prisma.auditEntry.findFirst({ where: { eventType: "organization.created", targetId: org.id } });
    expect(audit).toMatchObject({ actorType: "admin", actorId: me.userId });

    const page = await browser.get(`${porta.baseUrl}${res.headers.get("location")!}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("The organization was created.");

    const live = await browser.get(`${porta.baseUrl}/console/organizations/validate-slug?slug=${slug}`);
    expect(await live.json()).toMatchObject({ slug, valid: true, available: false });
    const free = await browser.get(`${porta.baseUrl}/console/organizations/validate-slug?slug=${unique("free")}`);
    expect(await free.json()).toMatchObject({ valid: true, available: true });

    const again = await browser.post(`${porta.baseUrl}/console/organizations/new`, { csrf, name: "Copy", slug, defaultLoginMethods: "password", twoFactorPolicy: "optional", defaultLocale: "en" });
    expect(again.status).toBe(409);
    expect(await again.text()).toMatch(/id="slug-error"[^>]*>already taken</);

    const list = await browser.get(`${porta.baseUrl}/console/organizations?q=${slug}`);
    const listHtml = await list.text();
    expect(listHtml).toContain("Acme Console Ltd");
    expect(listHtml).toContain("1 organization<");
  });

  it("pages the organization list with the cursor", async () => {
    const prisma = porta.services.db.prisma;
    const prefix = unique("page");
    for (let i = 0; i < 23; i++) await prisma.organization.create({ data: { slug: `${prefix}-${String(i).padStart(2, "0")}`, name: `${prefix} ${String(i).padStart(2, "0")}` } });
    const { browser } = admin;
    const first = await (await browser.get(`${porta.baseUrl}/console/organizations?q=${prefix}`)).text();
    expect(first).toContain(`${prefix} 00`);
    expect(first).toContain(`${prefix} 19`);
    expect(first).not.toContain(`${prefix} 20`);
    const next = /<a rel="next"[^>]*href="([^"]+)"/.exec(first)![1]!.replaceAll("&amp;", "&");
    const second = await (await browser.get(`${porta.baseUrl}${next}`)).text();
    expect(second).toContain(`${prefix} 20`);
    expect(second).toContain(`${prefix} 22`);
    expect(second).not.toContain(`${prefix} 19`);
    expect(second).not.toContain('rel="next"');
  });

  it("saves an edit; a second editor with the old version gets the conflict view, not an overwrite", async () => {
    const org = await porta.services.db.prisma.organization.create({ data: { slug: unique("edit"), name: "Before" } });
    const alice = admin;
    const bob = second;
    const url = `${porta.baseUrl}/console/organizations/${org.id}`;
    const a = await pageWithCsrf(alice.browser, url);
    const b = await pageWithCsrf(bob.browser, url);
    const version = /name="version" value="(\d+)"/.exec(a.html)![1]!;
    expect(b.html).toContain(`name="version" value="${version}"`);

    const saved = await alice.browser.post(url, { csrf: a.csrf, intent: "update", version, name: "Alice's name", defaultLoginMethods: "password", twoFactorPolicy: "required_totp", defaultLocale: "en" });
    expect(saved.status).toBe(302);
    expect(saved.headers.get("location")).toBe(`/console/organizations/${org.id}?done=saved`);

    const stale = await bob.browser.post(url, { csrf: b.csrf, intent: "update", version, name: "Bob's name", defaultLoginMethods: "magic_link", twoFactorPolicy: "optional", defaultLocale: "en" });
    expect(stale.status).toBe(409);
    const html = await stale.text();
    expect(html).toContain("Changed by someone else");
    expect(html).toContain("Alice&#x27;s name");
    expect(html).toContain("Bob&#x27;s name");
    expect(html).toContain("Required: authenticator app");
    expect(html).toContain("Reload the current version");
    expect(await porta.services.db.prisma.organization.findUnique({ where: { id: org.id } })).toMatchObject({
      name: "Alice's name",
      defaultLoginMethods: ["password"],
      twoFactorPolicy: "required_totp",
    });

    // After reloading, Bob edits the current version.
    const reloaded = await pageWithCsrf(bob.browser, url);
    const current = /name="version" value="(\d+)"/.exec(reloaded.html)![1]!;
    expect(Number(current)).toBe(Number(version) + 1);
    const retry = await bob.browser.post(url, { csrf: reloaded.csrf, intent: "update", version: current, name: "Bob's name", defaultLoginMethods: "magic_link", twoFactorPolicy: "optional", defaultLocale: "en" });
    expect(retry.status).toBe(302);
    expect((await porta.services.db.prisma.organization.findUnique({ where: { id: org.id } }))!.name).toBe("Bob's name");
  });

  it("sets an organization's bot protection; a cost out of range is shown next to its field and not saved", async () => {
    const org = await porta.services.db.prisma.organization.create({ data: { slug: unique("bots"), name: "Bots" } });
    const url = `${porta.baseUrl}/console/organizations/${org.id}`;
    const page = await pageWithCsrf(admin.browser, url);
    expect(page.html).toMatch(/<select[^>]*name="botChallenge"/);
    expect(page.html).toMatch(/name="botChallengeCost"[^>]*value="50000"/);
    const version = /name="version" value="(\d+)"/.exec(page.html)![1]!;
    const fields = { csrf: page.csrf, intent: "update", version, name: "Bots", defaultLoginMethods: "password", twoFactorPolicy: "optional", defaultLocale: "en" };

    const bad = await admin.browser.post(url, { ...fields, botChallenge: "always", botChallengeCost: "12" });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toMatch(/id="botChallengeCost-error"[^>]*>must be at least 1000</);
    expect(await porta.services.db.prisma.organization.findUnique({ where: { id: org.id } })).toMatchObject({ botChallenge: "off", botChallengeCost: 50_000 });

    const saved = await admin.browser.post(url, { ...fields, botChallenge: "suspicion", botChallengeCost: "200000" });
    expect(saved.status).toBe(302);
    expect(await porta.services.db.prisma.organization.findUnique({ where: { id: org.id } })).toMatchObject({ botChallenge: "suspicion", botChallengeCost: 200_000 });
  });

  it("suspends, activates and deletes an organization", async () => {
    const org = await porta.services.db.prisma.organization.create({ data: { slug: unique("life"), name: "Lifecycle" } });
    const { browser } = admin;
    const url = `${porta.baseUrl}/console/organizations/${org.id}`;
    const { csrf, html } = await pageWithCsrf(browser, url);
    expect(html).toContain("Suspend Lifecycle? Its users can no longer sign in.");
    const status = async () => (await porta.services.db.prisma.organization.findUnique({ where: { id: org.id } }))!.status;

    expect((await browser.post(url, { csrf, intent: "suspend" })).headers.get("location")).toBe(`/console/organizations/${org.id}?done=suspend`);
    expect(await status()).toBe("suspended");
    expect((await browser.post(url, { csrf, intent: "activate" })).status).toBe(302);
    expect(await status()).toBe("active");
    expect((await browser.post(url, { csrf, intent: "delete" })).headers.get("location")).toBe("/console/organizations");
    expect(await status()).toBe("deleted");
    expect((await browser.get(url)).status).toBe(404);
  });
});

describe("keys and audit", () => {
  const activeKid = async (organizationId: string) =>
    (await porta.services.db.prisma.signingKey.findFirstOrThrow({ where: { organizationId, status: "active" } })).id;

  it("rotates one organization's signing key from its page, leaves the others alone, and finds the rotation in the audit log", async () => {
    const { browser } = admin;
    const org = await porta.services.db.prisma.organization.create({ data: { slug: unique("keys"), name: "Keys Org" } });
    const url = `${porta.baseUrl}/console/organizations/${org.id}/keys`;
    const { res: page, html, csrf } = await pageWithCsrf(browser, url);
    expect(page.status).toBe(200);
    const before = await activeKid(org.id);
    expect(html).toContain(before);
    const adminKid = await activeKid(porta.bootstrap.organizationId);
    expect(html).not.toContain(adminKid);

    const generated = await browser.post(url, { csrf, intent: "generate" });
    expect(generated.status).toBe(302);
    const staged = decodeURIComponent(/generated=([^&]+)/.exec(generated.headers.get("location")!)![1]!);
    expect((await porta.services.db.prisma.signingKey.findUniqueOrThrow({ where: { id: staged } })).status).toBe("staged");

    const res = await browser.post(url, { csrf, intent: "rotate" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toMatch(new RegExp(`^/console/organizations/${org.id}/keys\\?rotated=`));
    const kid = decodeURIComponent(/rotated=([^&]+)/.exec(res.headers.get("location")!)![1]!);
    expect(kid).toBe(staged);
    expect(await activeKid(org.id)).toBe(kid);
    expect(await activeKid(porta.bootstrap.organizationId)).toBe(adminKid);
    const keysPage = await (await browser.get(`${url}?rotated=${kid}`)).text();
    expect(keysPage).toContain(kid);
    expect(keysPage).toContain(before);

    const audit = await (await browser.get(`${porta.baseUrl}/console/audit?eventType=key.*`)).text();
    expect(audit).toContain("key.rotated");
    expect(audit).toContain(kid);
    expect(audit).not.toContain("organization.created");
    const bad = await browser.get(`${porta.baseUrl}/console/audit?eventType=${encodeURIComponent("not valid!")}`);
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain("must be an event type");
    expect((await browser.get(`${porta.baseUrl}/console/organizations/0190a000-0000-7000-8000-000000000000/keys`)).status).toBe(404);
  });

  it("lists every organization's keys, filters them by organization, and rotates them all", async () => {
    const { browser } = admin;
    const org = await porta.services.db.prisma.organization.create({ data: { slug: unique("allkeys"), name: "All Keys Org" } });
    const orgKid = await porta.services.keys.providerJwks(org.id).then((keys) => keys[0]!.kid);
    const adminKid = await activeKid(porta.bootstrap.organizationId);
    // Newest first: the key just created leads the list of every organization's keys.
    const all = await (await browser.get(`${porta.baseUrl}/console/keys`)).text();
    expect(all).toContain(orgKid);
    expect(all).toContain(`/console/organizations/${org.id}/keys`);
    const filtered = await pageWithCsrf(browser, `${porta.baseUrl}/console/keys?organizationId=${org.id}`);
    expect(filtered.res.status).toBe(200);
    expect(filtered.html).toContain(orgKid);
    expect(filtered.html).not.toContain(adminKid);

    const res = await browser.post(`${porta.baseUrl}/console/keys`, { csrf: filtered.csrf, intent: "rotate-all" });
    expect(res.status).toBe(302);
    const rotated = Number(/rotatedAll=(\d+)/.exec(res.headers.get("location")!)![1]);
    expect(rotated).toBe(await porta.services.db.prisma.organization.count({ where: { status: { not: "deleted" } } }));
    expect(await activeKid(org.id)).not.toBe(orgKid);
    expect(await activeKid(porta.bootstrap.organizationId)).not.toBe(adminKid);
    // The console session keeps working: its token was signed with the previous, still published key.
    const after = await browser.get(`${porta.baseUrl}/console/keys?rotatedAll=${rotated}`);
    expect(after.status).toBe(200);
    expect(await after.text()).toContain(await activeKid(porta.bootstrap.organizationId));
  });
});

describe("users", () => {
  it("previews an invitation without writing it, then sends it; bad input stays next to its field", async () => {
    const org = await porta.services.db.prisma.organization.create({ data: { slug: unique("invite"), name: "Invite Org" } });
    const existing = await createUser(porta.services.db.prisma, org.id, { email: "existing@invite.example" });
    const url = `${porta.baseUrl}/console/organizations/${org.id}/users`;
    const { csrf, html } = await pageWithCsrf(admin.browser, url);
    expect(html).toContain(existing.email);

    const bad = await admin.browser.post(url, { csrf, intent: "invite", email: "not an address" });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toMatch(/id="email-error"/);

    const before = await porta.services.db.prisma.invitation.count();
    const preview = await admin.browser.post(url, { csrf, intent: "preview", email: "new.person@invite.example", givenName: "Nina", locale: "" });
    expect(preview.status).toBe(200);
    const previewHtml = await preview.text();
    expect(previewHtml).toContain("Invitation preview");
    expect(previewHtml).toContain("To: new.person@invite.example");
    expect(await porta.services.db.prisma.invitation.count()).toBe(before);

    const sent = await admin.browser.post(url, { csrf, intent: "invite", email: "new.person@invite.example", givenName: "Nina", locale: "de" });
    expect(sent.status).toBe(200);
    expect(await sent.text()).toContain("An invitation was sent to new.person@invite.example.");
    expect(await porta.services.db.prisma.invitation.count()).toBe(before + 1);
    const audit = await porta.services.db.prisma.auditEntry.findFirst({ where: { eventType: "user.invited", organizationId: org.id } });
    expect(audit?.actorType).toBe("admin");
  });

  it("deactivates and activates a user and resets their two-factor, each after a confirmation", async () => {
    const org = await porta.services.db.prisma.organization.create({ data: { slug: unique("people"), name: "People Org" } });
    const user = await createUser(porta.services.db.prisma, org.id, { email: "person@people.example" });
    const url = `${porta.baseUrl}/console/organizations/${org.id}/users/${user.id}`;
    const { csrf, html } = await pageWithCsrf(admin.browser, url);
    expect(html).toContain("Deactivate person@people.example? Their sessions and tokens end at once.");
    const status = async () => (await porta.services.db.prisma.user.findUnique({ where: { id: user.id } }))!.status;

    const off = await admin.browser.post(url, { csrf, intent: "deactivate" });
    expect(off.headers.get("location")).toBe(`/console/organizations/${org.id}/users/${user.id}?done=deactivate`);
    expect(await status()).toBe("inactive");
    expect(await (await admin.browser.get(`${porta.baseUrl}${off.headers.get("location")!}`)).text()).toContain("The user was deactivated.");
    expect((await admin.browser.post(url, { csrf, intent: "activate" })).status).toBe(302);
    expect(await status()).toBe("active");
    expect((await admin.browser.post(url, { csrf, intent: "resetTwoFactor" })).status).toBe(302);
    expect(await porta.services.db.prisma.auditEntry.findFirst({ where: { eventType: "user.2fa.reset", targetId: user.id } })).not.toBeNull();
    expect((await admin.browser.post(url, { csrf, intent: "dropTables" })).status).toBe(400);
  });

  it("reports a user's password compromised after a confirmation: the password goes and the page says so", async () => {
    const prisma = porta.services.db.prisma;
    const org = await prisma.organization.create({ data: { slug: unique("breached"), name: "Breached Org" } });
    const user = await createUser(prisma, org.id, { email: "leaked@people.example", password: "a long leaked password 4" });
    const url = `${porta.baseUrl}/console/organizations/${org.id}/users/${user.id}`;
    const { csrf, html } = await pageWithCsrf(admin.browser, url);
    expect(html).toContain("Report password compromised");
    expect(html).toContain("Report the password of leaked@people.example as compromised?");
    const reported = await admin.browser.post(url, { csrf, intent: "reportCompromised" });
    expect(reported.headers.get("location")).toBe(`/console/organizations/${org.id}/users/${user.id}?done=reportCompromised`);
    const after = await (await admin.browser.get(`${porta.baseUrl}${reported.headers.get("location")!}`)).text();
    expect(after).toContain("The password was reported compromised: it was removed and the sessions ended.");
    // No password, so no button to report it again.
    expect(after).not.toContain("Report password compromised");
    expect((await prisma.user.findUniqueOrThrow({ where: { id: user.id } })).passwordHash).toBeNull();
    expect(await prisma.auditEntry.findFirst({ where: { eventType: "user.credential_compromised", targetId: user.id } })).toMatchObject({ actorType: "admin", data: { credentialType: "password" } });
  });
});

describe("a user's password, roles, sessions and data", () => {
  it("sets and removes a password, assigns and removes a role, ends every session and downloads the export", async () => {
    const tenant = await createTenant(porta);
    const prisma = porta.services.db.prisma;
    const user = await createUser(prisma, tenant.org.id, { email: "full@people.example", password: PASSWORD });
    const permission = await prisma.permission.create({ data: { organizationId: tenant.org.id, name: "orders:write" } });
    const role = await prisma.role.create({ data: { organizationId: tenant.org.id, name: "buyer", permissions: { create: { permissionId: permission.id } } } });
    const url = `${porta.baseUrl}/console/organizations/${tenant.org.id}/users/${user.id}`;
    const { csrf } = await pageWithCsrf(admin.browser, url);

    const weak = await admin.browser.post(url, { csrf, intent: "setPassword", password: "short" });
    expect(weak.status).toBe(422);
    const strong = await admin.browser.post(url, { csrf, intent: "setPassword", password: "a brand new long password 9" });
    expect(strong.headers.get("location")).toContain("done=setPassword");
    await signIn(tenant, { email: user.email, password: "a brand new long password 9" });

    expect((await admin.browser.post(url, { csrf, intent: "assignRole", roleId: role.id })).status).toBe(302);
    const withRole = await (await admin.browser.get(url)).text();
    expect(withRole).toContain("Remove buyer");
    expect(withRole).toMatch(/<code>orders:write<\/code> <span class="muted">\(buyer\)<\/span>/);
    expect((await admin.browser.post(url, { csrf, intent: "removeRole", roleId: role.id })).status).toBe(302);
    expect(await prisma.userRole.count({ where: { userId: user.id } })).toBe(0);

    const signedIn = await signIn(tenant, { email: user.email, password: "a brand new long password 9" });
    expect((await admin.browser.post(url, { csrf, intent: "revokeSessions" })).status).toBe(302);
    expect(await userinfoStatus(tenant, signedIn.accessToken)).toBe(401);

    const exported = await admin.browser.get(`${url}/export`);
    expect(exported.headers.get("content-disposition")).toBe(`attachment; filename="user-${user.id}.json"`);
    expect(JSON.stringify(await exported.json())).toContain(user.email);

    expect((await admin.browser.post(url, { csrf, intent: "clearPassword" })).status).toBe(302);
    expect((await prisma.user.findUnique({ where: { id: user.id } }))!.passwordHash).toBeNull();
    expect(await porta.services.db.prisma.auditEntry.count({ where: { targetId: user.id, actorType: "admin" } })).toBeGreaterThanOrEqual(5);
  });
});

describe("clients", () => {
  it("creates a confidential client whose secret is shown once and works; the list shows inherited and overridden login methods", async () => {
    const org = await porta.services.db.prisma.organization.create({ data: { slug: unique("apps"), name: "Apps Org", defaultLoginMethods: ["password"] } });
    const url = `${porta.baseUrl}/console/organizations/${org.id}/clients`;
    const { csrf } = await pageWithCsrf(admin.browser, url);

    const bad = await admin.browser.post(url, { csrf, name: "Bad", clientType: "confidential", redirectUris: "javascript:alert(1)", loginMode: "inherit" });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toMatch(/id="redirectUris-error"[^>]*>uses a forbidden URL scheme</);

    const created = await admin.browser.post(url, { csrf, name: "Web Shop", clientType: "confidential", redirectUris: "https://shop.example/cb", loginMode: "inherit", loginMethods: "password" });
    expect(created.status).toBe(200);
    expect(created.headers.get("cache-control")).toBe("no-store");
    const html = await created.text();
    expect(html).toContain("Client secret — shown only once");
    const secret = /id="client-secret"[^>]*value="([^"]+)"/.exec(html)![1]!;
    const client = (await porta.services.db.prisma.client.findFirst({ where: { organizationId: org.id, name: "Web Shop" } }))!;
    expect(client.redirectUris).toEqual(["https://shop.example/cb"]);
    expect(client.loginMethods).toEqual([]);

    // The secret authenticates the client; a wrong one does not.
    const introspect = (password: string) =>
      fetch(`${porta.baseUrl}/${org.slug}/token/introspection`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${Buffer.from(`${client.id}:${password}`).toString("base64")}` },
        body: "token=unknown",
      });
    expect((await introspect(secret)).status).toBe(200);
    expect((await introspect(`${secret}x`)).status).toBe(401);

    await admin.browser.post(url, { csrf, name: "Magic App", clientType: "public", redirectUris: "https://magic.example/cb", loginMode: "override", loginMethods: "magic_link" });
    const page = await (await admin.browser.get(url)).text();
    expect(page).not.toContain(secret);
    expect(page).toContain("Inherits organization default (Password)");
    expect(page).toContain("Override: Magic link");

    // Deactivate the confidential client: it can no longer authenticate. The public one goes back to the default.
    expect(page).toContain("Deactivate Web Shop? It can no longer obtain tokens until it is activated again.");
    expect((await admin.browser.post(url, { csrf, intent: "deactivate", clientId: client.id })).headers.get("location")).toContain("done=deactivate");
    expect((await introspect(secret)).status).toBe(401);
    const magic = (await porta.services.db.prisma.client.findFirst({ where: { organizationId: org.id, name: "Magic App" } }))!;
    expect((await admin.browser.post(url, { csrf, intent: "inherit", clientId: magic.id })).status).toBe(302);
    expect((await porta.services.db.prisma.client.findUnique({ where: { id: magic.id } }))!.loginMethods).toEqual([]);
  });
});

describe("sessions and configuration", () => {
  it("lists a person's sessions and revokes one after a confirmation", async () => {
    const tenant = await createTenant(porta);
    const user = await createUser(porta.services.db.prisma, tenant.org.id, { email: "sessioned@people.example", password: PASSWORD });
    await signIn(tenant, { email: user.email, password: PASSWORD });
    const url = `${porta.baseUrl}/console/sessions?userId=${user.id}`;
    const { html, csrf } = await pageWithCsrf(admin.browser, url);
    expect(html).toContain("Revoke this session? The person is signed out at once.");
    const sessionId = /name="sessionId" value="([^"]+)"/.exec(html)![1]!;
    const revoked = await admin.browser.post(url, { csrf, intent: "revoke", sessionId });
    expect(revoked.status).toBe(302);
    expect(revoked.headers.get("location")).toBe(`/console/sessions?userId=${user.id}&done=revoked`);
    const after = await (await admin.browser.get(`${porta.baseUrl}${revoked.headers.get("location")!}`)).text();
    expect(after).toContain("The session was revoked.");
    expect(after).not.toContain(sessionId);
    expect(await porta.services.db.prisma.auditEntry.findFirst({ where: { eventType: "session.revoked", targetId: user.id } })).not.toBeNull();
  });

  it("changes a configuration value; an out-of-range one is shown next to its field and not saved", async () => {
    const url = `${porta.baseUrl}/console/config`;
    const { html, csrf } = await pageWithCsrf(admin.browser, url);
    expect(html).toContain("auth.passwordMinLength");
    const bad = await admin.browser.post(url, { csrf, intent: "set", key: "auth.passwordMinLength", value: "3" });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toMatch(/id="value-\d+-error"[^>]*>Too small/);
    expect(await porta.services.settings.get("auth.passwordMinLength")).not.toBe(3);
    const ok = await admin.browser.post(url, { csrf, intent: "set", key: "auth.passwordMinLength", value: "14" });
    expect(ok.headers.get("location")).toBe("/console/config?saved=auth.passwordMinLength");
    expect(await porta.services.settings.get("auth.passwordMinLength")).toBe(14);
  });
});

describe("applications, roles and permissions", () => {
  it("creates and deactivates an application; a bad name stays next to its field", async () => {
    const org = await porta.services.db.prisma.organization.create({ data: { slug: unique("apps"), name: "Apps Org" } });
    const url = `${porta.baseUrl}/console/organizations/${org.id}/applications`;
    const { csrf } = await pageWithCsrf(admin.browser, url);
    const bad = await admin.browser.post(url, { csrf, intent: "create", name: "  " });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toMatch(/id="name-error"[^>]*>must not be empty</);
    const created = await admin.browser.post(url, { csrf, intent: "create", name: "Shop", description: "The web shop" });
    expect(created.headers.get("location")).toBe(`/console/organizations/${org.id}/applications?done=created`);
    const app = (await porta.services.db.prisma.application.findFirst({ where: { organizationId: org.id, name: "Shop" } }))!;
    expect(app.description).toBe("The web shop");
    const page = await (await admin.browser.get(url)).text();
    expect(page).toContain("Deactivate Shop?");
    expect((await admin.browser.post(url, { csrf, intent: "deactivate", applicationId: app.id })).status).toBe(302);
    expect((await porta.services.db.prisma.application.findUnique({ where: { id: app.id } }))!.status).toBe("inactive");
  });

  it("creates a permission and a role holding it", async () => {
    const org = await porta.services.db.prisma.organization.create({ data: { slug: unique("rbac"), name: "Rbac Org" } });
    const url = `${porta.baseUrl}/console/organizations/${org.id}/roles`;
    const { csrf } = await pageWithCsrf(admin.browser, url);
    const bad = await admin.browser.post(url, { csrf, intent: "createPermission", permissionName: "no spaces allowed" });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toMatch(/id="permissionName-error"[^>]*>may contain letters/);
    expect((await admin.browser.post(url, { csrf, intent: "createPermission", permissionName: "orders:read" })).status).toBe(302);
    const permission = (await porta.services.db.prisma.permission.findFirst({ where: { organizationId: org.id, name: "orders:read" } }))!;
    const page = await (await admin.browser.get(url)).text();
    expect(page).toContain(`value="${permission.id}"`);
    expect((await admin.browser.post(url, { csrf, intent: "createRole", name: "clerk", permissionIds: permission.id })).status).toBe(302);
    const listed = await (await admin.browser.get(url)).text();
    expect(listed).toMatch(/<code>clerk<\/code><\/a><\/td><td><\/td><td>orders:read<\/td>/);
  });
});

describe("branding", () => {
  it("saves colours (a bad one stays next to its field), uploads a logo, and the login page shows both", async () => {
    const tenant = await createTenant(porta);
    const url = `${porta.baseUrl}/console/organizations/${tenant.org.id}/branding`;
    const { csrf, html } = await pageWithCsrf(admin.browser, url);
    expect(html).toContain("Live preview of the login page");
    const version = /name="version" value="(\d+)"/.exec(html)![1]!;

    const bad = await admin.browser.post(url, { csrf, intent: "save", version, primaryColor: "red" });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toMatch(/id="primaryColor-error"[^>]*>must be a hex colour/);
    const saved = await admin.browser.post(url, { csrf, intent: "save", version, primaryColor: "#aa3300", displayName: "Brand Name", footerText: "Footer words" });
    expect(saved.headers.get("location")).toBe(`/console/organizations/${tenant.org.id}/branding?done=saved`);
    const stale = await admin.browser.post(url, { csrf, intent: "save", version, primaryColor: "#000000" });
    expect(stale.status).toBe(409);
    expect(await stale.text()).toContain("Reload the current version");

    const upload = await uploadLogo(admin, url, csrf);
    expect(upload.status).toBe(302);
    expect(upload.headers.get("location")).toBe(`/console/organizations/${tenant.org.id}/branding?done=uploaded`);

    const login = await startAuthorization({ issuer: tenant.issuer, clientId: tenant.clientId, clientSecret: tenant.secret, redirectUri: RP_CALLBACK });
    const loginHtml = await (await login.browser.get(login.interactionUrl)).text();
    expect(loginHtml).toContain("--porta-primary:#aa3300");
    expect(loginHtml).toContain("Footer words");
    expect(loginHtml).toMatch(/<img src="[^"]+" alt="Brand Name" class="brand-logo"/);

    const tooBig = await fetch(url, { method: "POST", body: "x".repeat(2 * 1024 * 1024), redirect: "manual", headers: { cookie: admin.browser.cookieHeader(url), "content-type": "application/x-www-form-urlencoded" } });
    expect(tooBig.status).toBe(413);
    expect(tooBig.headers.get("connection")).toBe("close");
  });
});

describe("branding: one Save", () => {
  it("uploads the file chosen beside the settings when Save is pressed, and keeps the settings", async () => {
    const tenant = await createTenant(porta);
    const url = `${porta.baseUrl}/console/organizations/${tenant.org.id}/branding`;
    const { csrf, html } = await pageWithCsrf(admin.browser, url);
    expect(html).toMatch(/enctype="multipart\/form-data"/i);
    const version = /name="version" value="(\d+)"/.exec(html)![1]!;
    const form = new FormData();
    for (const [name, value] of Object.entries({ csrf, intent: "save", version, displayName: "Saved With Logo", primaryColor: "#114477", kind: "logo" })) form.set(name, value);
    form.set("file", new Blob([TINY_PNG], { type: "image/png" }), "logo.png");
    const saved = await fetch(url, { method: "POST", body: form, redirect: "manual", headers: { cookie: admin.browser.cookieHeader(url) } });
    expect(saved.status).toBe(302);
    expect(saved.headers.get("location")).toBe(`/console/organizations/${tenant.org.id}/branding?done=saved`);
    const login = await startAuthorization({ issuer: tenant.issuer, clientId: tenant.clientId, clientSecret: tenant.secret, redirectUri: RP_CALLBACK });
    const loginHtml = await (await login.browser.get(login.interactionUrl)).text();
    expect(loginHtml).toContain("--porta-primary:#114477");
    expect(loginHtml).toMatch(/<img src="[^"]+" alt="Saved With Logo" class="brand-logo"/);
  });
});

describe("exports and imports", () => {
  it("downloads an export, previews its import under a new slug without writing, then applies it once", async () => {
    // No clients: client ids are global, so a package with clients imports only where they are not taken.
    const org = await porta.services.db.prisma.organization.create({ data: { slug: unique("exported"), name: "Exported Org" } });
    const tenant = { org };
    await createUser(porta.services.db.prisma, org.id, { email: "exported@people.example" });
    const exported = await admin.browser.get(`${porta.baseUrl}/console/organizations/${tenant.org.id}/export`);
    expect(exported.status).toBe(200);
    expect(exported.headers.get("content-disposition")).toMatch(new RegExp(`^attachment; filename="porta-${tenant.org.slug}-\\d{4}-\\d{2}-\\d{2}\\.json"$`));
    const packageText = await exported.text();

    const url = `${porta.baseUrl}/console/imports`;
    const { csrf } = await pageWithCsrf(admin.browser, url);
    const post = (fields: Record<string, string>, file?: string) => {
      const form = new FormData();
      for (const [k, v] of Object.entries(fields)) form.set(k, v);
      if (file !== undefined) form.set("file", new Blob([file], { type: "application/json" }), "package.json");
      return fetch(url, { method: "POST", body: form, redirect: "manual", headers: { cookie: admin.browser.cookieHeader(url) } });
    };

    // The package is signed: a changed byte is refused.
    const forged = await post({ csrf, intent: "preview", slug: "" }, packageText.replace('"exported@people.example"', '"renamed@people.example"'));
    expect(forged.status).toBe(422);
    const same = await post({ csrf, intent: "preview", slug: "" }, packageText);
    expect(same.status).toBe(200);
    expect(await same.text()).toContain(`Organization ${tenant.org.slug}: unchanged.`);

    const notJson = await post({ csrf, intent: "preview", slug: "" }, "{ not json");
    expect(notJson.status).toBe(422);
    expect(await notJson.text()).toContain("This file is not JSON.");

    const slug = unique("imported");
    const preview = await post({ csrf, intent: "preview", slug }, packageText);
    expect(preview.status).toBe(200);
    const previewHtml = await preview.text();
    expect(previewHtml).toContain(`Organization ${slug}: create.`);
    expect(previewHtml).toContain("exported@people.example");
    expect(await orgBySlug(slug)).toBeNull();
    const token = /name="token" value="([^"]+)"/.exec(previewHtml)![1]!;

    const applied = await post({ csrf, intent: "apply", token, slug });
    expect(applied.status).toBe(200);
    expect(await applied.text()).toContain("The import was applied");
    const imported = (await orgBySlug(slug))!;
    expect(await porta.services.db.prisma.user.count({ where: { organizationId: imported.id, email: "exported@people.example" } })).toBe(1);

    // The previewed package is applied once; a second apply with the same token finds nothing.
    const again = await post({ csrf, intent: "apply", token, slug });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain("The preview expired.");
  });
});

describe("bulk operations from CSV", () => {
  it("runs a file all-or-nothing (a bad row changes nothing and is named by its line), then best effort with a result per row", async () => {
    const prisma = porta.services.db.prisma;
    const org = await prisma.organization.create({ data: { slug: unique("bulk"), name: "Bulk Org" } });
    const leaving = await createUser(prisma, org.id, { email: "leaving@bulk.example" });
    const url = `${porta.baseUrl}/console/organizations/${org.id}/bulk`;
    const { csrf, html } = await pageWithCsrf(admin.browser, url);
    expect(html).toContain("Bulk operations");
    const post = (csv: string, mode: string) => {
      const form = new FormData();
      form.set("csrf", csrf);
      form.set("mode", mode);
      form.set("file", new Blob([csv], { type: "text/csv" }), "ops.csv");
      return fetch(url, { method: "POST", body: form, redirect: "manual", headers: { cookie: admin.browser.cookieHeader(url) } });
    };
    const csv = [
      "op,email,givenName,familyName,userId",
      'create,new.person@bulk.example,New,"Person, Jr.",',
      `deactivate,,,,${leaving.id}`,
      "create,not-an-email,,,",
    ].join("\n");

    const refused = await post(csv, "all_or_nothing");
    expect(refused.status).toBe(422);
    const refusedHtml = await refused.text();
    expect(refusedHtml).toContain("Nothing was changed");
    expect(refusedHtml).toMatch(/Line 4:(<!-- -->)?\s*<code>email<\/code>\s*(<!-- -->)?must be an email address/);
    expect(await prisma.user.count({ where: { organizationId: org.id, email: "new.person@bulk.example" } })).toBe(0);
    expect((await prisma.user.findUniqueOrThrow({ where: { id: leaving.id } })).status).toBe("active");

    // A malformed row refuses the whole file in either mode; in best effort, rows that fail when
    // they run (here: an email already taken) are reported one by one.
    const malformedBestEffort = await post(csv, "best_effort");
    expect(malformedBestEffort.status).toBe(422);
    const partial = await post(csv.replace("create,not-an-email,,,", "create,leaving@bulk.example,,,"), "best_effort");
    expect(partial.status).toBe(200);
    const partialHtml = await partial.text();
    expect(partialHtml).toContain("2 succeeded, 1 failed");
    expect(partialHtml).toContain("new.person@bulk.example");
    const created = await prisma.user.findFirstOrThrow({ where: { organizationId: org.id, email: "new.person@bulk.example" } });
    expect(created.familyName).toBe("Person, Jr.");
    expect((await prisma.user.findUniqueOrThrow({ where: { id: leaving.id } })).status).toBe("inactive");

    const badColumns = await post("op,password\ncreate,hunter2\n", "best_effort");
    expect(badColumns.status).toBe(422);
    expect(await badColumns.text()).toContain("Unknown or missing columns: password.");
  });
});

describe("custom claims", () => {
  it("defines a claim on an application and sets and removes a user's typed value", async () => {
    const prisma = porta.services.db.prisma;
    const org = await prisma.organization.create({ data: { slug: unique("claims"), name: "Claims Org" } });
    const app = await prisma.application.create({ data: { organizationId: org.id, name: "Portal" } });
    const user = await createUser(prisma, org.id, { email: "claimed@people.example" });
    const appUrl = `${porta.baseUrl}/console/organizations/${org.id}/applications/${app.id}`;
    const { csrf } = await pageWithCsrf(admin.browser, appUrl);

    const bad = await admin.browser.post(appUrl, { csrf, claimName: "sub", claimType: "number", scope: "portal" });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toMatch(/id="claimName-error"/);
    expect((await admin.browser.post(appUrl, { csrf, claimName: "seat_limit", claimType: "number", scope: "portal" })).headers.get("location")).toContain("done=claim");
    const claim = (await prisma.customClaimDefinition.findFirst({ where: { applicationId: app.id, claimName: "seat_limit" } }))!;

    const userUrl = `${porta.baseUrl}/console/organizations/${org.id}/users/${user.id}`;
    const page = await pageWithCsrf(admin.browser, userUrl);
    const option = `${app.id}:${claim.id}:number`;
    expect(page.html).toContain(`value="${option}"`);
    expect((await admin.browser.post(userUrl, { csrf: page.csrf, intent: "setClaim", claim: option, claimValue: "42" })).status).toBe(302);
    expect((await prisma.customClaimValue.findFirst({ where: { claimId: claim.id, userId: user.id } }))!.value).toBe(42);
    const wrongType = await admin.browser.post(userUrl, { csrf: page.csrf, intent: "setClaim", claim: option, claimValue: "many" });
    expect(wrongType.status).toBe(422);
    expect((await admin.browser.post(userUrl, { csrf: page.csrf, intent: "deleteClaim", claim: `${app.id}:${claim.id}` })).status).toBe(302);
    expect(await prisma.customClaimValue.count({ where: { claimId: claim.id, userId: user.id } })).toBe(0);
  });
});
