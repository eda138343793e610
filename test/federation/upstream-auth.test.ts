import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import * as oidc from "openid-client";
import Provider from "oidc-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { csrfOf } from "../support/browser";
import { createOrganization, createUser } from "../support/factories";
import { recordVerifiedDomains } from "../support/domains";
import { CookieJar } from "../support/oidc";
import { freePort, startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, type Tenant } from "../login/helpers";

/**
 * Decision 082: how Porta authenticates at an upstream's token endpoint, and what it records when
 * an upstream sign-in fails. The upstream is an oidc-provider instance behind a small wrapper
 * that, like glewlwyd and several other servers, compares HTTP Basic credentials without
 * form-urldecoding them (RFC 6749 §2.3.1 asks for the decoding): a secret with any character
 * other than letters and digits never passes Basic there, and the wrapper answers
 * `unauthorized_client`. Its discovery offers client_secret_basic, client_secret_post,
 * private_key_jwt and none, as most servers' do.
 */

const SPECIAL_SECRET = "s3cr3t/with+special:chars&%=~";
const PLAIN_SECRET = `plain${randomBytes(12).toString("hex")}`;

interface Upstream {
  issuer: string;
  server: Server;
  /** How each token request authenticated, as the wrapper saw it. */
  tokenAuth: Array<{ clientId: string | null; style: "basic" | "post" | "jwt" | "none" }>;
  /** The claims the next upstream sign-in has (besides sub). */
  signInAs: { id: string; claims: Record<string, unknown> };
}

/** Basic credentials read the way a non-decoding server reads them: base64, split at the first colon, nothing else. */
function rawBasic(header: string | undefined): { id: string; secret: string } | null {
  if (!header?.startsWith("Basic ")) return null;
  const text = Buffer.from(header.slice(6), "base64").toString("utf8");
  const colon = text.indexOf(":");
  return colon < 0 ? null : { id: text.slice(0, colon), secret: text.slice(colon + 1) };
}

