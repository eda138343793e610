import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { csrfOf } from "../support/browser";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createUserInState, freshTotpCode, mainOf, RetryingBrowser, type Tenant, type TestUser } from "../two-factor/helpers";
import { createAdministeredTenant } from "./helpers";

/**
 * An organization's own console at /{slug}/console (decision 090): its administrators sign in
 * through the organization's issuer with its built-in client (password, then their second
 * factor), see their organization's users only, and act on them through the organization's door.
 */
let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
let tenantA: Tenant;
let tenantB: Tenant;
let adminA: TestUser;

async function roleId(organizationId: string, name: string): Promise<string> {
  return (await porta.services.db.prisma.role.findUniqueOrThrow({ where: { organizationId_name: { organizationId, name } } })).id;
}

async function userWithRole(tenant: Tenant, role: string | null, state: "totp" | "none" = "totp"): Promise<TestUser> {
  const user = await createUserInState(porta, tenant, state);
  if (role) expect((await api.put(`/users/${user.id}/roles/${await roleId(tenant.org.id, role)}`)).status).toBe(200);
  return user;
}

beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  tenantA = await createAdministeredTenant(porta, api);
  tenantB = await createAdministeredTenant(porta, api);
  adminA = await userWithRole(tenantA, "org-admin");
}, 120_000);
afterAll(async () => {
  await porta?.stop();
});

const consoleUrl = (tenant: Tenant, path = "") => `${porta.baseUrl}/${tenant.org.slug}/console${path}`;

/** Opens the console, signs in on the organization's pages (password, then TOTP when enrolled); returns the browser and where it ended. */
async function signInToConsole(tenant: Tenant, user: TestUser) {
  const browser = new RetryingBrowser();
  const first = await browser.get(consoleUrl(tenant));
  expect(first.status).toBe(302);
  const login = await browser.follow(first, consoleUrl(tenant));
  expect(login.url).toContain("/interaction/");
  const posted = await browser.post(login.url, { csrf: csrfOf(await login.res.text()), email: user.email, password: "a long test password 1" });
  let step = await browser.follow(posted, login.url);
  if (step.url.endsWith("/two-factor")) {
    const html = await step.res.text();
    const action = /<form[^>]*action="([^"]*)"/.exec(mainOf(html))?.[1]?.replace(/&amp;/g, "&") ?? step.url;
    const verified = await browser.post(new URL(action, step.url).href, { csrf: csrfOf(html), intent: "verify", method: "totp", code: await freshTotpCode(porta, user.id, user.totpSecret!) });
    step = await browser.follow(verified, step.url);
  }
  return { browser, url: step.url, res: step.res };
}

