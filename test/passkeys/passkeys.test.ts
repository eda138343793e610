import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_PASSKEYS_PER_USER } from "~/.server/passkeys/service";
import { accountSessionsKey } from "~/.server/oidc/storage/sessions";
import { consoleSignIn, pageWithCsrf } from "../console/helpers";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { csrfOf, TestBrowser } from "../support/browser";
import { startTestPorta, type TestPorta } from "../support/porta";
import { invalidateOrganization } from "~/.server/directory/organizations";
import { createAccountTenant, createAccountUser, PASSWORD, postAccount, shown, signInToAccount, type AccountTenant, type SignedInPage } from "../account/helpers";
import { SoftAuthenticator, type CreationOptions, type RequestOptions, type SoftCredential } from "./authenticator";

/**
 * Passkeys (decision 041), verified by @simplewebauthn/server against real WebAuthn answers of a
 * software authenticator. Registration on the account page, sign-in with a passkey as the
 * primary method (complete proof, amr), and what is refused: another origin or RP ID, a
 * replayed answer, a challenge of another interaction, a counter that went back, another
 * organization's credential, a removed passkey, a client without the method, the limit.
 */
/** The page's CSRF token: a form's field, or (a page with only the passkey has no form) the page data its script reads. */
function tokenIn(html: string): string {
  if (html.includes('name="csrf"')) return csrfOf(html);
  const token = /\\?"csrf\\?",\\?"([^"\\]+)/.exec(html)?.[1];
  if (!token) throw new Error("no CSRF token in the page");
  return token;
}

