import { createHash, randomBytes } from "node:crypto";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resources } from "~/i18n/config";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { csrfOf } from "../support/browser";
import { createClient, createOrganization, createUser } from "../support/factories";
import { CookieJar } from "../support/oidc";
import { freePort, startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, escapeHtml, mainOf, PASSWORD, type Tenant } from "../login/helpers";

/**
 * Decision 046: signing in with another identity provider. A second Porta organization is the
 * upstream OpenID provider (real discovery, login pages, tokens, JWKS); the organization under
 * test signs its people in through it. Everything a browser does goes through real HTTP with a
 * cookie jar that keeps cookies by name and path, as browsers do.
 */

type Messages = (typeof resources)["en"]["login"];
const text = (language: "en" | "de", pick: (m: Messages) => string, provider: string) => escapeHtml(pick(resources[language].login as Messages).replaceAll("{{provider}}", provider));

interface Federation {
  upstream: { id: string; slug: string };
  upstreamClient: { id: string; secret: string };
  down: Tenant;
  providerId: string;
  providerName: string;
  domain: string;
}

interface Flow {
  jar: CookieJar;
  config: oidc.Configuration;
  verifier: string;
  loginUrl: string;
  html: string;
}

describe("federation: sign in with another identity provider", () => {
  let porta: TestPorta;
  let api: ReturnType<typeof adminApi>;
  const prisma = () => porta.services.db.prisma;

  beforeAll(async () => {
    // The upstream is this same Porta on 127.0.0.1: outbound requests may reach it only because the test allows private networks.
    porta = await startTestPorta({ env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: "true" } });
    api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  });
  afterAll(async () => {
    await porta.stop();
  });

  async function federation(
    options: { createAccounts?: boolean; domains?: boolean; trustUpstreamMfa?: string; clientMethods?: string[]; issuer?: string; claimMapping?: Record<string, string> } = {},
  ): Promise<Federation> {
    const upstream = await createOrganization(prisma(), { defaultLoginMethods: ["password"] });
    const down = await createTenant(porta, { defaultLoginMethods: ["password", "magic_link", "federated"], clientLoginMethods: options.clientMethods ?? [], client: { skipConsent: true } });
    const { client, secret } = await createClient(prisma(), upstream.id, { redirectUris: [`${porta.baseUrl}/${down.org.slug}/federation/callback`], skipConsent: true });
    const domain = `corp-${randomBytes(3).toString("hex")}.test`;
    const providerName = `Upstream ${randomBytes(2).toString("hex")}`;
    const created = await api.post<{ id: string; hasClientSecret: boolean; callbackUrl: string }>("/identity-providers", {
      organizationId: down.org.id,
      name: providerName,
      issuer: options.issuer ?? `${porta.baseUrl}/${upstream.slug}`,
      clientId: client.id,
      clientSecret: secret!.value,
      ...(options.domains ? { domains: [domain] } : {}),
      createAccounts: options.createAccounts ?? false,
      ...(options.trustUpstreamMfa ? { trustUpstreamMfa: options.trustUpstreamMfa } : {}),
      ...(options.claimMapping ? { claimMapping: options.claimMapping } : {}),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.callbackUrl).toBe(`${porta.baseUrl}/${down.org.slug}/federation/callback`);
    return { upstream, upstreamClient: { id: client.id, secret: secret!.value }, down, providerId: created.body.id, providerName, domain };
  }

  /** The relying party sends a browser to the organization under test; the login page it lands on. */
  async function openLogin(f: Federation, headers: Record<string, string> = {}): Promise<Flow> {
    const jar = new CookieJar();
    const config = await oidc.discovery(new URL(f.down.issuer), f.down.client.id, undefined, oidc.ClientSecretBasic(f.down.secret!), { execute: [oidc.allowInsecureRequests] });
    const verifier = oidc.randomPKCECodeVerifier();
    const authorize = oidc.buildAuthorizationUrl(config, {
      redirect_uri: f.down.redirectUri,
      scope: "openid email profile",
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
    });
    const started = await jar.fetch(authorize, { headers });
    expect(started.status).toBe(303);
    const loginUrl = new URL(started.headers.get("location")!, authorize).href;
    const page = await jar.fetch(loginUrl, { headers });
    expect(page.status).toBe(200);
    return { jar, config, verifier, loginUrl, html: await page.text() };
  }

  const post = (jar: CookieJar, url: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
    jar.fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body: new URLSearchParams(form).toString() });

  /** Follows redirects until `stop` says so or a page answers. */
  async function follow(jar: CookieJar, res: Response, from: string, stop: (url: string) => boolean = () => false, headers: Record<string, string> = {}) {
    let current = res;
    let url = from;
    for (let i = 0; i < 12 && current.status >= 300 && current.status < 400; i++) {
      url = new URL(current.headers.get("location")!, url).href;
      if (stop(url)) return { res: current, url };
      await current.body?.cancel();
      current = await jar.fetch(url, { headers });
    }
    return { res: current, url };
  }

  const isCallback = (f: Federation) => (url: string) => url.startsWith(`${porta.baseUrl}/${f.down.org.slug}/federation/callback`);

  /** From the redirect to the upstream: signs in there with email and password, and stops at the callback. */
  async function signInUpstream(f: Federation, flow: Flow, toUpstream: Response, email: string): Promise<URL> {
    expect(toUpstream.status).toBe(303);
    const authorize = new URL(toUpstream.headers.get("location")!);
    expect(authorize.href.startsWith(`${porta.baseUrl}/${f.upstream.slug}/auth/authorize`)).toBe(true);
    // state, nonce and PKCE on every upstream request.
    expect(authorize.searchParams.get("state")).toBeTruthy();
    expect(authorize.searchParams.get("nonce")).toBeTruthy();
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorize.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorize.searchParams.get("redirect_uri")).toBe(`${porta.baseUrl}/${f.down.org.slug}/federation/callback`);
    const toLogin = await follow(flow.jar, toUpstream, flow.loginUrl, (u) => u.includes("/interaction/"));
    const upstreamLogin = toLogin.url;
    const page = await flow.jar.fetch(upstreamLogin);
    const html = await page.text();
    const posted = await post(flow.jar, upstreamLogin, { csrf: csrfOf(html), email, password: PASSWORD });
    if (posted.status !== 302 && posted.status !== 303) throw new Error(`upstream login answered ${posted.status}: ${await posted.text()}`);
    const reached = await follow(flow.jar, posted, upstreamLogin, isCallback(f));
    expect(reached.url.startsWith(`${porta.baseUrl}/${f.down.org.slug}/federation/callback`), reached.url).toBe(true);
    return new URL(reached.url);
  }

  /** From the callback to the relying party's redirect URI, or to the page that stopped on the way. */
  async function back(f: Federation, flow: Flow, callback: URL, headers: Record<string, string> = {}) {
    const res = await flow.jar.fetch(callback, { headers });
    return follow(flow.jar, res, callback.href, (u) => u.startsWith(f.down.redirectUri), headers);
  }

  async function redeem(flow: Flow, url: string) {
    const tokens = await oidc.authorizationCodeGrant(flow.config, new URL(url), { pkceCodeVerifier: flow.verifier });
    return tokens.claims()!;
  }

  const startWithButton = (f: Federation, flow: Flow) => post(flow.jar, `${flow.loginUrl}/federated`, { csrf: csrfOf(flow.html), provider: f.providerId });

  const audit = (organizationId: string, eventType: string) => prisma().auditEntry.findMany({ where: { organizationId, eventType }, orderBy: { createdAt: "asc" } });

  it("creates the account just in time, signs in with amr fed, and audits the method and the provider", async () => {
    const f = await federation({ createAccounts: true });
    const person = await createUser(prisma(), f.upstream.id, { email: `new-${randomBytes(3).toString("hex")}@example.com`, givenName: "Grace", familyName: "Hopper" });
    const flow = await openLogin(f);
    // The login page has a button for the provider.
    expect(mainOf(flow.html)).toContain(text("en", (m) => m.signIn.federated, f.providerName));
    const callback = await signInUpstream(f, flow, await startWithButton(f, flow), person.email);
    const end = await back(f, flow, callback);
    expect(end.url.startsWith(f.down.redirectUri), end.url).toBe(true);
    const claims = await redeem(flow, end.url);
    const created = await prisma().user.findFirstOrThrow({ where: { organizationId: f.down.org.id, email: person.email } });
    expect(claims.sub).toBe(created.id);
    expect(claims.amr).toEqual(["fed"]);
    expect(created).toMatchObject({ givenName: "Grace", familyName: "Hopper", emailVerified: true, passwordHash: null });
    const link = await prisma().federatedIdentity.findFirstOrThrow({ where: { userId: created.id } });
    expect(link).toMatchObject({ providerId: f.providerId, subject: person.id });
    const [success] = await audit(f.down.org.id, "auth.login.success");
    expect(success?.data).toMatchObject({ method: "federated", providerId: f.providerId, provider: f.providerName, clientId: f.down.client.id });
    expect(await audit(f.down.org.id, "user.created")).toHaveLength(1);
  });

  it("links an existing account by an email the upstream asserts verified, then signs in by the link", async () => {
    const f = await federation();
    const email = `ada-${randomBytes(3).toString("hex")}@example.com`;
    await createUser(prisma(), f.upstream.id, { email, emailVerified: true });
    const local = await createUser(prisma(), f.down.org.id, { email, emailVerified: false });
    for (let round = 0; round < 2; round++) {
      const flow = await openLogin(f);
      const end = await back(f, flow, await signInUpstream(f, flow, await startWithButton(f, flow), email));
      expect(end.url.startsWith(f.down.redirectUri), end.url).toBe(true);
      expect((await redeem(flow, end.url)).sub).toBe(local.id);
    }
    expect(await prisma().federatedIdentity.count({ where: { userId: local.id } })).toBe(1);
    expect(await audit(f.down.org.id, "user.federated_identity.linked")).toHaveLength(1);
    expect((await prisma().user.findUniqueOrThrow({ where: { id: local.id } })).emailVerified).toBe(true);
    // The link is listed and removable through the Admin API.
    const links = await api.get<{ data: Array<{ id: string; providerName: string }> }>(`/users/${local.id}/federated-identities`);
    expect(links.body.data).toEqual([expect.objectContaining({ providerName: f.providerName })]);
    const removed = await api.delete(`/users/${local.id}/federated-identities/${links.body.data[0]!.id}`);
    expect(removed.status).toBe(200);
    expect(await prisma().federatedIdentity.count({ where: { userId: local.id } })).toBe(0);
  });

  it("never links by an email the upstream does not assert verified, and says why", async () => {
    const f = await federation({ createAccounts: true });
    const email = `eve-${randomBytes(3).toString("hex")}@example.com`;
    const attacker = await createUser(prisma(), f.upstream.id, { email, emailVerified: false });
    const victim = await createUser(prisma(), f.down.org.id, { email });
    const flow = await openLogin(f);
    const end = await back(f, flow, await signInUpstream(f, flow, await startWithButton(f, flow), attacker.email));
    expect(end.res.status).toBe(403);
    expect(mainOf(await end.res.text())).toContain(text("en", (m) => m.federation.reason.unverified_email, f.providerName));
    expect(await prisma().federatedIdentity.count({ where: { userId: victim.id } })).toBe(0);
    expect(await audit(f.down.org.id, "auth.login.success")).toHaveLength(0);
    const [failure] = await audit(f.down.org.id, "auth.login.failure");
    expect(failure?.data).toMatchObject({ method: "federated", reason: "unverified_email" });
  });

  it("never trusts an absent email_verified (Microsoft Entra ID's email claim): no link, no new account", async () => {
    // The upstream verified the address, but the claim the mapping names (Entra's optional xms_edov) is not in its answer.
    const f = await federation({ createAccounts: true, claimMapping: { emailVerified: "xms_edov" } });
    const email = `entra-${randomBytes(3).toString("hex")}@example.com`;
    await createUser(prisma(), f.upstream.id, { email, emailVerified: true });
    const local = await createUser(prisma(), f.down.org.id, { email });
    const flow = await openLogin(f);
    const end = await back(f, flow, await signInUpstream(f, flow, await startWithButton(f, flow), email));
    expect(end.res.status).toBe(403);
    expect(mainOf(await end.res.text())).toContain(text("en", (m) => m.federation.reason.unverified_email, f.providerName));
    expect(await prisma().federatedIdentity.count({ where: { userId: local.id } })).toBe(0);

    const newcomer = await createUser(prisma(), f.upstream.id, { email: `entra-new-${randomBytes(3).toString("hex")}@example.com`, emailVerified: true });
    const other = await openLogin(f);
    const refused = await back(f, other, await signInUpstream(f, other, await startWithButton(f, other), newcomer.email));
    expect(refused.res.status).toBe(403);
    expect(await prisma().user.count({ where: { organizationId: f.down.org.id, email: newcomer.email } })).toBe(0);
  });

  it("counts failed federated sign-ins per interaction and per client address, and refuses with the sign-in's own rate-limit words", async () => {
    const setRule = async (key: string, value: { points: number; windowMinutes: number }) => expect((await api.put(`/config/${key}`, { value })).status).toBe(200);
    await setRule("rateLimits.federatedLogin.perInteraction", { points: 2, windowMinutes: 15 });
    await setRule("rateLimits.federatedLogin.perIp", { points: 3, windowMinutes: 15 });
    try {
      const f = await federation({ createAccounts: true });
      const person = await createUser(prisma(), f.upstream.id);
      const from = { "x-forwarded-for": `203.0.113.${20 + Math.floor(Math.random() * 200)}`, "accept-language": "de" };
      // A forged answer straight at the interaction's return page (the callback would not know its state).
      const forge = (flow: Flow, callback: URL) => {
        const forged = new URL(`${flow.loginUrl}/federated/return${callback.search}`);
        forged.searchParams.set("state", randomBytes(16).toString("base64url"));
        return forged;
      };
      const startFrom = (flow: Flow) => post(flow.jar, `${flow.loginUrl}/federated`, { csrf: csrfOf(flow.html), provider: f.providerId }, from);
      const rateLimited = (minutes: number) => escapeHtml(resources.de.login.signIn[minutes === 1 ? "rateLimited_one" : "rateLimited_other"].replace("{{count}}", String(minutes)));

      // One interaction: two forged answers use its two points; then even the right answer is refused.
      const flow = await openLogin(f, from);
      const callback = await signInUpstream(f, flow, await startFrom(flow), person.email);
      for (let i = 0; i < 2; i++) expect((await flow.jar.fetch(forge(flow, callback), { headers: from })).status).toBe(400);
      const refused = await back(f, flow, callback, from);
      expect(refused.res.status).toBe(429);
      expect(Number(refused.res.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(mainOf(await refused.res.text())).toContain(rateLimited(15));
      // Nor may it start again.
      const restart = await startFrom(flow);
      expect(restart.status).toBe(429);
      expect(mainOf(await restart.text())).toContain(rateLimited(15));

      // Another interaction from the same address: an unknown state at the callback is the address's third failure, its last point.
      const second = await openLogin(f, from);
      const secondCallback = await signInUpstream(f, second, await startFrom(second), person.email);
      const unknown = new URL(secondCallback);
      unknown.searchParams.set("state", randomBytes(16).toString("base64url"));
      expect((await second.jar.fetch(unknown, { headers: from })).status).toBe(400);
      const stopped = await second.jar.fetch(secondCallback, { headers: from });
      expect(stopped.status).toBe(429);
      expect(mainOf(await stopped.text())).toContain(rateLimited(15));

      // Another address signs in; its success gives its point back.
      const elsewhere = { "x-forwarded-for": "198.51.100.61" };
      const third = await openLogin(f, elsewhere);
      const thirdCallback = await signInUpstream(f, third, await post(third.jar, `${third.loginUrl}/federated`, { csrf: csrfOf(third.html), provider: f.providerId }, elsewhere), person.email);
      const end = await back(f, third, thirdCallback, elsewhere);
      expect(end.url.startsWith(f.down.redirectUri), end.url).toBe(true);
      const counters = await prisma().rateLimiterFlexible.findMany({ where: { key: { contains: "198.51.100.61" } } });
      expect(counters.length).toBeGreaterThan(0);
      expect(counters.map((c) => c.points)).toEqual(counters.map(() => 0));

      expect(await prisma().user.count({ where: { organizationId: f.down.org.id } })).toBe(1);
      const failures = await audit(f.down.org.id, "auth.login.failure");
      expect(failures.map((e) => (e.data as { reason: string }).reason)).toEqual(["invalid_state", "invalid_state", "rate_limited", "invalid_state"]);
      // The unknown state at the callback (decision 082): no interaction, so no client; the organization and the address.
      expect(failures[3]).toMatchObject({ actorType: "anonymous", ip: from["x-forwarded-for"], data: { method: "federated", reason: "invalid_state" } });
      expect(failures[3]!.data).not.toHaveProperty("clientId");
    } finally {
      await setRule("rateLimits.federatedLogin.perInteraction", { points: 5, windowMinutes: 15 });
      await setRule("rateLimits.federatedLogin.perIp", { points: 30, windowMinutes: 15 });
    }
  });

  it("sends an email of a claimed domain straight to its provider (home-realm discovery), without looking at a password", async () => {
    const f = await federation({ createAccounts: true, domains: true });
    const email = `lin@${f.domain}`;
    await createUser(prisma(), f.upstream.id, { email });
    const flow = await openLogin(f);
    expect(mainOf(flow.html)).toContain(escapeHtml(resources.en.login.signIn.sso));
    // The password form with the address (and no password) goes to the provider, with the address as login_hint.
    const toUpstream = await post(flow.jar, flow.loginUrl, { csrf: csrfOf(flow.html), email, password: "anything at all" });
    expect(new URL(toUpstream.headers.get("location")!).searchParams.get("login_hint")).toBe(email);
    const end = await back(f, flow, await signInUpstream(f, flow, toUpstream, email));
    expect(end.url.startsWith(f.down.redirectUri), end.url).toBe(true);
    // The SSO button with an address of no claimed domain says so on the login page.
    const other = await openLogin(f);
    const none = await post(other.jar, `${other.loginUrl}/federated`, { csrf: csrfOf(other.html), email: "someone@elsewhere.example" });
    const shown = await follow(other.jar, none, other.loginUrl);
    expect(mainOf(await shown.res.text())).toContain(escapeHtml(resources.en.login.signIn.ssoNone));
  });

  it("refuses a disabled provider, and a client without the method", async () => {
    const f = await federation();
    const current = await api.get(`/identity-providers/${f.providerId}`);
    const disabled = await api.put(`/identity-providers/${f.providerId}`, { enabled: false }, { "if-match": current.headers.get("etag")! });
    expect(disabled.status).toBe(200);
    const flow = await openLogin(f);
    expect(mainOf(flow.html)).not.toContain(text("en", (m) => m.signIn.federated, f.providerName));
    const refused = await startWithButton(f, flow);
    expect(refused.status).toBe(404);
    expect(mainOf(await refused.text())).toContain(escapeHtml(resources.en.login.federation.reason.unknown));

    const g = await federation({ clientMethods: ["password"] });
    const gated = await openLogin(g);
    const forbidden = await post(gated.jar, `${gated.loginUrl}/federated`, { csrf: csrfOf(gated.html), provider: g.providerId });
    expect(forbidden.status).toBe(403);
    expect(await audit(g.down.org.id, "security.login_method_disabled")).toHaveLength(1);
  });

  it("refuses a forged or replayed state and an ID token whose nonce is not the one sent", async () => {
    const f = await federation({ createAccounts: true });
    const person = await createUser(prisma(), f.upstream.id);
    const flow = await openLogin(f);
    const callback = await signInUpstream(f, flow, await startWithButton(f, flow), person.email);

    const forged = new URL(callback);
    forged.searchParams.set("state", "forged-state");
    const forgedPage = await flow.jar.fetch(forged);
    expect(forgedPage.status).toBe(400);
    expect(mainOf(await forgedPage.text())).toContain(escapeHtml(resources.en.login.federation.reason.expired));

    // The state is right, the nonce kept for it is not the one the upstream's ID token carries.
    const key = `federation:state:${createHash("sha256").update(callback.searchParams.get("state")!).digest("hex")}`;
    const pending = JSON.parse((await porta.services.store.get(key))!) as { nonce: string };
    await porta.services.store.set(key, JSON.stringify({ ...pending, nonce: "another-nonce" }), 600);
    const end = await back(f, flow, callback);
    expect(end.res.status).toBe(400);
    expect(mainOf(await end.res.text())).toContain(text("en", (m) => m.federation.reason.invalid, f.providerName));

    // The state was taken by that attempt: the same answer again is refused as expired.
    const replay = await back(f, flow, callback);
    expect(replay.res.status).toBe(400);
    expect(await prisma().user.count({ where: { organizationId: f.down.org.id } })).toBe(0);
    expect(await audit(f.down.org.id, "auth.login.success")).toHaveLength(0);
  });

  it("shows a clear page in the person's language when the upstream cannot be reached", async () => {
    const port = await freePort();
    const f = await federation({ issuer: `http://127.0.0.1:${port}/gone` });
    const flow = await openLogin(f, { "accept-language": "de" });
    const res = await post(flow.jar, `${flow.loginUrl}/federated`, { csrf: csrfOf(flow.html), provider: f.providerId }, { "accept-language": "de" });
    expect(res.status).toBe(502);
    expect(mainOf(await res.text())).toContain(text("de", (m) => m.federation.reason.unreachable, f.providerName));
  });

  it("asks for the organization's second factor unless the provider is trusted for it", async () => {
    const f = await federation({ createAccounts: true });
    await prisma().organization.update({ where: { id: f.down.org.id }, data: { twoFactorPolicy: "required_email" } });
    const person = await createUser(prisma(), f.upstream.id);
    const flow = await openLogin(f);
    const callback = await signInUpstream(f, flow, await startWithButton(f, flow), person.email);
    const next = await follow(flow.jar, await flow.jar.fetch(callback), callback.href, (u) => u.includes("/two-factor"));
    expect(next.url).toMatch(/\/interaction\/[^/]+\/two-factor$/);
  });

  it("takes a provider trusted for the second factor as a complete sign-in (amr fed, mfa)", async () => {
    const f = await federation({ createAccounts: true, trustUpstreamMfa: "always" });
    await prisma().organization.update({ where: { id: f.down.org.id }, data: { twoFactorPolicy: "required_email" } });
    const person = await createUser(prisma(), f.upstream.id);
    const flow = await openLogin(f);
    const end = await back(f, flow, await signInUpstream(f, flow, await startWithButton(f, flow), person.email));
    expect(end.url.startsWith(f.down.redirectUri), end.url).toBe(true);
    const claims = await redeem(flow, end.url);
    expect(claims.amr).toEqual(["fed", "mfa"]);
    expect(claims.acr).toBe("urn:porta:acr:2fa");
  });

  it("keeps the client secret write-only and validates the configuration", async () => {
    const org = await createOrganization(prisma());
    const secret = `s3cret-${randomBytes(8).toString("hex")}`;
    const created = await api.post<Record<string, unknown>>("/identity-providers", {
      organizationId: org.id,
      kind: "google",
      name: "Google",
      clientId: "google-client",
      clientSecret: secret,
      domains: ["Example.COM"],
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("etag")).toBeTruthy();
    expect(created.body).toMatchObject({ issuer: "https://accounts.google.com", hasClientSecret: true, domains: ["example.com"], trustUpstreamMfa: "when_asserted" });
    expect(JSON.stringify(created.body)).not.toContain(secret);
    const entries = await prisma().auditEntry.findMany({ where: { organizationId: org.id, eventType: { startsWith: "identity_provider." } } });
    expect(JSON.stringify(entries)).not.toContain(secret);
    const row = await prisma().identityProvider.findUniqueOrThrow({ where: { id: String(created.body.id) } });
    expect(row.clientSecretEncrypted).not.toContain(secret);

    const invalid = await api.post<{ error: { details: Array<{ field: string }> } }>("/identity-providers", { organizationId: org.id, name: "No issuer", clientId: "x" });
    expect(invalid.status).toBe(422);
    expect(invalid.body.error.details.map((d) => d.field)).toContain("issuer");
    const taken = await api.post("/identity-providers", { organizationId: org.id, name: "Other", kind: "microsoft", tenantId: "contoso.onmicrosoft.com", clientId: "y", domains: ["example.com"] });
    expect(taken.status).toBe(409);
    const stale = await api.put(`/identity-providers/${String(created.body.id)}`, { enabled: false }, { "if-match": '"v999"' });
    expect(stale.status).toBe(409);
    const list = await api.get<{ data: unknown[] }>(`/identity-providers?organizationId=${org.id}`);
    expect(list.body.data).toHaveLength(1);
    expect((await api.delete(`/identity-providers/${String(created.body.id)}`)).status).toBe(200);
  });
});