describe("an organization's console", () => {
  it("signs an administrator in with a second factor and lists the organization's users only", async () => {
    const userB = await createUser(porta.services.db.prisma, tenantB.org.id);
    const { browser, url, res } = await signInToConsole(tenantA, adminA);
    expect(url).toBe(consoleUrl(tenantA));
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain(adminA.email);
    expect(html).not.toContain(userB.email);

    // Another organization's user is not found, whatever the address says.
    const elsewhere = await browser.get(consoleUrl(tenantA, `/users/${userB.id}`));
    expect(elsewhere.status).toBe(404);
    await elsewhere.arrayBuffer();
  }, 60_000);

  it("invites a colleague as an administrator of the organization", async () => {
    const { browser } = await signInToConsole(tenantA, adminA);
    const csrf = csrfOf(await (await browser.get(consoleUrl(tenantA))).text());
    const email = `colleague-${Date.now()}@example.com`;
    const posted = await browser.post(consoleUrl(tenantA, "?index"), { csrf, email, orgAdmin: "yes" });
    expect(posted.status).toBe(302);
    const invitation = await porta.services.db.prisma.invitation.findFirstOrThrow({ where: { organizationId: tenantA.org.id, email } });
    expect(invitation.roles).toEqual(["org-admin"]);
    const refused = await browser.post(consoleUrl(tenantA, "?index"), { csrf, email: "not an address" });
    expect(refused.status).toBe(422);
  }, 60_000);

  it("deactivates a user of the organization, recorded as the organization's administrator", async () => {
    const user = await createUser(porta.services.db.prisma, tenantA.org.id);
    const { browser } = await signInToConsole(tenantA, adminA);
    const page = await browser.get(consoleUrl(tenantA, `/users/${user.id}`));
    expect(page.status).toBe(200);
    const posted = await browser.post(consoleUrl(tenantA, `/users/${user.id}`), { csrf: csrfOf(await page.text()), intent: "deactivate" });
    expect(posted.status).toBe(302);
    expect((await porta.services.db.prisma.user.findUniqueOrThrow({ where: { id: user.id } })).status).toBe("inactive");
    const entry = await porta.services.db.prisma.auditEntry.findFirstOrThrow({ where: { targetId: user.id, eventType: "user.deactivated" } });
    expect(entry).toMatchObject({ actorType: "org_admin", actorId: adminA.id, organizationId: tenantA.org.id });

    // Without the session's CSRF token: refused, nothing changes.
    const other = await createUser(porta.services.db.prisma, tenantA.org.id);
    expect((await browser.post(consoleUrl(tenantA, `/users/${other.id}`), { csrf: "forged", intent: "deactivate" })).status).toBe(403);
    expect((await porta.services.db.prisma.user.findUniqueOrThrow({ where: { id: other.id } })).status).toBe("active");
  }, 60_000);

  it("issues a SCIM token shown once, revokes it, and cannot revoke another organization's", async () => {
    const { browser } = await signInToConsole(tenantA, adminA);
    const page = await browser.get(consoleUrl(tenantA, "/scim"));
    expect(page.status).toBe(200);
    const csrf = csrfOf(await page.text());
    const issued = await browser.post(consoleUrl(tenantA, "/scim"), { csrf, intent: "issue", name: "Entra ID", expiresInDays: "30" });
    expect(issued.status).toBe(200);
    const value = /id="scim-token"[^>]*value="(porta_scim_[^"]+)"/.exec(await issued.text())?.[1];
    expect(value).toMatch(/^porta_scim_/);
    const token = await porta.services.db.prisma.scimToken.findFirstOrThrow({ where: { organizationId: tenantA.org.id, name: "Entra ID" } });
    expect((await browser.post(consoleUrl(tenantA, "/scim"), { csrf, intent: "revoke", tokenId: token.id })).status).toBe(302);
    expect((await porta.services.db.prisma.scimToken.findUniqueOrThrow({ where: { id: token.id } })).revokedAt).not.toBeNull();

    const theirs = await porta.services.db.prisma.scimToken.create({
      data: { organizationId: tenantB.org.id, name: "Theirs", tokenHash: `hash-${token.id}`, prefix: "porta_scim_abcd", expiresAt: new Date(Date.now() + 86_400_000) },
    });
    expect((await browser.post(consoleUrl(tenantA, "/scim"), { csrf, intent: "revoke", tokenId: theirs.id })).status).toBe(404);
    expect((await porta.services.db.prisma.scimToken.findUniqueOrThrow({ where: { id: theirs.id } })).revokedAt).toBeNull();
  }, 60_000);

  it("adds a domain with its TXT record to the organization", async () => {
    const { browser } = await signInToConsole(tenantA, adminA);
    const page = await browser.get(consoleUrl(tenantA, "/domains"));
    expect(page.status).toBe(200);
    const added = await browser.post(consoleUrl(tenantA, "/domains"), { csrf: csrfOf(await page.text()), intent: "add", domain: "self-service.example.com" });
    expect(added.status).toBe(302);
    const row = await porta.services.db.prisma.organizationDomain.findFirstOrThrow({ where: { organizationId: tenantA.org.id, domain: "self-service.example.com" } });
    const listed = await browser.get(consoleUrl(tenantA, "/domains"));
    expect(await listed.text()).toContain(row.verificationToken);
  }, 60_000);

  it("streams the organization's audit log: adds a sink, and cannot delete another organization's", async () => {
    const { browser } = await signInToConsole(tenantA, adminA);
    const page = await browser.get(consoleUrl(tenantA, "/audit-sinks"));
    expect(page.status).toBe(200);
    const csrf = csrfOf(await page.text());
    const added = await browser.post(consoleUrl(tenantA, "/audit-sinks"), { csrf, intent: "create", name: "Our SIEM", kind: "splunk_hec", url: "https://siem.example.com:8088", secret: "hec-token-4321", eventFamilies: "domain.*" });
    expect(added.status).toBe(302);
    const sink = await porta.services.db.prisma.auditSink.findFirstOrThrow({ where: { organizationId: tenantA.org.id } });
    expect(sink).toMatchObject({ name: "Our SIEM", kind: "splunk_hec", secretLast4: "4321", eventFamilies: ["domain.*"] });
    const listed = await (await browser.get(consoleUrl(tenantA, "/audit-sinks"))).text();
    expect(listed).toContain("Our SIEM");
    expect(listed).not.toContain("hec-token-4321");
    const other = await porta.services.db.prisma.auditSink.create({ data: { organizationId: tenantB.org.id, name: "B's SIEM", kind: "jsonl", url: "https://b.example.com/ingest" } });
    const refused = await browser.post(consoleUrl(tenantA, "/audit-sinks"), { csrf, intent: "delete", sinkId: other.id });
    expect(refused.status).toBe(404);
    expect(await porta.services.db.prisma.auditSink.count({ where: { id: other.id } })).toBe(1);
  }, 60_000);

  it("creates and renames an OpenID Connect connection of the organization; another organization's is not found", async () => {
    const { browser } = await signInToConsole(tenantA, adminA);
    const list = await browser.get(consoleUrl(tenantA, "/identity-providers"));
    expect(list.status).toBe(200);
    const created = await browser.post(consoleUrl(tenantA, "/identity-providers"), {
      csrf: csrfOf(await list.text()),
      kind: "oidc",
      name: "Corporate SSO",
      issuer: "https://sso.example.com",
      clientId: "porta",
      clientSecret: "upstream secret",
      scopes: "openid email profile",
    });
    expect(created.status, await created.clone().text()).toBe(302);
    const provider = await porta.services.db.prisma.identityProvider.findFirstOrThrow({ where: { organizationId: tenantA.org.id, name: "Corporate SSO" } });
    expect(created.headers.get("location")).toBe(`/${tenantA.org.slug}/console/identity-providers/${provider.id}?done=created`);
    const detail = await browser.get(consoleUrl(tenantA, `/identity-providers/${provider.id}`));
    expect(detail.status).toBe(200);
    expect(await detail.text()).toContain("Corporate SSO");

    const theirs = await porta.services.db.prisma.identityProvider.create({ data: { organizationId: tenantB.org.id, name: "Theirs", issuer: "https://sso.example.com", clientId: "porta" } });
    const elsewhere = await browser.get(consoleUrl(tenantA, `/identity-providers/${theirs.id}`));
    expect(elsewhere.status).toBe(404);
    await elsewhere.arrayBuffer();
  }, 60_000);

  it("refuses a user without an organization role, and an administrator without a second factor", async () => {
    for (const user of [await userWithRole(tenantA, null), await userWithRole(tenantA, "org-admin", "none")]) {
      const { url } = await signInToConsole(tenantA, user);
      expect(url).toBe(consoleUrl(tenantA, "/refused"));
    }
  }, 60_000);
});
