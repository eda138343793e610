import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resources } from "~/i18n/config";
import { createAccountTenant, shown } from "../account/helpers";
import { createClient } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { idpCertificate, idpMetadata } from "../support/saml";
import { consoleSignIn, pageWithCsrf } from "./helpers";

/**
 * SAML connections in the console (decision 081): made from pasted metadata, the values the IdP's
 * administrator needs shown to copy, the certificates with their expiry, and the settings (group
 * roles, IdP-initiated client, SHA-1, encryption) changed on the provider's page.
 */
describe("console: SAML connections", () => {
  let porta: TestPorta;
  const prisma = () => porta.services.db.prisma;
  beforeAll(async () => {
    porta = await startTestPorta();
  });
  afterAll(async () => {
    await porta.stop();
  });

  it("adds a connection from metadata, shows what to give the IdP, and changes its SAML settings", async () => {
    const tenant = await createAccountTenant(porta);
    await prisma().role.create({ data: { organizationId: tenant.org.id, name: "editor" } });
    const { client } = await createClient(prisma(), tenant.org.id, { initiateLoginUri: "https://rp.example.com/login" });
    const visit = await consoleSignIn(porta);
    const listUrl = `${porta.baseUrl}/console/organizations/${tenant.org.id}/identity-providers`;
    const list = await pageWithCsrf(visit.browser, listUrl);
    expect(shown(list.html)).toContain(resources.en.console.idp.kind.saml);
    expect(shown(list.html)).toContain(resources.en.console.idp.saml.metadataXml);

    // Hostile metadata is refused next to the field; nothing is written.
    const base = { csrf: list.csrf, name: "Corp SAML", kind: "saml", issuer: "", clientId: "", clientSecret: "", scopes: "", flags: "enabled" };
    const refused = await visit.browser.post(listUrl, { ...base, samlMetadataXml: `<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>` });
    expect(refused.status).toBe(422);
    expect(shown(await refused.text())).toContain("DOCTYPE");
    expect(await prisma().identityProvider.count({ where: { organizationId: tenant.org.id } })).toBe(0);

    const cert = await idpCertificate("idp.console.example");
    const xml = idpMetadata({ entityId: "https://idp.console.example/e", ssoUrl: "https://idp.console.example/sso", certificates: [cert] });
    const created = await visit.browser.post(listUrl, { ...base, samlMetadataXml: xml, "attr.email": "mail" });
    expect(created.status, await created.clone().text()).toBe(302);
    const detailUrl = new URL(created.headers.get("location")!, listUrl).href;
    const row = await prisma().identityProvider.findFirstOrThrow({ where: { organizationId: tenant.org.id } });
    expect(row).toMatchObject({ kind: "saml", issuer: "https://idp.console.example/e", clientId: "", claimMapping: { email: "mail" } });

    const detail = await pageWithCsrf(visit.browser, detailUrl);
    const page = shown(detail.html);
    const sp = `${porta.baseUrl}/${tenant.org.slug}/saml/${row.id}`;
    expect(page).toContain(`${sp}/metadata`);
    expect(page).toContain(`${sp}/acs`);
    expect(page).toContain("CN=idp.console.example");
    expect(page).toContain(resources.en.console.idp.saml.spTitle);
    expect(page).not.toContain(resources.en.console.idp.clientSecret);

    // An unknown role is named; a known one, the IdP-initiated client, SHA-1 and encryption are saved.
    const settings = { csrf: detail.csrf, version: "1", name: "Corp SAML", domains: "", flags: "enabled", trustUpstreamMfa: "when_asserted", nameIdFormat: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent", idpInitiatedClientId: client.id, samlFlags: ["allowSha1", "encryption"] };
    const unknown = await visit.browser.post(detailUrl, { ...settings, groupRoles: "Editors = editor, ghost" });
    expect(unknown.status).toBe(422);
    const refusedPage = await unknown.text();
    expect(shown(refusedPage)).toContain("names no role of this organization: ghost");
    // Beside the group roles, naming the line and the role's place on it.
    expect(refusedPage).toMatch(/<textarea id="groupRoles"[^>]*aria-invalid="true"[^>]*>Editors = editor, ghost<\/textarea>(?:<p[^>]*class="hint"[^>]*>[^<]*<\/p>)?<p class="field-error" role="alert">1\.roles\.2: [^<]*ghost<\/p>/);
    const saved = await visit.browser.post(detailUrl, { ...settings, groupRoles: "Editors = editor" });
    expect(saved.status, await saved.clone().text()).toBe(302);
    const after = await prisma().identityProvider.findUniqueOrThrow({ where: { id: row.id } });
    expect(after.saml).toMatchObject({ allowSha1: true, idpInitiatedClientId: client.id, groupRoles: [{ group: "Editors", roles: ["editor"] }], nameIdFormat: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent" });
    expect((after.saml as { encryptionCertificate: string | null }).encryptionCertificate).toContain("BEGIN CERTIFICATE");
    expect(after.clientSecretEncrypted).not.toBeNull();
    expect(shown((await pageWithCsrf(visit.browser, detailUrl)).html)).toContain("Editors = editor");
  });
});
