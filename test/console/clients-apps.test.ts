import { exportJWK, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createApplication, createClient, createOrganization } from "../support/factories";
import { basicAuth, postForm } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";
import { consoleSignIn, pageWithCsrf, type ConsoleVisit } from "./helpers";

/**
 * The console's client and application pages over HTTP, as a browser drives them: what the page
 * says after each action, and what the Admin API or the database holds afterwards (nothing at
 * all after bad input, a stale version or a form without its CSRF token). A generated secret is
 * shown once and works at the organization's token endpoint until it is revoked.
 */
let porta: TestPorta;
let admin: ConsoleVisit;
let api: ReturnType<typeof adminApi>;
let org: Awaited<ReturnType<typeof createOrganization>>;

beforeAll(async () => {
  porta = await startTestPorta();
  // One sign-in per file: the login rate limit counts per account.
  admin = await consoleSignIn(porta);
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  org = await createOrganization(porta.services.db.prisma, { defaultLoginMethods: ["password", "magic_link"] });
});
afterAll(async () => {
  await porta?.stop();
});

const prisma = () => porta.services.db.prisma;
const versionOf = (html: string) => /name="version" value="(\d+)"/.exec(html)![1]!;
const clientUrl = (id: string) => `${porta.baseUrl}/console/organizations/${org.id}/clients/${id}`;
const appUrl = (id: string) => `${porta.baseUrl}/console/organizations/${org.id}/applications/${id}`;
/** Visible text, roughly: tags dropped and entities that the tests meet decoded. */
const textOf = (html: string) => html.replace(/<script[\s\S]*?<\/script>/g, " ").replace(/<[^>]+>/g, " ").replaceAll("&#x27;", "'").replaceAll("&amp;", "&").replace(/\s+/g, " ");

async function machineClient(name = "Billing machine") {
  const { client, secret } = await createClient(prisma(), org.id, { grantTypes: ["client_credentials"], scope: "email", redirectUris: [] });
  await prisma().client.update({ where: { id: client.id }, data: { name } });
  return { id: client.id, secret: secret!.value };
}

async function tokenStatus(clientId: string, secret: string) {
  const res = await postForm(`${porta.baseUrl}/${org.slug}/token`, { grant_type: "client_credentials" }, { authorization: basicAuth(clientId, secret) });
  return res.status === 200 ? 200 : `${res.status} ${String(res.body.error)}`;
}

const stored = (id: string) => prisma().client.findUnique({ where: { id } });