describe("passkeys", () => {
  let porta: TestPorta;
  let authenticator: SoftAuthenticator;
  const prisma = () => porta.services.db.prisma;
  const audit = (eventType: string, where: Record<string, unknown> = {}) =>
    prisma().auditEntry.findMany({ where: { eventType, ...where }, orderBy: { createdAt: "asc" } });

  beforeAll(async () => {
    porta = await startTestPorta();
    authenticator = new SoftAuthenticator(new URL(porta.baseUrl).origin);
  });
  afterAll(async () => {
    await porta.stop();
  });

  const passkeyTenant = (methods = ["password", "magic_link", "passkey"]) => createAccountTenant(porta, { defaultLoginMethods: methods });

  async function register(tenant: AccountTenant, page: SignedInPage, name = "Work laptop"): Promise<SoftCredential> {
    const start = await postAccount(tenant, page, { intent: "options" }, "/passkeys");
    expect(start.status).toBe(200);
    const { options } = (await start.json()) as { options: CreationOptions };
    const { credential, response } = authenticator.create(options);
    const done = await postAccount(tenant, page, { intent: "register", name, credential: JSON.stringify(response) }, "/passkeys");
    expect(done.status, await done.clone().text()).toBe(200);
    return credential;
  }

  /** The organization's sign-in, from the account page, up to the login page. */
  async function openLogin(tenant: AccountTenant, browser = new TestBrowser()) {
    const first = await browser.get(tenant.accountUrl);
    const authorizeUrl = first.headers.get("location")!;
    const authorize = await browser.get(authorizeUrl);
    const interactionUrl = new URL(authorize.headers.get("location")!, authorizeUrl).href;
    const login = await browser.get(interactionUrl);
    const html = await login.text();
    return { browser, interactionUrl, html, csrf: tokenIn(html), endpoint: `${interactionUrl}/passkey` };
  }

  async function loginOptions(login: Awaited<ReturnType<typeof openLogin>>): Promise<RequestOptions> {
    const res = await login.browser.post(login.endpoint, { csrf: login.csrf, intent: "options" });
    expect(res.status).toBe(200);
    return ((await res.json()) as { options: RequestOptions }).options;
  }

  const verify = (login: Awaited<ReturnType<typeof openLogin>>, assertion: unknown) =>
    login.browser.post(login.endpoint, { csrf: login.csrf, intent: "verify", credential: JSON.stringify(assertion) });

  it("registration offers EdDSA, ES256 and RS256, and the server prints no experimental-crypto warning", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on("warning", onWarning);
    try {
      const tenant = await passkeyTenant();
      const user = await createAccountUser(porta, tenant);
      const page = await signInToAccount(tenant, user.email);
      const start = await postAccount(tenant, page, { intent: "options" }, "/passkeys");
      const { options } = (await start.json()) as { options: CreationOptions };
      expect(options.pubKeyCredParams.map((p) => p.alg)).toEqual([-8, -7, -257]);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.startsWith("ExperimentalWarning"))).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });

  async function setUp(methods?: string[]) {
    const tenant = await passkeyTenant(methods);
    const user = await createAccountUser(porta, tenant);
    const page = await signInToAccount(tenant, user.email);
    const credential = await register(tenant, page);
    return { tenant, user, page, credential };
  }

  it("registers a named passkey on the account page, lists it, and signs in with it alone: a complete proof with amr hwk+user", async () => {
    const { tenant, user, credential } = await setUp();
    const [row] = await prisma().passkey.findMany({ where: { userId: user.id } });
    expect(row).toMatchObject({ name: "Work laptop", organizationId: tenant.org.id, deviceType: "singleDevice", transports: ["internal"], aaguid: null, lastUsedAt: null });
    expect(row!.credentialId).toBe(credential.id.toString("base64url"));
    expect((await audit("account.passkey.added", { targetId: user.id }))[0]?.data).toMatchObject({ name: "Work laptop" });

    const login = await openLogin(tenant);
    expect(shown(login.html)).toContain("Sign in with a passkey");
    // The email field offers passkeys in the browser's autofill (conditional UI) too.
    expect(login.html).toMatch(/<input[^>]*name="email"[^>]*autocomplete="username webauthn"/i);
    const res = await verify(login, authenticator.get(await loginOptions(login), credential));
    expect(res.status).toBe(200);
    const { redirectTo } = (await res.json()) as { redirectTo: string };
    const landed = await login.browser.follow(await login.browser.get(new URL(redirectTo, login.interactionUrl).href), redirectTo);
    expect(landed.url).toBe(tenant.accountUrl);
    const account = await landed.res.text();
    expect(shown(account)).toContain("Work laptop");
    expect(shown(account)).toMatch(/last used/);

    const success = await audit("auth.login.success", { targetId: user.id });
    expect(success.at(-1)?.data).toMatchObject({ method: "passkey" });
    // No second factor after a passkey, and the session says how the person signed in.
    const sessions = await Promise.all((await porta.services.store.setMembers(accountSessionsKey(tenant.org.id, user.id))).map((k) => porta.services.store.get(k)));
    const amrs = sessions.map((s) => (JSON.parse(s!) as { amr?: string[] }).amr);
    expect(amrs).toContainEqual(["hwk", "user"]);
    expect((await prisma().passkey.findFirstOrThrow({ where: { userId: user.id } })).lastUsedAt).not.toBeNull();
  });

  it("a sign-in with a passkey lifts second factors refused after too many wrong codes in a row", async () => {
    const { tenant, user, credential } = await setUp();
    await prisma().secondFactorFailureCount.createMany({ data: [{ userId: user.id, factor: "totp", failures: 100 }, { userId: user.id, factor: "email", failures: 120 }] });
    const login = await openLogin(tenant);
    const res = await verify(login, authenticator.get(await loginOptions(login), credential));
    expect(res.status).toBe(200);
    expect(await prisma().secondFactorFailureCount.count({ where: { userId: user.id } })).toBe(0);
  });

  it("refuses an answer for another origin or another RP ID, with one generic failure, audited", async () => {
    const { tenant, user, credential } = await setUp();
    for (const bend of [{ origin: "https://evil.example" }, { rpId: "evil.example" }, { noUserVerification: true }]) {
      const login = await openLogin(tenant);
      const res = await verify(login, authenticator.get(await loginOptions(login), credential, bend));
      expect(res.status, JSON.stringify(bend)).toBe(401);
      expect(await res.json()).toEqual({ error: "failed" });
    }
    const failures = await audit("auth.login.failure", { organizationId: tenant.org.id });
    expect(failures.map((f) => (f.data as { reason: string }).reason)).toEqual(["invalid_signature", "invalid_signature", "invalid_signature"]);
    expect(await audit("auth.login.success", { targetId: user.id, data: { path: ["method"], equals: "passkey" } })).toHaveLength(0);
  });

  it("takes a challenge once: a replayed answer and an answer to another interaction's challenge are refused", async () => {
    const { tenant, credential } = await setUp();
    const login = await openLogin(tenant);
    const assertion = authenticator.get(await loginOptions(login), credential);
    expect((await verify(login, assertion)).status).toBe(200);
    // The same answer again, at a fresh sign-in that asked for its own challenge.
    const again = await openLogin(tenant);
    await loginOptions(again);
    expect((await verify(again, assertion)).status).toBe(401);

    // Interaction A's challenge, answered at interaction B.
    const a = await openLogin(tenant);
    const b = await openLogin(tenant);
    const optionsA = await loginOptions(a);
    await loginOptions(b);
    expect((await verify(b, authenticator.get(optionsA, credential))).status).toBe(401);
    // And B's answer without any challenge of its own (already taken) fails too.
    expect((await verify(b, authenticator.get(optionsA, credential))).status).toBe(401);
  });

  it("refuses a signature counter that went back (a cloned authenticator)", async () => {
    const { tenant, user, credential } = await setUp();
    const first = await openLogin(tenant);
    expect((await verify(first, authenticator.get(await loginOptions(first), credential, { counter: 10 }))).status).toBe(200);
    const clone = await openLogin(tenant);
    expect((await verify(clone, authenticator.get(await loginOptions(clone), credential, { counter: 5 }))).status).toBe(401);
    expect((await prisma().passkey.findFirstOrThrow({ where: { userId: user.id } })).counter).toBe(10n);
  });

  it("knows only the organization's own credentials", async () => {
    const { credential } = await setUp();
    const other = await passkeyTenant();
    const otherUser = await createAccountUser(porta, other);
    const login = await openLogin(other);
    const res = await verify(login, authenticator.get(await loginOptions(login), credential));
    expect(res.status).toBe(401);
    const [failure] = await audit("auth.login.failure", { organizationId: other.org.id });
    expect(failure?.data).toMatchObject({ method: "passkey", reason: "unknown_credential" });
    expect(await audit("auth.login.success", { targetId: otherUser.id })).toHaveLength(0);
  });

  it("removes a passkey on the account page (audited); a removed passkey no longer signs in", async () => {
    const { tenant, user, page, credential } = await setUp();
    const row = await prisma().passkey.findFirstOrThrow({ where: { userId: user.id } });
    const renamed = await postAccount(tenant, page, { intent: "passkey-rename", passkey: row.id, name: "  Phone " });
    expect(renamed.status).toBe(303);
    expect((await prisma().passkey.findUniqueOrThrow({ where: { id: row.id } })).name).toBe("Phone");
    const removed = await postAccount(tenant, page, { intent: "passkey-remove", passkey: row.id });
    expect(removed.status).toBe(303);
    expect(removed.headers.get("location")).toBe(`/${tenant.org.slug}/account?done=passkey_removed`);
    expect(await prisma().passkey.count({ where: { userId: user.id } })).toBe(0);
    expect((await audit("account.passkey.removed", { targetId: user.id }))[0]?.data).toMatchObject({ passkeyId: row.id, name: "Phone" });

    const login = await openLogin(tenant);
    expect((await verify(login, authenticator.get(await loginOptions(login), credential))).status).toBe(401);
  });

  it("refuses the passkey endpoints of a client without the method: 403 before any lookup or CSRF check, audited", async () => {
    const tenant = await passkeyTenant(["password", "magic_link"]);
    const login = await openLogin(tenant);
    expect(shown(login.html)).not.toContain("passkey");
    const res = await login.browser.post(login.endpoint, { intent: "options" });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: "unavailable" });
    const page = await login.browser.get(`${login.interactionUrl}?method=passkey`);
    expect(page.status).toBe(403);
    expect(shown(await page.text())).toContain("Signing in with a passkey is not available for this application.");
    const refusals = await audit("security.login_method_disabled", { organizationId: tenant.org.id });
    expect(refusals.map((r) => (r.data as { attemptedMethod: string; endpoint: string }).endpoint)).toEqual(["POST /interaction/:uid/passkey", "GET /interaction/:uid"]);
    expect(refusals.every((r) => (r.data as { attemptedMethod: string }).attemptedMethod === "passkey")).toBe(true);
  });

  it("shows only the passkey where it is the only method, and refuses the password there", async () => {
    const tenant = await passkeyTenant(["passkey"]);
    const user = await createAccountUser(porta, tenant);
    const login = await openLogin(tenant);
    const text = shown(login.html);
    expect(text).toContain("Sign in with a passkey");
    expect(text).not.toContain("Password");
    const posted = await login.browser.post(login.interactionUrl, { csrf: login.csrf, email: user.email, password: "a long test password 1" });
    expect(posted.status).toBe(403);
  });

  it(`stops at ${MAX_PASSKEYS_PER_USER} passkeys per user`, async () => {
    const { tenant, user, page } = await setUp();
    await prisma().passkey.createMany({
      data: Array.from({ length: MAX_PASSKEYS_PER_USER - 1 }, (_, i) => ({
        organizationId: tenant.org.id,
        userId: user.id,
        credentialId: `filler-${i}-${user.id}`,
        userHandle: "aGFuZGxl",
        publicKey: Buffer.from([1]),
        deviceType: "singleDevice",
        name: `Key ${i}`,
      })),
    });
    const start = await postAccount(tenant, page, { intent: "options" }, "/passkeys");
    expect(start.status).toBe(409);
    expect(await start.json()).toEqual({ error: "limit" });
    const account = await page.browser.get(tenant.accountUrl);
    expect(shown(await account.text())).toContain(`You have ${MAX_PASSKEYS_PER_USER} passkeys, the most an account may have.`);
  });

  describe("as the second factor", () => {
    /** A person with a passkey, in an organization whose policy then becomes `policy`. */
    async function withPolicy(policy: string) {
      const set = await setUp(["password", "passkey"]);
      await prisma().organization.update({ where: { id: set.tenant.org.id }, data: { twoFactorPolicy: policy } });
      invalidateOrganization(porta.services.cache, set.tenant.org);
      await porta.services.oidc.invalidate(set.tenant.org.id);
      return set;
    }

    async function passwordStep(tenant: AccountTenant, email: string) {
      const login = await openLogin(tenant);
      const posted = await login.browser.post(login.interactionUrl, { csrf: login.csrf, email, password: PASSWORD });
      const step = await login.browser.follow(posted, login.interactionUrl);
      const html = await step.res.text();
      return { browser: login.browser, url: step.url, html, csrf: tokenIn(html), endpoint: `${step.url.replace(/\?.*$/, "")}/passkey` };
    }

    it("required_passkey: after the password the step asks for the user's passkey; it completes the sign-in (auth.2fa.verified, amr pwd+hwk+user+mfa)", async () => {
      const { tenant, user, credential } = await withPolicy("required_passkey");
      const step = await passwordStep(tenant, user.email);
      expect(step.url).toMatch(/\/two-factor$/);
      expect(shown(step.html)).toContain("Confirm your sign-in with one of your passkeys.");
      const start = await step.browser.post(step.endpoint, { csrf: step.csrf, intent: "options" });
      const { options } = (await start.json()) as { options: RequestOptions };
      expect(options.allowCredentials?.map((c) => c.id)).toEqual([credential.id.toString("base64url")]);
      const res = await step.browser.post(step.endpoint, { csrf: step.csrf, intent: "verify", credential: JSON.stringify(authenticator.get(options, credential)) });
      expect(res.status).toBe(200);
      const { redirectTo } = (await res.json()) as { redirectTo: string };
      const landed = await step.browser.follow(await step.browser.get(new URL(redirectTo, step.url).href), redirectTo);
      expect(landed.url).toBe(tenant.accountUrl);
      expect((await audit("auth.2fa.verified", { targetId: user.id })).map((e) => e.data)).toEqual([{ userId: user.id, method: "passkey" }]);
      expect((await audit("auth.login.success", { targetId: user.id })).at(-1)?.data).toMatchObject({ method: "password", secondFactor: "passkey" });
      const sessions = await Promise.all((await porta.services.store.setMembers(accountSessionsKey(tenant.org.id, user.id))).map((k) => porta.services.store.get(k)));
      expect(sessions.map((s) => (JSON.parse(s!) as { amr?: string[] }).amr)).toContainEqual(["pwd", "hwk", "user", "mfa"]);
    });

    it("refuses another user's passkey at the step, audited auth.2fa.failed", async () => {
      const { tenant, user } = await withPolicy("required_passkey");
      // A second person of the same organization with a passkey of their own.
      const mallory = await createAccountUser(porta, tenant);
      await prisma().organization.update({ where: { id: tenant.org.id }, data: { twoFactorPolicy: "optional" } });
      invalidateOrganization(porta.services.cache, tenant.org);
      await porta.services.oidc.invalidate(tenant.org.id);
      const malloryKey = await register(tenant, await signInToAccount(tenant, mallory.email));
      await prisma().organization.update({ where: { id: tenant.org.id }, data: { twoFactorPolicy: "required_passkey" } });
      invalidateOrganization(porta.services.cache, tenant.org);
      await porta.services.oidc.invalidate(tenant.org.id);

      const step = await passwordStep(tenant, user.email);
      const start = await step.browser.post(step.endpoint, { csrf: step.csrf, intent: "options" });
      const { options } = (await start.json()) as { options: RequestOptions };
      const res = await step.browser.post(step.endpoint, { csrf: step.csrf, intent: "verify", credential: JSON.stringify(authenticator.get({ ...options, allowCredentials: [] }, malloryKey)) });
      expect(res.status).toBe(401);
      expect((await audit("auth.2fa.failed", { targetId: user.id })).map((e) => e.data)).toEqual([{ userId: user.id, method: "passkey", reason: "wrong_user" }]);
    });

    it("required_passkey without a passkey: the step registers one, which is the second factor of this sign-in (auth.2fa.enrolled)", async () => {
      const tenant = await passkeyTenant(["password", "passkey"]);
      await prisma().organization.update({ where: { id: tenant.org.id }, data: { twoFactorPolicy: "required_passkey" } });
      const user = await createAccountUser(porta, tenant);
      const step = await passwordStep(tenant, user.email);
      expect(shown(step.html)).toContain("Your organization requires a passkey after your password.");
      // Asking to use a passkey the person does not have is not offered; registering is.
      const start = await step.browser.post(step.endpoint, { csrf: step.csrf, intent: "register-options" });
      expect(start.status).toBe(200);
      const { options } = (await start.json()) as { options: CreationOptions };
      const { response } = authenticator.create(options, { synced: true });
      const res = await step.browser.post(step.endpoint, { csrf: step.csrf, intent: "register", name: "Phone", credential: JSON.stringify(response) });
      expect(res.status).toBe(200);
      const { redirectTo } = (await res.json()) as { redirectTo: string };
      const landed = await step.browser.follow(await step.browser.get(new URL(redirectTo, step.url).href), redirectTo);
      expect(landed.url).toBe(tenant.accountUrl);
      expect(await prisma().passkey.findMany({ where: { userId: user.id }, select: { name: true, deviceType: true } })).toEqual([{ name: "Phone", deviceType: "multiDevice" }]);
      expect((await audit("auth.2fa.enrolled", { targetId: user.id })).map((e) => e.data)).toEqual([{ method: "passkey" }]);
      const sessions = await Promise.all((await porta.services.store.setMembers(accountSessionsKey(tenant.org.id, user.id))).map((k) => porta.services.store.get(k)));
      expect(sessions.map((s) => (JSON.parse(s!) as { amr?: string[] }).amr)).toContainEqual(["pwd", "swk", "user", "mfa"]);
      // Once registered, the step no longer offers a second registration.
      const next = await passwordStep(tenant, user.email);
      expect((await next.browser.post(next.endpoint, { csrf: next.csrf, intent: "register-options" })).status).toBe(403);
    });

    it("required_any offers the passkey beside email codes", async () => {
      const { tenant, user } = await withPolicy("required_any");
      const step = await passwordStep(tenant, user.email);
      const text = shown(step.html);
      expect(text).toContain("Use my passkey");
      expect(text).toContain("Email me a code");
    });
  });

  describe("Admin API", () => {
    it("lists a user's passkeys without key material, deletes one (audited user.passkey.deleted), and counts them in the two-factor status and summary", async () => {
      const api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
      const { tenant, user, credential } = await setUp();
      const listed = await api.get<{ data: Array<Record<string, unknown>> }>(`/users/${user.id}/passkeys`);
      expect(listed.status).toBe(200);
      expect(listed.body.data).toHaveLength(1);
      const [only] = listed.body.data;
      expect(only).toMatchObject({ userId: user.id, name: "Work laptop", deviceType: "singleDevice", backedUp: false, aaguid: null, transports: ["internal"], lastUsedAt: null });
      expect(Object.keys(only!).sort()).toEqual(["aaguid", "backedUp", "createdAt", "deviceType", "id", "lastUsedAt", "name", "transports", "userId"]);
      expect((await api.get<{ passkeys: { count: number } }>(`/users/${user.id}/two-factor`)).body.passkeys).toEqual({ count: 1 });
      const summary = await api.get<{ data: Array<{ organizationId: string; byMethod: { passkey: number } }> }>("/two-factor/summary");
      expect(summary.body.data.find((r) => r.organizationId === tenant.org.id)?.byMethod.passkey).toBe(1);

      expect((await api.delete(`/users/${user.id}/passkeys/0190a000-0000-7000-8000-000000000000`)).status).toBe(404);
      const deleted = await api.delete<{ id: string }>(`/users/${user.id}/passkeys/${String(only!.id)}`);
      expect(deleted.status).toBe(200);
      expect(deleted.body.id).toBe(only!.id);
      expect((await audit("user.passkey.deleted", { targetId: user.id }))[0]?.data).toEqual({ passkeyId: only!.id, name: "Work laptop" });
      expect((await api.get<{ data: unknown[] }>(`/users/${user.id}/passkeys`)).body.data).toEqual([]);
      // The deleted passkey no longer signs in.
      const login = await openLogin(tenant);
      expect((await verify(login, authenticator.get(await loginOptions(login), credential))).status).toBe(401);
    });
  });

  it("console: the user page lists the passkeys (name, type, last use) and deletes one", async () => {
    const { tenant, user, credential } = await setUp();
    const admin = await consoleSignIn(porta);
    const url = `${porta.baseUrl}/console/organizations/${tenant.org.id}/users/${user.id}`;
    const page = await pageWithCsrf(admin.browser, url);
    const text = shown(page.html);
    expect(text).toContain("Passkeys");
    expect(text).toMatch(/Work laptop\s+Device-bound\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\s+Never/);
    const row = await prisma().passkey.findFirstOrThrow({ where: { userId: user.id } });
    const res = await admin.browser.post(url, { csrf: page.csrf, intent: "deletePasskey", passkeyId: row.id });
    expect(res.status).toBe(302);
    const after = await admin.browser.get(new URL(res.headers.get("location")!, url).href);
    const afterText = shown(await after.text());
    expect(afterText).toContain("The passkey was deleted.");
    expect(afterText).toContain("No passkeys.");
    expect((await audit("user.passkey.deleted", { targetId: user.id }))[0]).toMatchObject({ actorType: "admin" });
    const login = await openLogin(tenant);
    expect((await verify(login, authenticator.get(await loginOptions(login), credential))).status).toBe(401);
  });

  it("export carries the public credentials; imported elsewhere, the passkey signs in there", async () => {
    const api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
    const { tenant, user, credential } = await setUp();
    const exported = await api.get<{ content: { users: Array<{ email: string; passkeys?: Array<Record<string, unknown>> }> } }>(`/organizations/${tenant.org.id}/export`);
    expect(exported.status).toBe(200);
    const carried = exported.body.content.users.find((u) => u.email === user.email)!.passkeys!;
    expect(carried).toHaveLength(1);
    expect(carried[0]).toMatchObject({ credentialId: credential.id.toString("base64url"), name: "Work laptop", deviceType: "singleDevice", counter: 0 });
    expect(Object.keys(carried[0]!).sort()).toEqual(["aaguid", "backedUp", "counter", "createdAt", "credentialId", "deviceType", "lastUsedAt", "name", "publicKey", "transports", "userHandle"]);

    const slug = `copy-${tenant.org.slug}`;
    const applied = await api.post<{ applied: boolean }>("/imports/apply", { package: exported.body, slug });
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    const copy = await prisma().organization.findUniqueOrThrow({ where: { slug } });
    const copyUser = await prisma().user.findFirstOrThrow({ where: { organizationId: copy.id, email: user.email } });
    expect(await prisma().passkey.count({ where: { userId: copyUser.id } })).toBe(1);
    const login = await openLogin({ org: copy, accountUrl: `${porta.baseUrl}/${copy.slug}/account` });
    expect((await verify(login, authenticator.get(await loginOptions(login), credential))).status).toBe(200);
    expect((await audit("auth.login.success", { targetId: copyUser.id })).at(-1)?.data).toMatchObject({ method: "passkey" });
  });

  it("keeps a registration challenge to the browser session that asked for it", async () => {
    const tenant = await passkeyTenant();
    const user = await createAccountUser(porta, tenant);
    const page = await signInToAccount(tenant, user.email);
    const other = await signInToAccount(tenant, user.email);
    const start = await postAccount(tenant, page, { intent: "options" }, "/passkeys");
    const { options } = (await start.json()) as { options: CreationOptions };
    const { response } = authenticator.create(options);
    const elsewhere = await postAccount(tenant, other, { intent: "register", name: "x", credential: JSON.stringify(response) }, "/passkeys");
    expect(elsewhere.status).toBe(422);
    expect(await prisma().passkey.count({ where: { userId: user.id } })).toBe(0);
  });
});
