import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resources } from "~/i18n/config";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { csrfOf } from "../support/browser";
import { createUser } from "../support/factories";
import { CookieJar } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, escapeHtml, mainOf, type Tenant } from "../login/helpers";

/**
 * GitHub as an upstream (decision 055): OAuth 2.0 with PKCE, the person from GET /user and the
 * verified primary address from GET /user/emails. The peer is a small GitHub of this test's own
 * on node:http that does what github.com does at those endpoints: it issues a code for the
 * redirect URI, exchanges it only with the right client secret, redirect URI and PKCE verifier
 * (answering JSON only to `Accept: application/json`, errors with 200 as GitHub does), and
 * answers the user and the emails to the access token it issued.
 */

interface GitHubAccount {
  id: number;
  login: string;
  name: string | null;
  emails: Array<{ email: string; primary: boolean; verified: boolean }>;
}

const CLIENT_ID = "Iv1.github-client";
const CLIENT_SECRET = `gh-secret-${randomBytes(8).toString("hex")}`;

class FakeGitHub {
  server: Server;
  /** The account the next authorization signs in as. */
  account: GitHubAccount | null = null;
  codes = new Map<string, { challenge: string; redirectUri: string; account: GitHubAccount }>();
  tokens = new Map<string, GitHubAccount>();
  tokenRequests: Array<{ accept: string | undefined; form: URLSearchParams }> = [];

  constructor() {
    this.server = createServer((req, res) => void this.handle(req, res));
  }

  get base() {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", this.base);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === "/login/oauth/authorize") {
      // The person is signed in at GitHub and has authorized the app: back to the redirect URI with a code.
      const code = randomBytes(10).toString("hex");
      this.codes.set(code, { challenge: url.searchParams.get("code_challenge") ?? "", redirectUri: url.searchParams.get("redirect_uri") ?? "", account: this.account! });
      const back = new URL(url.searchParams.get("redirect_uri")!);
      back.searchParams.set("code", code);
      back.searchParams.set("state", url.searchParams.get("state") ?? "");
      res.writeHead(302, { location: back.href });
      return res.end();
    }
    if (url.pathname === "/login/oauth/access_token" && req.method === "POST") {
      let text = "";
      for await (const chunk of req) text += String(chunk);
      const form = new URLSearchParams(text);
      this.tokenRequests.push({ accept: req.headers.accept, form });
      if (req.headers.accept !== "application/json") {
        res.writeHead(200, { "content-type": "application/x-www-form-urlencoded" });
        return res.end("error=unsupported_accept");
      }
      const grant = this.codes.get(form.get("code") ?? "");
      this.codes.delete(form.get("code") ?? "");
      const challenge = createHash("sha256").update(form.get("code_verifier") ?? "").digest("base64url");
      if (!grant || form.get("client_id") !== CLIENT_ID || form.get("client_secret") !== CLIENT_SECRET || grant.redirectUri !== form.get("redirect_uri") || grant.challenge !== challenge) {
        return send(200, { error: "bad_verification_code", error_description: "The code passed is incorrect or expired." });
      }
      const token = `gho_${randomBytes(12).toString("hex")}`;
      this.tokens.set(token, grant.account);
      return send(200, { access_token: token, token_type: "bearer", scope: "read:user,user:email" });
    }
    const account = this.tokens.get((req.headers.authorization ?? "").replace(/^Bearer /, ""));
    if (!account) return send(401, { message: "Bad credentials" });
    if (url.pathname === "/user") return send(200, { id: account.id, login: account.login, name: account.name, email: null });
    if (url.pathname === "/user/emails") return send(200, account.emails.map((e) => ({ ...e, visibility: e.primary ? "public" : null })));
    return send(404, { message: "Not Found" });
  }
}

