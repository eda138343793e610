import { expect, test, type Browser, type Page } from "@playwright/test";
import * as oidc from "openid-client";
import { watchForPageErrors } from "./console-helpers";
import { callbackAfter, checkPage } from "./journey-helpers";
import { readSeed, RP_REDIRECT_URI, type Seed } from "./seed";

/**
 * Setup links (decision 089) in Debian Chromium: a service admin creates an organization and a
 * setup link through the Admin API; in another browser the customer's IT person opens it, connects
 * the company's SAML IdP (e2e/saml-idp.ts), proves the email domain (copying the record into the
 * company's DNS, e2e/company-dns.ts) and issues a SCIM token. A SCIM client then provisions a
 * person, who signs in through the IdP to the account it made; the client changes their email and
 * deprovisions them. A third browser opening the same link is refused.
 */
let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

const ADMIN_REDIRECT = "http://127.0.0.1:53682/callback";
const SCIM_JSON = "application/scim+json";

/** A service admin's Admin API token, as the CLI gets one: code flow with PKCE for the `porta-admin` client. */
async function adminToken(page: Page, admin: { email: string; password: string }): Promise<string> {
  const config = await oidc.discovery(new URL(`${seed.baseUrl}/porta-admin`), "porta-admin", undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, { redirect_uri: ADMIN_REDIRECT, scope: "openid profile email roles", code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256", state });
  await page.goto(url.href);
  await page.getByLabel("Email address", { exact: true }).fill(admin.email);
  await page.getByLabel("Password", { exact: true }).fill(admin.password);
  const callback = await callbackAfter(page, ADMIN_REDIRECT, () => page.getByRole("button", { name: "Sign in", exact: true }).click());
  const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
  return tokens.access_token;
}

async function inNewBrowser<T>(browser: Browser, work: (page: Page) => Promise<T>): Promise<T> {
  const context = await browser.newContext({ locale: "en-US" });
  try {
    return await work(await context.newPage());
  } finally {
    await context.close();
  }
}

test("a setup link lets the customer's IT person connect SAML, prove the domain and issue a SCIM token that provisions, updates and deprovisions a person who signs in through the IdP", async ({ browser }, testInfo) => {
  const setup = seed.setupLinks!;
  const token = await inNewBrowser(browser, (page) => adminToken(page, setup.admin));
  const admin = async <T,>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${seed.baseUrl}/api/admin${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) }, body: body ? JSON.stringify(body) : null });
    const text = await res.text();
    expect(res.ok, `${method} ${path}: ${text}`).toBe(true);
    return JSON.parse(text) as T;
  };

  // The service admin: an organization whose people sign in through their company, a client, a setup link.
  const slug = `e2e-setup-${Date.now().toString(36)}`;
  const org = await admin<{ id: string }>("POST", "/organizations", { name: "Acme Setup Co", slug, defaultLoginMethods: ["password", "federated"] });
  const client = await admin<{ id: string }>("POST", "/clients", { organizationId: org.id, name: "Acme intranet", clientType: "public", redirectUris: [RP_REDIRECT_URI], skipConsent: true });
  const link = await admin<{ id: string; url: string; status: string }>("POST", `/organizations/${org.id}/setup-links`, { note: "Acme IT", expiresInDays: 2 });
  expect(link.status).toBe("pending");

  // The IT person, in a browser of their own.
  const scimToken = await inNewBrowser(browser, async (page) => {
    const problems = watchForPageErrors(page);
    await page.goto(link.url);
    // The token is dropped from the address at once.
    await expect(page).toHaveURL(`${seed.baseUrl}/${slug}/setup`);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Set up sign-in for Acme Setup Co");
    await checkPage(page, testInfo, "setup-link-1-start");

    const connect = page.locator("form", { has: page.getByRole("heading", { name: "Connect an identity provider" }) });
    await connect.getByLabel("Name", { exact: true }).fill("Acme Workforce");
    await connect.getByLabel("Type").selectOption("saml");
    await connect.getByLabel("Issuer URL").fill(setup.idp.entityId);
    await connect.getByLabel("Email domains").fill(setup.idp.domain);
    await connect.getByRole("checkbox", { name: /Create accounts for new people/ }).check();
    await connect.getByRole("checkbox", { name: /Treat emails of this provider's domains as verified/ }).check();
    await connect.getByLabel("IdP single sign-on URL (HTTP-Redirect)").fill(setup.idp.ssoUrl);
    await connect.getByLabel("IdP signing certificate (PEM or base64)").fill(setup.idp.certificate);
    await connect.getByRole("button", { name: "Add identity provider" }).click();
    await expect(page.getByText("The identity provider is connected.")).toBeVisible();
    // What the IdP's administrator registers there.
    await expect(page.getByText(new RegExp(`/${slug}/saml/[0-9a-f-]{36}/acs`)).first()).toBeVisible();

    const addDomain = page.locator("form", { has: page.getByRole("heading", { name: "Add domain" }) });
    await addDomain.getByLabel("Domain").fill(setup.idp.domain);
    await addDomain.getByRole("button", { name: "Add domain" }).click();
    await expect(page.getByText(`_porta-challenge.${setup.idp.domain}`).first()).toBeVisible();
    // The IT person copies the record into the company's DNS, then verifies.
    const value = await page.locator("code", { hasText: "porta-domain-verification=" }).first().textContent();
    const entered = await fetch(setup.dnsConsole, { method: "POST", body: JSON.stringify({ name: `_porta-challenge.${setup.idp.domain}`, value }) });
    expect(entered.status).toBe(204);
    await page.getByRole("button", { name: "Verify now" }).click();
    await expect(page.getByRole("cell", { name: "Verified" })).toBeVisible();

    const issue = page.locator("form", { has: page.getByRole("heading", { name: "Issue token" }) });
    await issue.getByLabel("Name").fill("Acme provisioning");
    await issue.getByRole("button", { name: "Issue token" }).click();
    const issued = await page.locator("#scim-token").inputValue();
    expect(issued).toMatch(/^porta_scim_/);
    await checkPage(page, testInfo, "setup-link-2-configured");

    await page.getByRole("button", { name: "Finish setup" }).click();
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Setup finished");
    expect(problems).toEqual([]);
    return issued;
  });

  // Anyone opening the link now is refused, with whom to ask.
  await inNewBrowser(browser, async (page) => {
    await page.goto(link.url);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("This setup link does not work");
    await expect(page.getByText("Ask the person who sent you the link for a new one.")).toBeVisible();
  });
  const listed = await admin<{ data: Array<{ id: string; status: string }> }>("GET", `/organizations/${org.id}/setup-links`);
  expect(listed.data.find((l) => l.id === link.id)?.status).toBe("finished");

  // The company's SCIM client provisions the person.
  const scim = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${seed.baseUrl}/${slug}/scim/v2${path}`, { method, headers: { authorization: `Bearer ${scimToken}`, ...(body ? { "content-type": SCIM_JSON } : {}) }, body: body ? JSON.stringify(body) : null });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const person = setup.idp.person;
  const created = await scim("POST", "/Users", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: person.email, name: { givenName: person.givenName, familyName: person.familyName }, emails: [{ value: person.email, primary: true }], active: true });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const userId = String(created.body.id);

  // They sign in through the company's IdP, to the account SCIM made.
  const claims = await inNewBrowser(browser, async (page) => {
    const config = await oidc.discovery(new URL(`${seed.baseUrl}/${slug}`), client.id, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: RP_REDIRECT_URI, scope: "openid email", code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256", state });
    await page.goto(url.href);
    await page.getByRole("button", { name: "Sign in with Acme Workforce" }).click();
    await expect(page).toHaveURL(/^http:\/\/127\.0\.0\.1:3964\/sso\?SAMLRequest=/);
    await page.getByRole("button", { name: `Sign in as ${person.givenName} ${person.familyName}` }).click();
    const callback = await callbackAfter(page, RP_REDIRECT_URI, () => page.getByRole("button", { name: "Continue to the application" }).click());
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
    return tokens.claims()!;
  });
  expect(claims.sub).toBe(userId);
  expect(claims.email).toBe(person.email);

  // The SCIM client changes their email, then deprovisions them.
  const newEmail = `ada.lovelace@${setup.idp.domain}`;
  const updated = await scim("PATCH", `/Users/${userId}`, { schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [{ op: "replace", path: "emails", value: [{ value: newEmail, primary: true }] }] });
  expect(updated.status, JSON.stringify(updated.body)).toBe(200);
  expect((await scim("GET", `/Users/${userId}`)).body).toMatchObject({ userName: newEmail, active: true });
  const deprovisioned = await scim("PATCH", `/Users/${userId}`, { schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [{ op: "replace", path: "active", value: false }] });
  expect(deprovisioned.status, JSON.stringify(deprovisioned.body)).toBe(200);
  expect((await scim("GET", `/Users/${userId}`)).body).toMatchObject({ active: false });

  // Everything the IT person did is in the audit trail as the link.
  const audit = await admin<{ data: Array<{ eventType: string; actorType: string; actorId: string | null }> }>("GET", `/audit?organizationId=${org.id}&actorId=${link.id}&pageSize=100`);
  const byLink = audit.data.filter((e) => e.actorType === "setup_link" && e.actorId === link.id).map((e) => e.eventType);
  expect(byLink).toEqual(expect.arrayContaining(["setup_link.opened", "identity_provider.created", "domain.added", "domain.verified", "scim_token.created", "setup_link.finished"]));
});