describe("federation: client authentication at the upstream, failures recorded (decision 082)", () => {
  let porta: TestPorta;
  let api: ReturnType<typeof adminApi>;
  let down: Tenant;
  let upstream: Upstream;
  const prisma = () => porta.services.db.prisma;
  const secrets: Record<string, string> = { "post-client": SPECIAL_SECRET, "basic-client": SPECIAL_SECRET, plainclient: PLAIN_SECRET };
  const providers: Record<string, string> = {};

  async function connection(name: string, body: Record<string, unknown>) {
    const created = await api.post<{ id: string; jwksUrl: string | null; tokenEndpointAuthMethod: string }>("/identity-providers", {
      organizationId: down.org.id,
      name,
      issuer: upstream.issuer,
      createAccounts: true,
      ...body,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    providers[name] = created.body.id;
    return created.body;
  }

  beforeAll(async () => {
    porta = await startTestPorta({ env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: "true" } });
    api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
    down = await createTenant(porta, { defaultLoginMethods: ["password", "federated"], client: { skipConsent: true } });
    const port = await freePort();
    upstream = { issuer: `http://127.0.0.1:${port}`, server: undefined as unknown as Server, tokenAuth: [], signInAs: { id: "nobody", claims: {} } };

    await connection("Auto special", { clientId: "post-client", clientSecret: SPECIAL_SECRET });
    await connection("Auto plain", { clientId: "plainclient", clientSecret: PLAIN_SECRET });
    await connection("Basic special", { clientId: "basic-client", clientSecret: SPECIAL_SECRET, tokenEndpointAuthMethod: "client_secret_basic" });
    await connection("Public", { clientId: "public-client", tokenEndpointAuthMethod: "none" });
    const jwt = await connection("Key", { clientId: "jwt-client", tokenEndpointAuthMethod: "private_key_jwt" });
    expect(jwt.jwksUrl).toBe(`${porta.baseUrl}/${down.org.slug}/federation/providers/${jwt.id}/jwks`);
    const jwks = (await (await fetch(jwt.jwksUrl!)).json()) as { keys: Array<Record<string, string>> };

    const callback = `${porta.baseUrl}/${down.org.slug}/federation/callback`;
    const common = { redirect_uris: [callback], grant_types: ["authorization_code"], response_types: ["code" as const] };
    const provider = new Provider(upstream.issuer, {
      clients: [
        { client_id: "post-client", client_secret: SPECIAL_SECRET, token_endpoint_auth_method: "client_secret_post", ...common },
        { client_id: "basic-client", client_secret: SPECIAL_SECRET, token_endpoint_auth_method: "client_secret_basic", ...common },
        { client_id: "plainclient", client_secret: PLAIN_SECRET, token_endpoint_auth_method: "client_secret_basic", ...common },
        { client_id: "public-client", token_endpoint_auth_method: "none", ...common },
        { client_id: "jwt-client", token_endpoint_auth_method: "private_key_jwt", token_endpoint_auth_signing_alg: "ES256", jwks: { keys: jwks.keys }, ...common },
      ],
      findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id, ...(id === upstream.signInAs.id ? upstream.signInAs.claims : {}) }) }),
      claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["given_name", "family_name"] },
      features: { devInteractions: { enabled: false } },
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
      cookies: { keys: ["upstream-test-key"] },
    });
    // The token endpoint's client authentication as a non-decoding server does it, before oidc-provider's own.
    provider.use(async (ctx, next) => {
      if (ctx.method !== "POST" || ctx.path !== "/token") return next();
      const basic = rawBasic(ctx.get("authorization") || undefined);
      if (basic) {
        upstream.tokenAuth.push({ clientId: basic.id, style: "basic" });
        // The raw credentials must be the registered ones, character for character.
        if (secrets[basic.id] !== basic.secret) {
          ctx.status = 400;
          ctx.body = { error: "unauthorized_client", error_description: "Invalid client credentials" };
          return;
        }
        return next();
      }
      await next();
      const body = (ctx as unknown as { oidc?: { body?: Record<string, unknown> } }).oidc?.body ?? {};
      const style = body.client_assertion ? "jwt" : body.client_secret ? "post" : "none";
      upstream.tokenAuth.push({ clientId: typeof body.client_id === "string" ? body.client_id : null, style });
    });
    const handle = provider.callback();
    upstream.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      void (async () => {
        const url = new URL(req.url ?? "/", upstream.issuer);
        if (url.pathname.startsWith("/interaction/")) {
          // The upstream's own sign-in and consent, done at once for the account the test chose.
          const details = await provider.interactionDetails(req, res);
          if (details.prompt.name === "login") {
            await provider.interactionFinished(req, res, { login: { accountId: upstream.signInAs.id } }, { mergeWithLastSubmission: false });
            return;
          }
          const grant = new provider.Grant({ accountId: details.session!.accountId, clientId: String(details.params.client_id) });
          grant.addOIDCScope(String(details.params.scope));
          await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
          return;
        }
        handle(req, res);
      })().catch((error: unknown) => {
        res.writeHead(500).end(String(error));
      });
    });
    await new Promise<void>((resolve) => upstream.server.listen(port, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    await new Promise((resolve) => upstream?.server?.close(resolve));
    await porta.stop();
  });

  // -------------------------------------------------------------------------------------------
  // The browser's way through Porta and the upstream.

  const post = (jar: CookieJar, url: string, form: Record<string, string>) =>
    jar.fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(form).toString() });

  async function follow(jar: CookieJar, res: Response, from: string, stop: (url: string) => boolean) {
    let current = res;
    let url = from;
    for (let i = 0; i < 15 && current.status >= 300 && current.status < 400; i++) {
      url = new URL(current.headers.get("location")!, url).href;
      if (stop(url)) return { res: current, url };
      await current.body?.cancel();
      current = await jar.fetch(url);
    }
    return { res: current, url };
  }

  /** Opens the login page, presses the connection's button, signs in upstream, and ends at the relying party or at a page that stopped. */
  async function signIn(providerName: string, account: { id: string; claims: Record<string, unknown> }) {
    upstream.signInAs = account;
    const jar = new CookieJar();
    const config = await oidc.discovery(new URL(down.issuer), down.client.id, undefined, oidc.ClientSecretBasic(down.secret!), { execute: [oidc.allowInsecureRequests] });
    const verifier = oidc.randomPKCECodeVerifier();
    const authorize = oidc.buildAuthorizationUrl(config, {
      redirect_uri: down.redirectUri,
      scope: "openid email",
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
    });
    const started = await jar.fetch(authorize);
    const loginUrl = new URL(started.headers.get("location")!, authorize).href;
    const html = await (await jar.fetch(loginUrl)).text();
    const pressed = await post(jar, `${loginUrl}/federated`, { csrf: csrfOf(html), provider: providers[providerName]! });
    expect(pressed.status, await pressed.clone().text()).toBe(303);
    const end = await follow(jar, pressed, loginUrl, (u) => u.startsWith(down.redirectUri));
    return { ...end, config, verifier };
  }

  const failures = (reason: string) => prisma().auditEntry.findMany({ where: { organizationId: down.org.id, eventType: "auth.login.failure" }, orderBy: { createdAt: "asc" } }).then((rows) => rows.filter((r) => (r.data as { reason?: string }).reason === reason));

  const person = (domain = "upstream.test") => {
    const id = `u-${randomBytes(4).toString("hex")}`;
    return { id, email: `${id}@${domain}` };
  };

  // -------------------------------------------------------------------------------------------

  it("auto sends a secret with special characters in the body (client_secret_post) and signs in", async () => {
    const p = person();
    upstream.tokenAuth.length = 0;
    const end = await signIn("Auto special", { id: p.id, claims: { email: p.email, email_verified: true } });
    expect(end.url.startsWith(down.redirectUri), end.url).toBe(true);
    expect(upstream.tokenAuth).toEqual([{ clientId: "post-client", style: "post" }]);
    const tokens = await oidc.authorizationCodeGrant(end.config, new URL(end.url), { pkceCodeVerifier: end.verifier });
    const user = await prisma().user.findFirstOrThrow({ where: { organizationId: down.org.id, email: p.email } });
    expect(tokens.claims()!.sub).toBe(user.id);
  });

  it("auto keeps Basic for a client id and secret of letters and digits, which read the same encoded or not", async () => {
    const p = person();
    upstream.tokenAuth.length = 0;
    const end = await signIn("Auto plain", { id: p.id, claims: { email: p.email, email_verified: true } });
    expect(end.url.startsWith(down.redirectUri), end.url).toBe(true);
    expect(upstream.tokenAuth).toEqual([{ clientId: "plainclient", style: "basic" }]);
  });

  it("explicit client_secret_basic fails at a server that does not decode, and the audit entry and the log name the upstream's error", async () => {
    const p = person();
    upstream.tokenAuth.length = 0;
    const before = porta.logs.lines.length;
    const end = await signIn("Basic special", { id: p.id, claims: { email: p.email, email_verified: true } });
    expect(end.res.status).toBe(400);
    // What the non-decoding server read: the client id still encoded, as RFC 6749 §2.3.1 sends it.
    expect(upstream.tokenAuth).toEqual([{ clientId: "basic%2Dclient", style: "basic" }]);
    const [entry] = await failures("invalid_upstream_response");
    expect(entry?.data).toMatchObject({ method: "federated", providerId: providers["Basic special"], upstreamError: "unauthorized_client", clientId: down.client.id });
    const logged = porta.logs.lines.slice(before).filter((l) => l.msg === "upstream sign-in answer refused");
    expect(logged).toEqual([expect.objectContaining({ upstreamError: "unauthorized_client", providerId: providers["Basic special"] })]);
    // Neither the secret nor its encoded form is in any line.
    const text = JSON.stringify(porta.logs.lines.slice(before));
    expect(text).not.toContain(SPECIAL_SECRET);
    expect(text).not.toContain(encodeURIComponent(SPECIAL_SECRET));
    expect(await prisma().user.count({ where: { organizationId: down.org.id, email: p.email } })).toBe(0);
  });

  it("private_key_jwt signs a client assertion with the connection's key, which the upstream verifies with the published JWKS", async () => {
    const p = person();
    upstream.tokenAuth.length = 0;
    const end = await signIn("Key", { id: p.id, claims: { email: p.email, email_verified: true } });
    expect(end.url.startsWith(down.redirectUri), end.url).toBe(true);
    expect(upstream.tokenAuth).toEqual([{ clientId: "jwt-client", style: "jwt" }]);
  });

  it("none signs in as a public client: PKCE and the client id, no secret", async () => {
    const p = person();
    upstream.tokenAuth.length = 0;
    const end = await signIn("Public", { id: p.id, claims: { email: p.email, email_verified: true } });
    expect(end.url.startsWith(down.redirectUri), end.url).toBe(true);
    expect(upstream.tokenAuth).toEqual([{ clientId: "public-client", style: "none" }]);
  });

  it("publishes a connection's JWKS under its own organization only, and only for private_key_jwt", async () => {
    const jwksUrl = `${porta.baseUrl}/${down.org.slug}/federation/providers/${providers.Key}/jwks`;
    const res = await fetch(jwksUrl);
    expect(res.status).toBe(200);
    const jwks = (await res.json()) as { keys: Array<Record<string, string>> };
    expect(jwks.keys).toEqual([expect.objectContaining({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig", kid: expect.any(String) })]);
    expect(jwks.keys[0]).not.toHaveProperty("d");
    const other = await createOrganization(prisma(), { defaultLoginMethods: ["password"] });
    expect((await fetch(`${porta.baseUrl}/${other.slug}/federation/providers/${providers.Key}/jwks`)).status).toBe(404);
    expect((await fetch(`${porta.baseUrl}/${down.org.slug}/federation/providers/${providers["Auto special"]}/jwks`)).status).toBe(404);
    expect((await fetch(`${porta.baseUrl}/${down.org.slug}/federation/providers/not-an-id/jwks`)).status).toBe(404);
  });

  it("assumeVerifiedEmails: an email of the connection's domains without email_verified counts as verified once the organization verified the domain; other domains and an explicit false never do", async () => {
    const domain = `corp-${randomBytes(3).toString("hex")}.test`;
    const name = `Assume ${domain}`;
    const created = await connection(name, { clientId: "post-client", clientSecret: SPECIAL_SECRET, domains: [domain], assumeVerifiedEmails: true });
    expect(created).toMatchObject({ assumeVerifiedEmails: true });

    // Before the organization proved the domain (decision 086), the connection's word creates nobody.
    const early = person(domain);
    const notYet = await signIn(name, { id: early.id, claims: { email: early.email } });
    expect(notYet.res.status).toBe(403);
    expect(await prisma().user.count({ where: { organizationId: down.org.id, email: early.email } })).toBe(0);
    await recordVerifiedDomains(porta, down.org.id, [domain]);

    const inDomain = person(domain);
    const ok = await signIn(name, { id: inDomain.id, claims: { email: inDomain.email } });
    expect(ok.url.startsWith(down.redirectUri), ok.url).toBe(true);
    expect(await prisma().user.findFirst({ where: { organizationId: down.org.id, email: inDomain.email } })).toMatchObject({ emailVerified: true });

    const elsewhere = person("elsewhere.test");
    const refused = await signIn(name, { id: elsewhere.id, claims: { email: elsewhere.email } });
    expect(refused.res.status).toBe(403);
    expect(await prisma().user.count({ where: { organizationId: down.org.id, email: elsewhere.email } })).toBe(0);

    const saidNo = person(domain);
    const no = await signIn(name, { id: saidNo.id, claims: { email: saidNo.email, email_verified: false } });
    expect(no.res.status).toBe(403);
    expect(await prisma().user.count({ where: { organizationId: down.org.id, email: saidNo.email } })).toBe(0);

    // Switched off (and the change named in the audit entry), the same kind of sign-in creates nobody.
    const off = await api.put<{ assumeVerifiedEmails: boolean }>(`/identity-providers/${created.id}`, { assumeVerifiedEmails: false });
    expect(off.status).toBe(200);
    const [updated] = await prisma().auditEntry.findMany({ where: { eventType: "identity_provider.updated", targetId: created.id } });
    expect(updated?.data).toMatchObject({ change: { assumeVerifiedEmails: false } });
    const after = person(domain);
    const none = await signIn(name, { id: after.id, claims: { email: after.email } });
    expect(none.res.status).toBe(403);
    expect(await prisma().user.count({ where: { organizationId: down.org.id, email: after.email } })).toBe(0);
  });

  it("a domain the organization verified and a connection claims links accounts through that connection only, even when another upstream asserts the email verified (decision 086)", async () => {
    const domain = `owned-${randomBytes(3).toString("hex")}.test`;
    const owner = `Owner ${domain}`;
    const other = `Other ${domain}`;
    await connection(owner, { clientId: "post-client", clientSecret: SPECIAL_SECRET, domains: [domain], assumeVerifiedEmails: true });
    await connection(other, { clientId: "post-client", clientSecret: SPECIAL_SECRET });
    const victim = person(domain);
    const account = await createUser(prisma(), down.org.id, { email: victim.email, emailVerified: true });

    // Not verified yet: the other connection's asserted email links as it always did.
    const before = person(domain);
    const linkedBefore = await signIn(other, { id: before.id, claims: { email: before.email, email_verified: true } });
    expect(linkedBefore.url.startsWith(down.redirectUri), linkedBefore.url).toBe(true);

    await recordVerifiedDomains(porta, down.org.id, [domain]);
    const taken = await signIn(other, { id: `eve-${randomBytes(3).toString("hex")}`, claims: { email: victim.email, email_verified: true } });
    expect(taken.res.status).toBe(403);
    expect(await prisma().federatedIdentity.count({ where: { userId: account.id } })).toBe(0);
    const refused = await prisma().auditEntry.findFirstOrThrow({ where: { organizationId: down.org.id, eventType: "auth.login.failure" }, orderBy: { createdAt: "desc" } });
    expect(refused.data).toMatchObject({ reason: "unverified_email", why: "domain_claimed_by_another_connection" });
    const created = person(domain);
    expect((await signIn(other, { id: created.id, claims: { email: created.email, email_verified: true } })).res.status).toBe(403);
    expect(await prisma().user.count({ where: { organizationId: down.org.id, email: created.email } })).toBe(0);

    // The claiming connection links the same account.
    const linked = await signIn(owner, { id: `ada-${randomBytes(3).toString("hex")}`, claims: { email: victim.email } });
    expect(linked.url.startsWith(down.redirectUri), linked.url).toBe(true);
    expect(await prisma().federatedIdentity.count({ where: { userId: account.id } })).toBe(1);
  });

  it("a forged callback is audited for the organization with the client address, and its page leads back to the organization", async () => {
    const before = (await failures("invalid_state")).length;
    const res = await fetch(`${porta.baseUrl}/${down.org.slug}/federation/callback?code=x&state=${randomBytes(16).toString("hex")}`);
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain(`href="${porta.baseUrl}/${down.org.slug}/account"`);
    const entries = await failures("invalid_state");
    expect(entries).toHaveLength(before + 1);
    expect(entries.at(-1)).toMatchObject({ organizationId: down.org.id, actorType: "anonymous", data: { method: "federated", reason: "invalid_state" } });
    expect(entries.at(-1)!.ip).toBeTruthy();
  });

  it("an upstream unreachable at the start is audited with the connection", async () => {
    const closed = await freePort();
    const name = `Down ${randomBytes(2).toString("hex")}`;
    await connection(name, { issuer: `http://127.0.0.1:${closed}`, clientId: "x", clientSecret: "y" });
    const jar = new CookieJar();
    const config = await oidc.discovery(new URL(down.issuer), down.client.id, undefined, oidc.ClientSecretBasic(down.secret!), { execute: [oidc.allowInsecureRequests] });
    const authorize = oidc.buildAuthorizationUrl(config, { redirect_uri: down.redirectUri, scope: "openid", code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: "S256" });
    const loginUrl = new URL((await jar.fetch(authorize)).headers.get("location")!, authorize).href;
    const html = await (await jar.fetch(loginUrl)).text();
    const res = await post(jar, `${loginUrl}/federated`, { csrf: csrfOf(html), provider: providers[name]! });
    expect(res.status).toBe(502);
    expect(await res.text()).toContain(`href="/interaction/`);
    const entries = (await failures("upstream_unreachable")).filter((e) => (e.data as { providerId?: string }).providerId === providers[name]);
    expect(entries).toHaveLength(1);
    expect(entries[0]?.data).toMatchObject({ method: "federated", clientId: down.client.id });
  });

  // -------------------------------------------------------------------------------------------
  // The Admin API's side.

  it("refuses combinations no sign-in could use (422 with the field)", async () => {
    const base = { organizationId: down.org.id, issuer: upstream.issuer, clientId: "c" };
    const refused = async (body: Record<string, unknown>, field: string) => {
      const res = await api.post<{ details?: Array<{ field: string }> }>("/identity-providers", { name: `Bad ${randomBytes(3).toString("hex")}`, ...base, ...body });
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(JSON.stringify(res.body)).toContain(field);
    };
    await refused({ tokenEndpointAuthMethod: "client_secret_basic" }, "clientSecret");
    await refused({ tokenEndpointAuthMethod: "client_secret_post" }, "clientSecret");
    await refused({ tokenEndpointAuthMethod: "none", clientSecret: "s" }, "clientSecret");
    await refused({ tokenEndpointAuthMethod: "client_secret_jwt", clientSecret: "s" }, "tokenEndpointAuthMethod");
    await refused({ kind: "github", issuer: undefined, clientSecret: "s", tokenEndpointAuthMethod: "private_key_jwt" }, "tokenEndpointAuthMethod");
    await refused({ assumeVerifiedEmails: true }, "assumeVerifiedEmails");
    await refused({ assumeVerifiedEmails: "yes", domains: ["a.test"] }, "assumeVerifiedEmails");

    // On update, against what is stored.
    const id = providers["Auto plain"]!;
    const put = (body: Record<string, unknown>) => api.put<unknown>(`/identity-providers/${id}`, body);
    expect((await put({ tokenEndpointAuthMethod: "none" })).status).toBe(422);
    expect((await put({ clientSecret: null, tokenEndpointAuthMethod: "client_secret_post" })).status).toBe(422);
    expect((await put({ assumeVerifiedEmails: true })).status).toBe(422);
    const github = await api.post<{ id: string }>("/identity-providers", { organizationId: down.org.id, name: `GH ${randomBytes(2).toString("hex")}`, kind: "github", clientId: "g", clientSecret: "s" });
    expect((await api.put<unknown>(`/identity-providers/${github.body.id}`, { tokenEndpointAuthMethod: "client_secret_post" })).status).toBe(422);
    // Nothing was written by the refusals.
    expect(await prisma().identityProvider.findUniqueOrThrow({ where: { id } })).toMatchObject({ tokenEndpointAuthMethod: null, assumeVerifiedEmails: false });
  });

  it("switching to private_key_jwt makes a key and publishes it; switching away drops it; the key never shows in the API", async () => {
    const name = `Switch ${randomBytes(2).toString("hex")}`;
    const created = await connection(name, { clientId: "s", clientSecret: "secret" });
    expect(created).toMatchObject({ tokenEndpointAuthMethod: "auto", jwksUrl: null });
    const toKey = await api.put<{ jwksUrl: string | null; tokenEndpointAuthMethod: string }>(`/identity-providers/${created.id}`, { tokenEndpointAuthMethod: "private_key_jwt" });
    expect(toKey.body).toMatchObject({ tokenEndpointAuthMethod: "private_key_jwt", jwksUrl: `${porta.baseUrl}/${down.org.slug}/federation/providers/${created.id}/jwks` });
    const first = (await (await fetch(toKey.body.jwksUrl!)).json()) as { keys: Array<{ kid: string }> };
    // Saving other fields keeps the key the upstream has registered.
    await api.put(`/identity-providers/${created.id}`, { name: `${name} renamed`, tokenEndpointAuthMethod: "private_key_jwt" });
    expect(((await (await fetch(toKey.body.jwksUrl!)).json()) as { keys: Array<{ kid: string }> }).keys[0]!.kid).toBe(first.keys[0]!.kid);
    const row = await prisma().identityProvider.findUniqueOrThrow({ where: { id: created.id } });
    expect(JSON.stringify(toKey.body)).not.toContain(row.clientKeyEncrypted!);
    const away = await api.put<{ jwksUrl: string | null }>(`/identity-providers/${created.id}`, { tokenEndpointAuthMethod: "client_secret_post" });
    expect(away.body.jwksUrl).toBeNull();
    expect((await prisma().identityProvider.findUniqueOrThrow({ where: { id: created.id } })).clientKeyEncrypted).toBeNull();
    expect((await fetch(toKey.body.jwksUrl!)).status).toBe(404);
    const [entry] = await prisma().auditEntry.findMany({ where: { eventType: "identity_provider.updated", targetId: created.id }, orderBy: { createdAt: "desc" }, take: 1 });
    expect(entry?.data).toMatchObject({ change: { tokenEndpointAuthMethod: "client_secret_post" } });
  });

  it("an existing account is linked by an asserted email through a connection that posts its secret", async () => {
    const p = person();
    const local = await createUser(prisma(), down.org.id, { email: p.email });
    const end = await signIn("Auto special", { id: p.id, claims: { email: p.email, email_verified: true } });
    expect(end.url.startsWith(down.redirectUri), end.url).toBe(true);
    expect(await prisma().federatedIdentity.count({ where: { userId: local.id, providerId: providers["Auto special"] } })).toBe(1);
  });
});