describe("client page", () => {
  it("marks in the list a client that registered itself (RFC 7591, decision 054)", async () => {
    const own = await createOrganization(prisma());
    const registered = await createClient(prisma(), own.id, { redirectUris: ["https://agent.example.com/cb"] });
    const plain = await createClient(prisma(), own.id, { redirectUris: ["https://app.example.com/cb"] });
    await prisma().client.update({ where: { id: registered.client.id }, data: { name: "Self-made agent", registrationAccessTokenHash: "0".repeat(64) } });
    await prisma().client.update({ where: { id: plain.client.id }, data: { name: "Operator-made app" } });
    const text = textOf(await (await admin.browser.get(`${porta.baseUrl}/console/organizations/${own.id}/clients`)).text());
    expect(text).toMatch(/Self-made agent \S+ confidential \( registered dynamically \)/);
    expect(text).toMatch(/Operator-made app \S+ confidential Inherits/);
  });

  it("is linked from the list and shows the client, its secrets and an empty history", async () => {
    const { id, secret } = await machineClient("Linked machine");
    const list = await (await admin.browser.get(`${porta.baseUrl}/console/organizations/${org.id}/clients`)).text();
    expect(list).toContain(`href="/console/organizations/${org.id}/clients/${id}"`);
    const { res, html } = await pageWithCsrf(admin.browser, clientUrl(id));
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const text = textOf(html);
    expect(text).toContain("Linked machine");
    expect(text).toContain("Inherits the organization default (Password, Magic link).");
    expect(text).toContain(`…${secret.slice(-4)}`);
    expect(text).toContain("Generate new secret");
    expect(text).toMatch(/History Nothing here yet\./);
    // Grant types by name, the device grant's URN never shown as its label.
    expect(text).toContain("Client credentials (client_credentials)");
    expect(text).toContain("Device authorization, for devices without a browser (device_code, RFC 8628)");
    expect(text).not.toContain("urn:ietf:params:oauth:grant-type:device_code");
    expect(html).not.toContain(secret);
    expect((await admin.browser.get(`${porta.baseUrl}/console/organizations/${org.id}/clients/no-such-client`)).status).toBe(404);
    const other = await createOrganization(prisma());
    expect((await admin.browser.get(`${porta.baseUrl}/console/organizations/${other.id}/clients/${id}`)).status).toBe(404);
  });

  it("saves an edit with the version it was read at", async () => {
    const { id } = await machineClient();
    const app = await createApplication(prisma(), org.id, { name: "Billing app" });
    const { html, csrf } = await pageWithCsrf(admin.browser, clientUrl(id));
    expect(html).toContain(`<option value="${app.id}">Billing app</option>`);
    const saved = await admin.browser.post(clientUrl(id), {
      csrf,
      intent: "update",
      version: versionOf(html),
      name: "Billing worker",
      redirectUris: "https://billing.example.com/cb\r\nhttps://billing.example.com/cb2",
      postLogoutRedirectUris: "https://billing.example.com/bye",
      scope: "openid  email",
      grantTypes: "authorization_code",
      applicationId: app.id,
    });
    expect(saved.status).toBe(302);
    expect(saved.headers.get("location")).toBe(`/console/organizations/${org.id}/clients/${id}?done=saved`);
    expect(await stored(id)).toMatchObject({
      name: "Billing worker",
      redirectUris: ["https://billing.example.com/cb", "https://billing.example.com/cb2"],
      postLogoutRedirectUris: ["https://billing.example.com/bye"],
      scope: "openid email",
      grantTypes: ["authorization_code"],
      applicationId: app.id,
    });
    const after = textOf(await (await admin.browser.get(`${porta.baseUrl}${saved.headers.get("location")!}`)).text());
    expect(after).toContain("The client was saved.");
    expect(after).toContain("Billing worker");
  });

  it("saves CORS origins, skip-consent and token lifetimes; empty lifetimes go back to the defaults; bad ones stay next to their field", async () => {
    const { client } = await createClient(prisma(), org.id, { confidential: false, redirectUris: ["https://spa.example.com/cb"] });
    const { html, csrf } = await pageWithCsrf(admin.browser, clientUrl(client.id));
    expect(textOf(html)).toContain("Empty: the default, 3600 seconds (1 h). Allowed: 60 to 86400 seconds (1 d).");
    expect(textOf(html)).toContain("Empty: the default, 1209600 seconds (14 d). Allowed: 60 to 1209600 seconds (14 d).");
    const form = {
      csrf,
      intent: "update",
      version: versionOf(html),
      name: "Shop SPA",
      redirectUris: "https://spa.example.com/cb",
      postLogoutRedirectUris: "",
      allowedCorsOrigins: "https://shop.example.com\r\nhttp://localhost:5173",
      scope: "openid email",
      grantTypes: "authorization_code",
      applicationId: "",
      skipConsentShown: "1",
      skipConsent: "yes",
      accessTokenTtlSeconds: "600",
      refreshTokenTtlSeconds: "86400",
    };
    const saved = await admin.browser.post(clientUrl(client.id), form);
    expect(saved.status, await saved.clone().text()).toBe(302);
    expect(await stored(client.id)).toMatchObject({ allowedCorsOrigins: ["https://shop.example.com", "http://localhost:5173"], skipConsent: true, accessTokenTtlSeconds: 600, refreshTokenTtlSeconds: 86_400 });

    const page = await pageWithCsrf(admin.browser, clientUrl(client.id));
    expect(page.html).toMatch(/<input type="checkbox" name="skipConsent" checked="" value="yes"\/>/);
    expect(page.html).toMatch(/id="accessTokenTtlSeconds"[^>]*value="600"|value="600"[^>]*id="accessTokenTtlSeconds"/);
    const before = await stored(client.id);
    const bad = await admin.browser.post(clientUrl(client.id), { ...form, csrf: page.csrf, version: versionOf(page.html), allowedCorsOrigins: "https://shop.example.com/app", accessTokenTtlSeconds: "10", refreshTokenTtlSeconds: "soon" });
    expect(bad.status).toBe(422);
    const badHtml = await bad.text();
    expect(badHtml).toMatch(/id="allowedCorsOrigins-error"[^>]*>must be an origin such as https:\/\/app.example.com/);
    expect(badHtml).toMatch(/id="accessTokenTtlSeconds-error"[^>]*>must be at least 60 seconds</);
    expect(badHtml).toMatch(/id="refreshTokenTtlSeconds-error"[^>]*>must be a number of seconds</);
    expect(await stored(client.id)).toEqual(before);

    // Unticked and emptied: consent is asked again, the lifetimes are the defaults.
    const { skipConsent: _s, ...unticked } = form;
    const reset = await admin.browser.post(clientUrl(client.id), { ...unticked, csrf: page.csrf, version: versionOf(page.html), accessTokenTtlSeconds: "", refreshTokenTtlSeconds: "" });
    expect(reset.status).toBe(302);
    expect(await stored(client.id)).toMatchObject({ skipConsent: false, accessTokenTtlSeconds: null, refreshTokenTtlSeconds: null });
  });

  it("saves a confidential client's token exchange audiences (decision 053), offers none to a public client, and puts a bad one next to its field", async () => {
    const { id } = await machineClient("Exchanging machine");
    const { html, csrf } = await pageWithCsrf(admin.browser, clientUrl(id));
    expect(textOf(html)).toContain("Token exchange audiences");
    const form = { csrf, intent: "update", version: versionOf(html), name: "Exchanging machine", redirectUris: "", postLogoutRedirectUris: "", scope: "email", grantTypes: "client_credentials", applicationId: "" };
    const bad = await admin.browser.post(clientUrl(id), { ...form, tokenExchangeAudiences: "not a uri" });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toMatch(/id="tokenExchangeAudiences-error"[^>]*>must be an absolute URI such as https:\/\/api.example.com/);
    const saved = await admin.browser.post(clientUrl(id), { ...form, tokenExchangeAudiences: "https://api.example.com\r\nhttps://billing.example.com" });
    expect(saved.status, await saved.clone().text()).toBe(302);
    expect(await stored(id)).toMatchObject({ tokenExchangeAudiences: ["https://api.example.com", "https://billing.example.com"] });

    const spa = await createClient(prisma(), org.id, { confidential: false, redirectUris: ["https://spa.example.com/cb"] });
    expect((await pageWithCsrf(admin.browser, clientUrl(spa.client.id))).html).not.toContain('name="tokenExchangeAudiences"');
  });

  it("offers skip-consent to web clients only, and CORS origins to clients a browser runs", async () => {
    const native = await createClient(prisma(), org.id, { confidential: false, applicationType: "native", redirectUris: ["http://127.0.0.1:7000/cb"] });
    const nativeHtml = (await pageWithCsrf(admin.browser, clientUrl(native.client.id))).html;
    expect(nativeHtml).not.toContain('name="skipConsent"');
    expect(nativeHtml).toContain('name="allowedCorsOrigins"');
    const { id } = await machineClient("Origin-less machine");
    const machineHtml = (await pageWithCsrf(admin.browser, clientUrl(id))).html;
    expect(machineHtml).not.toContain('name="allowedCorsOrigins"');
    expect(machineHtml).toContain('name="skipConsent"');
  });

  it("sets a confidential client's PKCE (decision 073), names the organization's mode, and offers not_required to no public client", async () => {
    const strict = await createOrganization(prisma());
    await prisma().organization.update({ where: { id: strict.id }, data: { oauth21: true } });
    const { client } = await createClient(prisma(), strict.id, { redirectUris: ["https://app.example.com/cb"] });
    const url = `${porta.baseUrl}/console/organizations/${strict.id}/clients/${client.id}`;
    const { html, csrf } = await pageWithCsrf(admin.browser, url);
    expect(html).toMatch(/<select id="pkce" name="pkce"/);
    const text = textOf(html);
    expect(text).toContain("As the organization (required: it is in OAuth 2.1 mode)");
    expect(text).toContain("Not required (for relying parties that cannot send PKCE)");
    const form = { csrf, intent: "update", version: versionOf(html), name: "Passport app", redirectUris: "https://app.example.com/cb", postLogoutRedirectUris: "", scope: "openid email", grantTypes: "authorization_code", applicationId: "" };
    const saved = await admin.browser.post(url, { ...form, pkce: "not_required" });
    expect(saved.status, await saved.clone().text()).toBe(302);
    expect(await stored(client.id)).toMatchObject({ pkce: "not_required" });
    const page = await pageWithCsrf(admin.browser, url);
    expect(page.html).toMatch(/<option value="not_required" selected="">/);
    // The authorization endpoint follows at once: a request without PKCE goes on to the sign-in.
    const answer = await fetch(`${porta.baseUrl}/${strict.slug}/auth/authorize?client_id=${client.id}&response_type=code&scope=openid&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcb`, { redirect: "manual" });
    expect(answer.headers.get("location")).toMatch(/^\/interaction\//);
    const bad = await admin.browser.post(url, { ...form, csrf: page.csrf, version: versionOf(page.html), pkce: "sometimes" });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toMatch(/id="pkce-error"/);
    expect(await stored(client.id)).toMatchObject({ pkce: "not_required" });

    const spa = await createClient(prisma(), strict.id, { confidential: false, redirectUris: ["https://spa.example.com/cb"] });
    const spaHtml = (await pageWithCsrf(admin.browser, `${porta.baseUrl}/console/organizations/${strict.id}/clients/${spa.client.id}`)).html;
    expect(spaHtml).not.toContain('name="pkce"');
    expect(textOf(spaHtml)).toContain("A public client always sends PKCE (S256).");
  });

  it("saves the client's keys (a JWK Set or its address), shows them, and puts a key set that is not one next to its field", async () => {
    const { id } = await machineClient("Keyed machine");
    const { publicKey } = await generateKeyPair("ES256");
    const jwk = { ...(await exportJWK(publicKey)), kid: "k1", use: "sig", alg: "ES256" };
    const { html, csrf } = await pageWithCsrf(admin.browser, clientUrl(id));
    const base = { csrf, intent: "update", version: versionOf(html), name: "Keyed machine", redirectUris: "", postLogoutRedirectUris: "", scope: "email", grantTypes: "client_credentials", applicationId: "", keysShown: "1" };
    const saved = await admin.browser.post(clientUrl(id), { ...base, jwks: JSON.stringify({ keys: [jwk] }), jwksUri: "" });
    expect(saved.status, await saved.clone().text()).toBe(302);
    expect((await stored(id))?.jwks).toMatchObject({ keys: [{ kid: "k1", kty: "EC", crv: "P-256" }] });
    const page = await pageWithCsrf(admin.browser, clientUrl(id));
    expect(page.html.replaceAll("&quot;", '"')).toMatch(/<textarea[^>]*name="jwks"[^>]*>[^<]*"kid": "k1"/);

    const before = await stored(id);
    const bad = await admin.browser.post(clientUrl(id), { ...base, csrf: page.csrf, version: versionOf(page.html), jwks: "{not json", jwksUri: "" });
    expect(bad.status).toBe(422);
    const badHtml = await bad.text();
    expect(badHtml).toMatch(/id="jwks-error"[^>]*role="alert"/);
    expect(badHtml).toMatch(/<textarea[^>]*name="jwks"[^>]*>\{not json<\/textarea>/);
    const both = await admin.browser.post(clientUrl(id), { ...base, csrf: page.csrf, version: versionOf(page.html), jwks: JSON.stringify({ keys: [jwk] }), jwksUri: "https://rp.example.com/jwks.json" });
    expect(both.status).toBe(422);
    expect(await both.text()).toMatch(/id="jwksUri-error"[^>]*>must not be set together with jwks/);
    expect(await stored(id)).toEqual(before);

    const cleared = await admin.browser.post(clientUrl(id), { ...base, csrf: page.csrf, version: versionOf(page.html), jwks: "", jwksUri: "" });
    expect(cleared.status).toBe(302);
    expect((await stored(id))?.jwks).toBeNull();
  });

  it("shows the conflict view to a stale version and changes nothing", async () => {
    const { id } = await machineClient("Shared machine");
    const { html, csrf } = await pageWithCsrf(admin.browser, clientUrl(id));
    const version = versionOf(html);
    const form = { csrf, intent: "update", version, redirectUris: "", postLogoutRedirectUris: "", scope: "email", grantTypes: "client_credentials", applicationId: "" };
    expect((await admin.browser.post(clientUrl(id), { ...form, name: "First editor" })).status).toBe(302);
    const before = await stored(id);

    const stale = await admin.browser.post(clientUrl(id), { ...form, name: "Second editor", scope: "email profile" });
    expect(stale.status).toBe(409);
    const text = textOf(await stale.text());
    expect(text).toContain("Changed by someone else");
    expect(text).toContain("Someone else saved this client while you were editing it.");
    expect(text).toContain("First editor");
    expect(text).toContain("Second editor");
    expect(text).toContain("email profile");
    expect(text).toContain("Reload the current version");
    expect(await stored(id)).toEqual(before);
  });

  it("puts bad input next to its field and writes nothing", async () => {
    const { id } = await machineClient("Careful machine");
    const { html, csrf } = await pageWithCsrf(admin.browser, clientUrl(id));
    const before = await stored(id);
    const base = { csrf, intent: "update", version: versionOf(html), name: "Careful machine", redirectUris: "", postLogoutRedirectUris: "", scope: "email", grantTypes: "client_credentials", applicationId: "" };

    // Refused by the shared zod schema.
    const empty = await admin.browser.post(clientUrl(id), { ...base, name: "  ", redirectUris: "not a url" });
    expect(empty.status).toBe(422);
    const emptyHtml = await empty.text();
    expect(emptyHtml).toMatch(/<p id="name-error" class="field-error" role="alert">must not be empty<\/p>/);
    expect(emptyHtml).toMatch(/<p id="redirectUris-error" class="field-error" role="alert">must be an absolute URL<\/p>/);
    expect(emptyHtml).toContain("not a url");

    // Refused by the Admin API's rules that tie fields together.
    const noRedirect = await admin.browser.post(clientUrl(id), { ...base, grantTypes: "authorization_code", scope: "openid" });
    expect(noRedirect.status).toBe(422);
    expect(await noRedirect.text()).toMatch(/id="redirectUris-error"[^>]*>needs at least one URI for authorization_code</);
    expect(await stored(id)).toEqual(before);
  });

  it("offers the Admin API checkbox for clients of the super-admin organization, the organization's administration elsewhere, and saves it", async () => {
    const superAdminId = porta.bootstrap.organizationId;
    const { client } = await createClient(prisma(), superAdminId, { redirectUris: ["https://ops.example.com/cb"], scope: "openid profile email roles" });
    const url = `${porta.baseUrl}/console/organizations/${superAdminId}/clients/${client.id}`;
    const { html, csrf } = await pageWithCsrf(admin.browser, url);
    expect(html).toMatch(/<input type="checkbox" name="adminApiAccess" value="yes"\/>/);
    expect(textOf(html)).toContain("This client may sign service-admins in to the Admin API");
    const form = { csrf, intent: "update", version: versionOf(html), name: "Ops tool", redirectUris: "https://ops.example.com/cb", postLogoutRedirectUris: "", scope: "openid profile email roles", grantTypes: "authorization_code", applicationId: "", adminApiAccessShown: "1" };

    const marked = await admin.browser.post(url, { ...form, adminApiAccess: "yes" });
    expect(marked.status).toBe(302);
    expect((await stored(client.id))!.adminApiAccess).toBe(true);
    const again = await pageWithCsrf(admin.browser, url);
    expect(again.html).toMatch(/<input type="checkbox" name="adminApiAccess" checked="" value="yes"\/>/);
    // The Admin API's rule shows next to its field: an admin client needs the admin scope.
    const refused = await admin.browser.post(url, { ...form, csrf: again.csrf, version: versionOf(again.html), scope: "openid email", adminApiAccess: "yes" });
    expect(refused.status).toBe(422);
    expect(await refused.text()).toMatch(/<p id="scope-error" class="field-error" role="alert">must include profile roles in a client that calls the Admin API<\/p>/);
    // Unticked: the form still says so (the marker), and the mark is removed.
    const unmarked = await admin.browser.post(url, { ...form, csrf: again.csrf, version: versionOf(again.html) });
    expect(unmarked.status).toBe(302);
    expect((await stored(client.id))!.adminApiAccess).toBe(false);

    // Another organization's client may sign that organization's administrators in to its own door (decision 090).
    const { client: elsewhere } = await createClient(prisma(), org.id, { redirectUris: ["https://ops.example.com/cb"], scope: "openid profile email roles" });
    const elsewhereUrl = `${porta.baseUrl}/console/organizations/${org.id}/clients/${elsewhere.id}`;
    const other = await pageWithCsrf(admin.browser, elsewhereUrl);
    expect(textOf(other.html)).toContain("This client may sign the organization's administrators (org-admin, org-auditor) in to its own administration API");
    expect(textOf(other.html)).not.toContain("This client may sign service-admins in to the Admin API");
    const markedElsewhere = await admin.browser.post(elsewhereUrl, { ...form, csrf: other.csrf, version: versionOf(other.html), adminApiAccess: "yes" });
    expect(markedElsewhere.status).toBe(302);
    expect((await stored(elsewhere.id))!.adminApiAccess).toBe(true);
  });

  it("shows a generated secret once; it authenticates until revoked, the older one stays valid", async () => {
    const { id, secret: first } = await machineClient("Rotating machine");
    const { csrf } = await pageWithCsrf(admin.browser, clientUrl(id));
    const tooLong = await admin.browser.post(clientUrl(id), { csrf, intent: "generateSecret", label: "x".repeat(101) });
    expect(tooLong.status).toBe(422);
    const tooLongHtml = await tooLong.text();
    expect(tooLongHtml).toMatch(/id="secret-label-error"[^>]*>must have at most 100 characters</);
    expect(tooLongHtml).not.toContain("shown only once");
    expect(await prisma().clientSecret.count({ where: { clientId: id } })).toBe(1);
    // An expiry day in the past, or not a day, is named next to the field and writes nothing.
    for (const expiresOn of ["2020-01-01", "next week"]) {
      const refused = await admin.browser.post(clientUrl(id), { csrf, intent: "generateSecret", expiresOn });
      expect(refused.status).toBe(422);
      expect(await refused.text()).toMatch(/id="secret-expires-error"[^>]*>must (lie in the future|be an ISO 8601 date-time)</);
    }
    expect(await prisma().clientSecret.count({ where: { clientId: id } })).toBe(1);
    const nextYear = new Date().getUTCFullYear() + 1;
    const expiring = await admin.browser.post(clientUrl(id), { csrf, intent: "generateSecret", label: "temporary", expiresOn: `${nextYear}-06-30` });
    expect(expiring.status).toBe(200);
    const temporary = await prisma().clientSecret.findFirstOrThrow({ where: { clientId: id, label: "temporary" } });
    // The end of the chosen UTC day.
    expect(temporary.expiresAt?.toISOString()).toBe(`${nextYear}-06-30T23:59:59.999Z`);
    await prisma().clientSecret.delete({ where: { id: temporary.id } });
    const generated = await admin.browser.post(clientUrl(id), { csrf, intent: "generateSecret", label: "rotation 2026" });
    expect(generated.status).toBe(200);
    expect(generated.headers.get("cache-control")).toBe("no-store");
    const html = await generated.text();
    expect(textOf(html)).toContain("Client secret — shown only once");
    // The copy button comes with script (e2e/console-clients.spec.ts clicks it); without, the secret is a field to select.
    expect(textOf(html)).not.toContain("Copy secret");
    const value = /id="client-secret" readOnly="" value="([^"]+)"|id="client-secret"[^>]*value="([^"]+)"/.exec(html)!.slice(1).find(Boolean)!;
    expect(value.length).toBeGreaterThanOrEqual(32);
    expect(await tokenStatus(id, value)).toBe(200);
    expect(await tokenStatus(id, first)).toBe(200);

    const page = await pageWithCsrf(admin.browser, clientUrl(id));
    expect(page.html).not.toContain(value);
    expect(page.html).not.toContain("shown only once");
    const text = textOf(page.html);
    expect(text).toContain(`…${value.slice(-4)}`);
    expect(text).toContain("rotation 2026");

    const row = (await prisma().clientSecret.findFirst({ where: { clientId: id, label: "rotation 2026" } }))!;
    const revoked = await admin.browser.post(clientUrl(id), { csrf: page.csrf, intent: "revokeSecret", secretId: row.id });
    expect(revoked.headers.get("location")).toBe(`/console/organizations/${org.id}/clients/${id}?done=revokeSecret`);
    expect(await tokenStatus(id, value)).toBe("401 invalid_client");
    expect(await tokenStatus(id, first)).toBe(200);
    expect((await prisma().clientSecret.findUniqueOrThrow({ where: { id: row.id } })).status).toBe("revoked");
    const after = textOf(await (await admin.browser.get(`${porta.baseUrl}${revoked.headers.get("location")!}`)).text());
    expect(after).toContain("The secret was revoked.");
    expect(after).toMatch(/revoked \d/);
  });

  it("sets a login-method override and goes back to the organization default", async () => {
    const { id } = await machineClient("Login machine");
    const { csrf } = await pageWithCsrf(admin.browser, clientUrl(id));
    const effective = async () => (await api.get<{ loginMethods: string[] | null; effectiveLoginMethods: string[] }>(`/clients/${id}`)).body;

    const none = await admin.browser.post(clientUrl(id), { csrf, intent: "setLoginMethods" });
    expect(none.status).toBe(422);
    expect(await none.text()).toMatch(/id="loginMethods-error"[^>]*role="alert"/);
    expect(await effective()).toMatchObject({ loginMethods: null, effectiveLoginMethods: ["password", "magic_link"] });

    const set = await admin.browser.post(clientUrl(id), { csrf, intent: "setLoginMethods", loginMethods: "magic_link" });
    expect(set.status).toBe(302);
    expect(await effective()).toMatchObject({ loginMethods: ["magic_link"], effectiveLoginMethods: ["magic_link"] });
    const overridden = textOf(await (await admin.browser.get(`${porta.baseUrl}${set.headers.get("location")!}`)).text());
    expect(overridden).toContain("The login-method override was saved.");
    expect(overridden).toContain("Override for this client: Magic link.");
    expect(overridden).toContain("Let Login machine inherit the organization default (Password, Magic link)?");

    const cleared = await admin.browser.post(clientUrl(id), { csrf, intent: "clearLoginMethods" });
    expect(cleared.status).toBe(302);
    expect(await effective()).toMatchObject({ loginMethods: null, effectiveLoginMethods: ["password", "magic_link"] });
    const inherited = textOf(await (await admin.browser.get(`${porta.baseUrl}${cleared.headers.get("location")!}`)).text());
    expect(inherited).toContain("The client now inherits the organization default.");
    expect(inherited).toContain("Inherits the organization default (Password, Magic link).");
  });

  it("deactivates, activates and deletes a client", async () => {
    const { id, secret } = await machineClient("Doomed machine");
    const { csrf, html } = await pageWithCsrf(admin.browser, clientUrl(id));
    expect(textOf(html)).toContain("Deactivate Doomed machine? It can no longer obtain tokens until it is activated again.");
    expect(textOf(html)).toContain("Delete Doomed machine and its secrets? It can never authenticate again.");

    const off = await admin.browser.post(clientUrl(id), { csrf, intent: "deactivate" });
    expect(off.status).toBe(302);
    expect((await stored(id))!.status).toBe("inactive");
    expect(await tokenStatus(id, secret)).toBe("401 invalid_client");
    expect(textOf(await (await admin.browser.get(`${porta.baseUrl}${off.headers.get("location")!}`)).text())).toContain("The client was deactivated.");

    expect((await admin.browser.post(clientUrl(id), { csrf, intent: "activate" })).status).toBe(302);
    expect((await stored(id))!.status).toBe("active");
    expect(await tokenStatus(id, secret)).toBe(200);

    const deleted = await admin.browser.post(clientUrl(id), { csrf, intent: "delete" });
    expect(deleted.headers.get("location")).toBe(`/console/organizations/${org.id}/clients?done=deleted`);
    expect(await stored(id)).toBeNull();
    expect(textOf(await (await admin.browser.get(`${porta.baseUrl}${deleted.headers.get("location")!}`)).text())).toContain("The client was deleted.");
    expect((await admin.browser.get(clientUrl(id))).status).toBe(404);
    expect(await tokenStatus(id, secret)).toBe("401 invalid_client");
  });

  it("lists the client's history newest first, a page at a time", async () => {
    const { id } = await machineClient("Busy machine");
    for (let i = 0; i < 11; i++) {
      expect((await api.put(`/clients/${id}/login-methods`, { loginMethods: ["password"] })).status).toBe(200);
      expect((await api.delete(`/clients/${id}/login-methods`)).status).toBe(200);
    }
    expect((await api.post(`/clients/${id}/secrets`, {})).status).toBe(201);
    const first = await (await admin.browser.get(clientUrl(id))).text();
    const text = textOf(first);
    expect(text).toContain("History");
    expect(text).toContain("client.secret_generated");
    expect(text).toContain("client.login_methods_cleared");
    expect(text.indexOf("client.secret_generated")).toBeLessThan(text.indexOf("client.login_methods_cleared"));
    expect(first.match(/<code>client\.[a-z_]+<\/code>/g)).toHaveLength(10);
    expect(first).toContain(`href="/console/audit?targetId=${id}"`);
    const nextLink = /<a [^>]*rel="next"[^>]*>/.exec(first)![0];
    const next = /href="([^"]+)"/.exec(nextLink)![1]!.replaceAll("&amp;", "&");
    const second = textOf(await (await admin.browser.get(new URL(next, clientUrl(id)).href)).text());
    expect(second).toContain("client.login_methods_updated");
    expect(second.match(/client\.[a-z_]+/g)!.length).toBeGreaterThan(0);
    expect(second).not.toContain("client.secret_generated");
  });
});