describe("federation: GitHub (OAuth 2.0, user and emails API)", () => {
  let porta: TestPorta;
  let api: ReturnType<typeof adminApi>;
  const github = new FakeGitHub();
  const prisma = () => porta.services.db.prisma;

  beforeAll(async () => {
    await new Promise<void>((resolve) => github.server.listen(0, "127.0.0.1", resolve));
    porta = await startTestPorta({ env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: "true" } });
    api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  });
  afterAll(async () => {
    await porta.stop();
    await new Promise((resolve) => github.server.close(resolve));
  });

  async function withGitHub(): Promise<{ tenant: Tenant; providerId: string }> {
    const tenant = await createTenant(porta, { defaultLoginMethods: ["password", "federated"], client: { skipConsent: true } });
    const created = await api.post<{ id: string }>("/identity-providers", {
      organizationId: tenant.org.id,
      kind: "github",
      name: "GitHub",
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      createAccounts: true,
      endpoints: {
        authorization: `${github.base}/login/oauth/authorize`,
        token: `${github.base}/login/oauth/access_token`,
        user: `${github.base}/user`,
        emails: `${github.base}/user/emails`,
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return { tenant, providerId: created.body.id };
  }

  /** From the relying party through the login page's GitHub button and GitHub, back to the relying party (or the page that stopped). */
  async function signIn(tenant: Tenant, providerId: string, account: GitHubAccount) {
    github.account = account;
    const jar = new CookieJar();
    const config = await oidc.discovery(new URL(tenant.issuer), tenant.client.id, undefined, oidc.ClientSecretBasic(tenant.secret!), { execute: [oidc.allowInsecureRequests] });
    const verifier = oidc.randomPKCECodeVerifier();
    const authorize = oidc.buildAuthorizationUrl(config, {
      redirect_uri: tenant.redirectUri,
      scope: "openid email profile",
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
    });
    const started = await jar.fetch(authorize);
    const loginUrl = new URL(started.headers.get("location")!, authorize).href;
    const html = await (await jar.fetch(loginUrl)).text();
    expect(mainOf(html)).toContain(escapeHtml(resources.en.login.signIn.federated.replace("{{provider}}", "GitHub")));
    const toGitHub = await jar.fetch(`${loginUrl}/federated`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf: csrfOf(html), provider: providerId }).toString(),
    });
    expect(toGitHub.status).toBe(303);
    const upstream = new URL(toGitHub.headers.get("location")!);
    let res = await jar.fetch(upstream);
    let url = upstream.href;
    for (let i = 0; i < 10 && res.status >= 300 && res.status < 400; i++) {
      url = new URL(res.headers.get("location")!, url).href;
      if (url.startsWith(tenant.redirectUri)) break;
      await res.body?.cancel();
      res = await jar.fetch(url);
    }
    return { upstream, res, url, redeem: async () => (await oidc.authorizationCodeGrant(config, new URL(url), { pkceCodeVerifier: verifier })).claims()! };
  }

  const account = (emails: GitHubAccount["emails"]): GitHubAccount => ({ id: 4000 + Math.floor(Math.random() * 100_000), login: `octo-${randomBytes(3).toString("hex")}`, name: "Mona Lisa Octocat", emails });

  it("signs in with state and PKCE, the numeric id as subject and the verified primary address, creating the account", async () => {
    const { tenant, providerId } = await withGitHub();
    const email = `mona-${randomBytes(3).toString("hex")}@example.com`;
    const person = account([
      { email: `other-${randomBytes(3).toString("hex")}@example.com`, primary: false, verified: true },
      { email: email.toUpperCase(), primary: true, verified: true },
    ]);
    const flow = await signIn(tenant, providerId, person);
    expect(flow.upstream.origin + flow.upstream.pathname).toBe(`${github.base}/login/oauth/authorize`);
    expect(Object.fromEntries(flow.upstream.searchParams)).toEqual({
      client_id: CLIENT_ID,
      redirect_uri: `${porta.baseUrl}/${tenant.org.slug}/federation/callback`,
      scope: "read:user user:email",
      state: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      code_challenge_method: "S256",
    });
    expect(flow.url.startsWith(tenant.redirectUri), flow.url).toBe(true);
    // The code was exchanged with JSON asked for, the secret and the PKCE verifier (the peer refuses otherwise).
    expect(github.tokenRequests.at(-1)?.accept).toBe("application/json");
    const claims = await flow.redeem();
    const user = await prisma().user.findFirstOrThrow({ where: { organizationId: tenant.org.id, email } });
    expect(claims.sub).toBe(user.id);
    expect(claims.amr).toEqual(["fed"]);
    expect(user).toMatchObject({ emailVerified: true, givenName: "Mona", familyName: "Lisa Octocat", passwordHash: null });
    expect(await prisma().federatedIdentity.findFirstOrThrow({ where: { userId: user.id } })).toMatchObject({ providerId, subject: String(person.id), email });

    // The next sign-in finds the link by the id, even after the login and the address changed at GitHub.
    const again = await signIn(tenant, providerId, { ...person, login: "renamed", emails: [{ email: `new-${email}`, primary: true, verified: true }] });
    expect((await again.redeem()).sub).toBe(user.id);
  });

  it("never links by a primary address GitHub has not verified, nor by a verified address that is not the primary", async () => {
    const { tenant, providerId } = await withGitHub();
    const primary = `victim-${randomBytes(3).toString("hex")}@example.com`;
    const secondary = `second-${randomBytes(3).toString("hex")}@example.com`;
    const victim = await createUser(prisma(), tenant.org.id, { email: primary });
    const other = await createUser(prisma(), tenant.org.id, { email: secondary });
    const flow = await signIn(
      tenant,
      providerId,
      account([
        { email: primary, primary: true, verified: false },
        { email: secondary, primary: false, verified: true },
      ]),
    );
    expect(flow.res.status).toBe(403);
    expect(mainOf(await flow.res.text())).toContain(escapeHtml(resources.en.login.federation.reason.unverified_email.replaceAll("{{provider}}", "GitHub")));
    expect(await prisma().federatedIdentity.count({ where: { userId: { in: [victim.id, other.id] } } })).toBe(0);
    const [failure] = await prisma().auditEntry.findMany({ where: { organizationId: tenant.org.id, eventType: "auth.login.failure" } });
    expect(failure?.data).toMatchObject({ method: "federated", reason: "unverified_email", providerId });
  });

  it("shows the invalid-answer page when GitHub refuses the code", async () => {
    const { tenant, providerId } = await withGitHub();
    const etag = (await api.get(`/identity-providers/${providerId}`)).headers.get("etag")!;
    expect((await api.put(`/identity-providers/${providerId}`, { clientSecret: "not-the-secret" }, { "if-match": etag })).status).toBe(200);
    const flow = await signIn(tenant, providerId, account([{ email: `x-${randomBytes(3).toString("hex")}@example.com`, primary: true, verified: true }]));
    expect(flow.res.status).toBe(400);
    expect(mainOf(await flow.res.text())).toContain(escapeHtml(resources.en.login.federation.reason.invalid.replaceAll("{{provider}}", "GitHub")));
    expect(await prisma().user.count({ where: { organizationId: tenant.org.id } })).toBe(0);
  });

  it("fills the preset (issuer, scopes, github.com's endpoints) and checks what belongs to which kind", async () => {
    const tenant = await createTenant(porta);
    const created = await api.post<Record<string, unknown>>("/identity-providers", { organizationId: tenant.org.id, kind: "github", name: "GitHub", clientId: "x", clientSecret: "y" });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({
      kind: "github",
      issuer: "https://github.com",
      scopes: ["read:user", "user:email"],
      hasClientSecret: true,
      endpoints: {
        authorization: "https://github.com/login/oauth/authorize",
        token: "https://github.com/login/oauth/access_token",
        user: "https://api.github.com/user",
        emails: "https://api.github.com/user/emails",
      },
    });
    const fields = async (body: Record<string, unknown>) => {
      const res = await api.post<{ error: { details: Array<{ field: string }> } }>("/identity-providers", { organizationId: tenant.org.id, clientId: "x", ...body });
      expect(res.status).toBe(422);
      return res.body.error.details.map((d) => d.field);
    };
    expect(await fields({ name: "A", issuer: "https://sso.example.com", endpoints: created.body.endpoints })).toContain("endpoints");
    expect(await fields({ name: "B", issuer: "https://sso.example.com", scopes: ["email"] })).toContain("scopes");
    expect(await fields({ name: "C", kind: "github", issuer: "https://github.example.com" })).toContain("issuer");
    const oidcProvider = await api.post<{ id: string }>("/identity-providers", { organizationId: tenant.org.id, name: "D", issuer: "https://sso.example.com", clientId: "x" });
    const etag = (await api.get(`/identity-providers/${oidcProvider.body.id}`)).headers.get("etag")!;
    const refused = await api.put<{ error: { details: Array<{ field: string }> } }>(`/identity-providers/${oidcProvider.body.id}`, { scopes: ["email"] }, { "if-match": etag });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details.map((d) => d.field)).toContain("scopes");
  });
});
