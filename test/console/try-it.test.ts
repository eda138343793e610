import { exportJWK, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { csrfOf } from "../support/browser";
import { createClient, createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, PASSWORD, unique } from "../admin/helpers";
import { consoleSignIn, pageWithCsrf, type ConsoleVisit } from "./helpers";

/**
 * "Try it" on a client's page, as the operator's browser does it: the button adds Porta's test
 * page to the client's redirect URIs when asked, runs the client's code flow at the
 * organization's own pages (sign-in as a person of that organization, consent), and the test page
 * shows the verified ID token. A confidential client's trial secret is gone afterwards.
 */
let porta: TestPorta;
let admin: ConsoleVisit;

beforeAll(async () => {
  porta = await startTestPorta();
  admin = await consoleSignIn(porta);
});
afterAll(async () => {
  await porta?.stop();
});

async function signInAndAllow(location: string, person: { email: string; password: string }) {
  const browser = admin.browser;
  const login = await browser.follow(await browser.get(location), location);
  expect(login.res.status).toBe(200);
  const loginHtml = await login.res.text();
  expect(loginHtml).toContain('name="password"');
  const posted = await browser.post(login.url, { csrf: csrfOf(loginHtml), email: person.email, password: person.password });
  let step = await browser.follow(posted, login.url);
  if (step.url.includes("/interaction/") && step.res.status === 200) {
    const allow = await browser.post(`${step.url}/consent`, { csrf: csrfOf(await step.res.text()), decision: "allow" });
    step = await browser.follow(allow, `${step.url}/consent`);
  }
  return step;
}

describe("Try it", () => {
  it("adds the test page on request, signs a person of the organization in and shows the verified ID token; the trial's secret is revoked", async () => {
    const tenant = await createTenant(porta);
    const prisma = porta.services.db.prisma;
    const person = await createUser(prisma, tenant.org.id, { email: `${unique("tried")}@example.com`, password: PASSWORD });
    const page = `${porta.baseUrl}/console/organizations/${tenant.org.id}/clients/${encodeURIComponent(tenant.clientId)}`;
    const { csrf, html } = await pageWithCsrf(admin.browser, page);
    expect(html).toContain("Add the test page and try it");
    const secretsBefore = await prisma.clientSecret.count({ where: { clientId: tenant.clientId } });

    const started = await admin.browser.post(page, { csrf, intent: "tryItAddRedirect" });
    expect(started.status).toBe(302);
    const location = started.headers.get("location")!;
    expect(location.startsWith(`${tenant.issuer}/auth/authorize?`)).toBe(true);
    const client = await prisma.client.findUniqueOrThrow({ where: { id: tenant.clientId }, include: { secrets: true } });
    expect(client.redirectUris).toContain(`${porta.baseUrl}/console/try-it/callback`);
    // The trial's own secret, expiring within minutes, exists while the person signs in.
    const trialSecret = client.secrets.find((s) => s.label === "Try it (console)");
    expect(trialSecret?.expiresAt && trialSecret.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(15 * 60_000);

    const result = await signInAndAllow(location, { email: person.email, password: PASSWORD });
    expect(result.url.startsWith(`${porta.baseUrl}/console/try-it/callback?`)).toBe(true);
    expect(result.res.status).toBe(200);
    const shown = await result.res.text();
    expect(shown).toContain("Signed in. The ID token&#x27;s signature (ES256) was verified");
    expect(shown).toContain(`<code>${person.id}</code>`);
    expect(shown).toContain(`<code>${tenant.clientId}</code>`);
    const after = await prisma.clientSecret.findUniqueOrThrow({ where: { id: trialSecret!.id } });
    expect(after.revokedAt).not.toBeNull();
    expect(await prisma.clientSecret.count({ where: { clientId: tenant.clientId, revokedAt: null } })).toBe(secretsBefore);

    // The same state again: the trial was used up.
    const again = await admin.browser.get(result.url);
    expect(again.status).toBe(404);
    expect(await again.text()).toContain("This trial is unknown");
  });

  it("tries a public client with PKCE alone, and says why a client that signs with its own key cannot be tried", async () => {
    const tenant = await createTenant(porta);
    const prisma = porta.services.db.prisma;
    const person = await createUser(prisma, tenant.org.id, { email: `${unique("spa")}@example.com`, password: PASSWORD });
    const { client } = await createClient(prisma, tenant.org.id, { confidential: false, redirectUris: [`${porta.baseUrl}/console/try-it/callback`], skipConsent: true });
    const page = `${porta.baseUrl}/console/organizations/${tenant.org.id}/clients/${encodeURIComponent(client.id)}`;
    const { csrf, html } = await pageWithCsrf(admin.browser, page);
    expect(html).not.toContain("Add the test page and try it");
    const started = await admin.browser.post(page, { csrf, intent: "tryIt" });
    expect(started.status).toBe(302);
    const result = await signInAndAllow(started.headers.get("location")!, { email: person.email, password: PASSWORD });
    expect(await result.res.text()).toContain(`<code>${person.email}</code>`);

    const { publicKey } = await generateKeyPair("ES256");
    const jwk = { ...(await exportJWK(publicKey)), kid: "rp-key", alg: "ES256", use: "sig" };
    const keyed = await prisma.client.update({ where: { id: tenant.clientId }, data: { tokenEndpointAuthMethod: "private_key_jwt", jwks: { keys: [jwk] } } });
    const keyedPage = await pageWithCsrf(admin.browser, `${porta.baseUrl}/console/organizations/${tenant.org.id}/clients/${encodeURIComponent(keyed.id)}`);
    expect(keyedPage.html).toContain("authenticates with its own private key");
    const refused = await admin.browser.post(`${porta.baseUrl}/console/organizations/${tenant.org.id}/clients/${encodeURIComponent(keyed.id)}`, { csrf, intent: "tryIt" });
    expect(refused.status).toBe(409);
  });

  it("refuses another browser's trial, and shows a refusal at the login page as such", async () => {
    const tenant = await createTenant(porta);
    const page = `${porta.baseUrl}/console/organizations/${tenant.org.id}/clients/${encodeURIComponent(tenant.clientId)}`;
    const { csrf } = await pageWithCsrf(admin.browser, page);
    const started = await admin.browser.post(page, { csrf, intent: "tryItAddRedirect" });
    const state = new URL(started.headers.get("location")!).searchParams.get("state")!;
    // Another admin's console session cannot finish this trial.
    const other = await consoleSignIn(porta);
    const stolen = await other.browser.get(`${porta.baseUrl}/console/try-it/callback?code=x&state=${encodeURIComponent(state)}`);
    expect(stolen.status).toBe(404);
    // The operator's own browser, back with access_denied: refused, and the trial's secret revoked.
    const denied = await admin.browser.get(`${porta.baseUrl}/console/try-it/callback?error=access_denied&state=${encodeURIComponent(state)}`);
    expect(denied.status).toBe(400);
    expect(await denied.text()).toContain("The sign-in was refused or cancelled");
    expect(await porta.services.db.prisma.clientSecret.count({ where: { clientId: tenant.clientId, label: "Try it (console)", revokedAt: null } })).toBe(0);
  });
});