describe("application page", () => {
  const moduleOf = (appId: string, name: string) => prisma().applicationModule.findFirst({ where: { applicationId: appId, name } });

  it("lists the application's clients; its new-client link opens the form with the application chosen, and the client is made for it", async () => {
    const app = await createApplication(prisma(), org.id, { name: "Storefront" });
    const empty = textOf((await pageWithCsrf(admin.browser, appUrl(app.id))).html);
    expect(empty).toContain("No client belongs to this application yet");
    expect(empty).toContain("a client is one way of signing in to it");
    const html = (await pageWithCsrf(admin.browser, appUrl(app.id))).html;
    const link = /href="([^"]*clients\?applicationId=[^"#]*)(#[^"]*)?"/.exec(html)![1]!.replaceAll("&amp;", "&");
    const form = await pageWithCsrf(admin.browser, `${porta.baseUrl}${link}`);
    expect(form.html).toMatch(new RegExp(`<option value="${app.id}" selected="">Storefront</option>`));
    const created = await admin.browser.post(`${porta.baseUrl}${link}`, { csrf: form.csrf, name: "Storefront web", clientType: "confidential", applicationId: app.id, redirectUris: "https://store.example.com/cb", loginMode: "inherit" });
    expect(created.status).toBe(200);
    const client = await prisma().client.findFirstOrThrow({ where: { organizationId: org.id, name: "Storefront web" } });
    expect(client.applicationId).toBe(app.id);
    const listed = textOf((await pageWithCsrf(admin.browser, appUrl(app.id))).html);
    expect(listed).toContain("Clients of this application");
    expect(listed).toContain("Storefront web");
    expect(listed).not.toContain("No client belongs to this application yet");
    // Without coming from an application, the form picks none.
    const plain = (await pageWithCsrf(admin.browser, `${porta.baseUrl}/console/organizations/${org.id}/clients`)).html;
    expect(plain).toMatch(/<option value="" selected="">No application<\/option>/);
  });

  it("saves an edit; a stale version gets the conflict view; bad input writes nothing", async () => {
    const app = await createApplication(prisma(), org.id, { name: "Portal" });
    const { html, csrf } = await pageWithCsrf(admin.browser, appUrl(app.id));
    const version = versionOf(html);
    const saved = await admin.browser.post(appUrl(app.id), { csrf, intent: "update", version, name: "Customer portal", description: "Where customers sign in" });
    expect(saved.headers.get("location")).toBe(`/console/organizations/${org.id}/applications/${app.id}?done=saved`);
    expect(await prisma().application.findUnique({ where: { id: app.id } })).toMatchObject({ name: "Customer portal", description: "Where customers sign in" });
    expect(textOf(await (await admin.browser.get(`${porta.baseUrl}${saved.headers.get("location")!}`)).text())).toContain("The application was saved.");

    const stale = await admin.browser.post(appUrl(app.id), { csrf, intent: "update", version, name: "Staff portal", description: "" });
    expect(stale.status).toBe(409);
    const text = textOf(await stale.text());
    expect(text).toContain("Someone else saved this application while you were editing it.");
    expect(text).toContain("Customer portal");
    expect(text).toContain("Staff portal");
    expect((await prisma().application.findUniqueOrThrow({ where: { id: app.id } })).name).toBe("Customer portal");

    const current = versionOf((await pageWithCsrf(admin.browser, appUrl(app.id))).html);
    const bad = await admin.browser.post(appUrl(app.id), { csrf, intent: "update", version: current, name: "", description: "x".repeat(2001) });
    expect(bad.status).toBe(422);
    const badHtml = await bad.text();
    expect(badHtml).toMatch(/id="app-name-error"[^>]*>must not be empty</);
    expect(badHtml).toMatch(/id="app-description-error"[^>]*>must have at most 2000 characters</);
    expect(await prisma().application.findUnique({ where: { id: app.id } })).toMatchObject({ name: "Customer portal", version: Number(current) });
  });

  it("adds, edits, deactivates, activates and deletes a module", async () => {
    const app = await createApplication(prisma(), org.id, { name: "Modular" });
    const { csrf } = await pageWithCsrf(admin.browser, appUrl(app.id));

    const bad = await admin.browser.post(appUrl(app.id), { csrf, intent: "addModule", name: " ", description: "" });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toMatch(/id="module-name-error"[^>]*>must not be empty</);
    expect(await prisma().applicationModule.count({ where: { applicationId: app.id } })).toBe(0);

    const added = await admin.browser.post(appUrl(app.id), { csrf, intent: "addModule", name: "Invoices", description: "Bills" });
    expect(added.headers.get("location")).toContain("done=addModule");
    const module = (await moduleOf(app.id, "Invoices"))!;
    expect(module).toMatchObject({ description: "Bills", status: "active" });
    const page = textOf(await (await admin.browser.get(`${porta.baseUrl}${added.headers.get("location")!}`)).text());
    expect(page).toContain("The module was added.");
    expect(page).toContain("Invoices");
    expect(page).toContain("Deactivate the module Invoices?");

    const edited = await admin.browser.post(appUrl(app.id), { csrf, intent: "updateModule", moduleId: module.id, name: "Invoicing", description: "" });
    expect(edited.headers.get("location")).toContain("done=updateModule");
    expect(await prisma().applicationModule.findUnique({ where: { id: module.id } })).toMatchObject({ name: "Invoicing", description: null });
    const badEdit = await admin.browser.post(appUrl(app.id), { csrf, intent: "updateModule", moduleId: module.id, name: "", description: "" });
    expect(badEdit.status).toBe(422);
    expect(await badEdit.text()).toMatch(new RegExp(`id="module-${module.id}-name-error"[^>]*>must not be empty<`));
    expect((await prisma().applicationModule.findUniqueOrThrow({ where: { id: module.id } })).name).toBe("Invoicing");

    expect((await admin.browser.post(appUrl(app.id), { csrf, intent: "deactivateModule", moduleId: module.id })).headers.get("location")).toContain("done=deactivateModule");
    expect((await prisma().applicationModule.findUniqueOrThrow({ where: { id: module.id } })).status).toBe("inactive");
    expect(textOf(await (await admin.browser.get(appUrl(app.id))).text())).toContain("Activate Invoicing");
    expect((await admin.browser.post(appUrl(app.id), { csrf, intent: "activateModule", moduleId: module.id })).status).toBe(302);
    expect((await prisma().applicationModule.findUniqueOrThrow({ where: { id: module.id } })).status).toBe("active");

    const deleted = await admin.browser.post(appUrl(app.id), { csrf, intent: "deleteModule", moduleId: module.id });
    expect(deleted.headers.get("location")).toContain("done=deleteModule");
    expect(await prisma().applicationModule.findUnique({ where: { id: module.id } })).toBeNull();
    expect(textOf(await (await admin.browser.get(`${porta.baseUrl}${deleted.headers.get("location")!}`)).text())).toContain("The module was deleted.");
  });

  it("lists the application's history with module changes, newest first", async () => {
    const app = await createApplication(prisma(), org.id, { name: "Historic" });
    const { csrf, html } = await pageWithCsrf(admin.browser, appUrl(app.id));
    await admin.browser.post(appUrl(app.id), { csrf, intent: "update", version: versionOf(html), name: "Historic app", description: "" });
    await admin.browser.post(appUrl(app.id), { csrf, intent: "addModule", name: "Archive", description: "" });
    const text = textOf(await (await admin.browser.get(appUrl(app.id))).text());
    expect(text).toContain("application.updated");
    expect(text).toContain("application.module_added");
    expect(text.indexOf("application.module_added")).toBeLessThan(text.indexOf("application.updated"));
  });

  it("keeps the custom claim form working", async () => {
    const app = await createApplication(prisma(), org.id, { name: "Claimed" });
    const { csrf } = await pageWithCsrf(admin.browser, appUrl(app.id));
    const res = await admin.browser.post(appUrl(app.id), { csrf, intent: "createClaim", claimName: "tier", claimType: "string", scope: "claimed" });
    expect(res.headers.get("location")).toContain("done=claim");
    expect(await prisma().customClaimDefinition.count({ where: { applicationId: app.id, claimName: "tier" } })).toBe(1);
  });

  it("refuses to delete an application that still has clients, then deletes it", async () => {
    const app = await createApplication(prisma(), org.id, { name: "Leaving" });
    const { client } = await createClient(prisma(), org.id, { applicationId: app.id });
    const { csrf, html } = await pageWithCsrf(admin.browser, appUrl(app.id));
    expect(textOf(html)).toContain("Delete Leaving with its modules and custom claims? This cannot be undone.");
    const refused = await admin.browser.post(appUrl(app.id), { csrf, intent: "delete" });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toMatch(/role="alert"[^>]*>[^<]*client/i);
    expect(await prisma().application.findUnique({ where: { id: app.id } })).not.toBeNull();

    await prisma().client.delete({ where: { id: client.id } });
    const deleted = await admin.browser.post(appUrl(app.id), { csrf, intent: "delete" });
    expect(deleted.headers.get("location")).toBe(`/console/organizations/${org.id}/applications?done=deleted`);
    expect(await prisma().application.findUnique({ where: { id: app.id } })).toBeNull();
    expect(textOf(await (await admin.browser.get(`${porta.baseUrl}${deleted.headers.get("location")!}`)).text())).toContain("The application was deleted.");
  });
});

