import { generateKeyPairSync, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resources } from "~/i18n/config";
import { createAccountTenant, createAccountUser, postAccount, shown, signInToAccount } from "../account/helpers";
import { consoleSignIn, pageWithCsrf } from "../console/helpers";
import { startTestPorta, type TestPorta } from "../support/porta";

/**
 * Decision 046: managing identity providers and links where people do it. The console adds, edits
 * (the secret write-only) and deletes a provider and removes a user's link; a person sees and
 * removes their own link on the account page.
 */
describe("federation: the console and the account page", () => {
  let porta: TestPorta;
  const prisma = () => porta.services.db.prisma;

  beforeAll(async () => {
    porta = await startTestPorta();
  });
  afterAll(async () => {
    await porta.stop();
  });

  it("adds, edits and deletes a provider in the console, never showing its secret", async () => {
    const tenant = await createAccountTenant(porta);
    const visit = await consoleSignIn(porta);
    const listUrl = `${porta.baseUrl}/console/organizations/${tenant.org.id}/identity-providers`;
    const list = await pageWithCsrf(visit.browser, listUrl);
    expect(list.res.status).toBe(200);
    expect(shown(list.html)).toContain(resources.en.console.idp.empty);

    // A wrong issuer is refused next to the field, nothing is written.
    const refused = await visit.browser.post(listUrl, { csrf: list.csrf, name: "Corp SSO", kind: "oidc", issuer: "not a url", clientId: "corp", clientSecret: "", flags: "enabled" });
    expect(refused.status).toBe(422);
    expect(await prisma().identityProvider.count({ where: { organizationId: tenant.org.id } })).toBe(0);

    const secret = `secret-${randomBytes(8).toString("hex")}`;
    const created = await visit.browser.post(listUrl, { csrf: list.csrf, name: "Corp SSO", kind: "oidc", issuer: "https://sso.corp.example", clientId: "corp", clientSecret: secret, domains: "corp.example", flags: "enabled" });
    expect(created.status).toBe(302);
    const detailUrl = new URL(created.headers.get("location")!, listUrl).href;
    const detail = await pageWithCsrf(visit.browser, detailUrl);
    expect(shown(detail.html)).toContain(`${porta.baseUrl}/${tenant.org.slug}/federation/callback`);
    expect(detail.html).not.toContain(secret);
    expect(shown(detail.html)).toContain(resources.en.console.idp.secretKept);

    // Saving without typing a secret keeps the stored one.
    const saved = await visit.browser.post(detailUrl, { csrf: detail.csrf, version: "1", name: "Corp single sign-on", issuer: "https://sso.corp.example", clientId: "corp", clientSecret: "", domains: "corp.example", flags: "enabled", trustUpstreamMfa: "never" });
    expect(saved.status).toBe(302);
    const row = await prisma().identityProvider.findFirstOrThrow({ where: { organizationId: tenant.org.id } });
    expect(row).toMatchObject({ name: "Corp single sign-on", trustUpstreamMfa: "never", enabled: true });
    expect(row.clientSecretEncrypted).not.toBeNull();
    expect(porta.services.encrypter.decrypt(row.clientSecretEncrypted!, `identity-provider-secret:${row.id}`)).toBe(secret);

    const deleted = await visit.browser.post(detailUrl, { csrf: detail.csrf, intent: "delete" });
    expect(deleted.status).toBe(302);
    expect(await prisma().identityProvider.count({ where: { organizationId: tenant.org.id } })).toBe(0);
  });

  it("chooses the client authentication and assumed-verified emails in the console, and shows the JWKS URL to register (decision 082)", async () => {
    const tenant = await createAccountTenant(porta);
    const visit = await consoleSignIn(porta);
    const listUrl = `${porta.baseUrl}/console/organizations/${tenant.org.id}/identity-providers`;
    const list = await pageWithCsrf(visit.browser, listUrl);
    expect(shown(list.html)).toContain(resources.en.console.idp.authMethodValue.private_key_jwt);
    const form = { csrf: list.csrf, name: "Keyed SSO", kind: "oidc", issuer: "https://sso.keyed.example", clientId: "keyed", clientSecret: "", domains: "keyed.example", flags: ["enabled", "assumeVerifiedEmails"] };

    // A secret method without a secret is refused next to the field, nothing is written.
    const refused = await visit.browser.post(listUrl, { ...form, tokenEndpointAuthMethod: "client_secret_post" });
    expect(refused.status).toBe(422);
    expect(shown(await refused.text())).toContain("is required for client_secret_post");
    expect(await prisma().identityProvider.count({ where: { organizationId: tenant.org.id } })).toBe(0);

    const created = await visit.browser.post(listUrl, { ...form, tokenEndpointAuthMethod: "private_key_jwt" });
    expect(created.status).toBe(302);
    const row = await prisma().identityProvider.findFirstOrThrow({ where: { organizationId: tenant.org.id } });
    expect(row).toMatchObject({ tokenEndpointAuthMethod: "private_key_jwt", assumeVerifiedEmails: true });
    const detailUrl = new URL(created.headers.get("location")!, listUrl).href;
    const detail = await pageWithCsrf(visit.browser, detailUrl);
    expect(shown(detail.html)).toContain(`${porta.baseUrl}/${tenant.org.slug}/federation/providers/${row.id}/jwks`);
    expect(detail.html).not.toContain(row.clientKeyEncrypted!);

    // Saving with the box cleared switches assumed-verified emails off.
    const saved = await visit.browser.post(detailUrl, { csrf: detail.csrf, version: "1", name: "Keyed SSO", issuer: "https://sso.keyed.example", clientId: "keyed", clientSecret: "", domains: "keyed.example", flags: "enabled", tokenEndpointAuthMethod: "private_key_jwt", trustUpstreamMfa: "when_asserted" });
    expect(saved.status).toBe(302);
    expect(await prisma().identityProvider.findUniqueOrThrow({ where: { id: row.id } })).toMatchObject({ assumeVerifiedEmails: false, clientKeyEncrypted: row.clientKeyEncrypted });
  });

  it("adds GitHub with its own scopes and Apple with team id, key id and the .p8 key in the console (decision 055)", async () => {
    const tenant = await createAccountTenant(porta);
    const visit = await consoleSignIn(porta);
    const listUrl = `${porta.baseUrl}/console/organizations/${tenant.org.id}/identity-providers`;
    const list = await pageWithCsrf(visit.browser, listUrl);
    expect(shown(list.html)).toContain(resources.en.console.idp.kind.github);
    expect(shown(list.html)).toContain(resources.en.console.idp.teamId);

    // An empty scopes field means the kind's own.
    const github = await visit.browser.post(listUrl, { csrf: list.csrf, name: "GitHub", kind: "github", issuer: "", clientId: "gh", clientSecret: "s", scopes: "", flags: "enabled" });
    expect(github.status).toBe(302);
    expect(await prisma().identityProvider.findFirstOrThrow({ where: { organizationId: tenant.org.id, kind: "github" } })).toMatchObject({ issuer: "https://github.com", scopes: ["read:user", "user:email"] });

    // Apple without its team id is refused next to the field; with it, stored.
    const key = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "pem", type: "pkcs8" }).toString();
    const apple = { csrf: list.csrf, name: "Apple", kind: "apple", issuer: "", clientId: "com.example.web", keyId: "KEY1234567", clientSecret: key, scopes: "", flags: "enabled" };
    const refused = await visit.browser.post(listUrl, apple);
    expect(refused.status).toBe(422);
    expect(shown(await refused.text())).toContain("is required for Apple");
    const created = await visit.browser.post(listUrl, { ...apple, teamId: "ABCDE12345" });
    expect(created.status).toBe(302);
    expect(await prisma().identityProvider.findFirstOrThrow({ where: { organizationId: tenant.org.id, kind: "apple" } })).toMatchObject({
      issuer: "https://appleid.apple.com",
      teamId: "ABCDE12345",
      keyId: "KEY1234567",
      scopes: ["openid", "email", "name"],
    });
  });

  it("shows a person's link on the account page and removes it; the console removes an administrator's way", async () => {
    const tenant = await createAccountTenant(porta);
    const user = await createAccountUser(porta, tenant);
    const provider = await prisma().identityProvider.create({ data: { organizationId: tenant.org.id, name: "Corp SSO", issuer: "https://sso.corp.example", clientId: "corp" } });
    const link = await prisma().federatedIdentity.create({ data: { organizationId: tenant.org.id, userId: user.id, providerId: provider.id, subject: "upstream-1", email: user.email } });

    const page = await signInToAccount(tenant, user.email);
    expect(shown(page.html)).toContain(resources.en.login.account.federated.title);
    expect(shown(page.html)).toContain("Corp SSO");
    const removed = await postAccount(tenant, page, { intent: "federated-remove", link: link.id });
    expect(removed.status).toBe(303);
    expect(removed.headers.get("location")).toContain("done=link_removed");
    expect(await prisma().federatedIdentity.count({ where: { userId: user.id } })).toBe(0);
    expect(await prisma().auditEntry.count({ where: { eventType: "account.federated_identity.removed", targetId: user.id } })).toBe(1);

    const again = await prisma().federatedIdentity.create({ data: { organizationId: tenant.org.id, userId: user.id, providerId: provider.id, subject: "upstream-1" } });
    const visit = await consoleSignIn(porta);
    const userUrl = `${porta.baseUrl}/console/organizations/${tenant.org.id}/users/${user.id}`;
    const userPage = await pageWithCsrf(visit.browser, userUrl);
    expect(shown(userPage.html)).toContain("Corp SSO");
    const byAdmin = await visit.browser.post(userUrl, { csrf: userPage.csrf, intent: "deleteFederatedIdentity", linkId: again.id });
    expect(byAdmin.status).toBe(302);
    expect(await prisma().federatedIdentity.count({ where: { userId: user.id } })).toBe(0);
    expect(await prisma().auditEntry.count({ where: { eventType: "user.federated_identity.deleted", targetId: user.id } })).toBe(1);
  });
});