describe("CSRF", () => {
  it("refuses client and application forms without the session's token and changes nothing", async () => {
    const { id } = await machineClient("Guarded machine");
    const app = await createApplication(prisma(), org.id, { name: "Guarded app" });
    const clientBefore = await stored(id);
    const appBefore = await prisma().application.findUnique({ where: { id: app.id } });
    for (const csrf of [undefined, "forged"]) {
      const extra: Record<string, string> = csrf ? { csrf } : {};
      expect((await admin.browser.post(clientUrl(id), { ...extra, intent: "deactivate" })).status).toBe(403);
      expect((await admin.browser.post(clientUrl(id), { ...extra, intent: "generateSecret" })).status).toBe(403);
      expect((await admin.browser.post(clientUrl(id), { ...extra, intent: "delete" })).status).toBe(403);
      expect((await admin.browser.post(appUrl(app.id), { ...extra, intent: "addModule", name: "Sneaky" })).status).toBe(403);
      expect((await admin.browser.post(appUrl(app.id), { ...extra, intent: "delete" })).status).toBe(403);
    }
    expect(await stored(id)).toEqual(clientBefore);
    expect(await prisma().clientSecret.count({ where: { clientId: id } })).toBe(1);
    expect(await prisma().application.findUnique({ where: { id: app.id } })).toEqual(appBefore);
    expect(await prisma().applicationModule.count({ where: { applicationId: app.id } })).toBe(0);
  });
});
