import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant } from "../login/helpers";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { recordVerifiedDomains } from "../support/domains";
import { startTestPorta, type TestPorta } from "../support/porta";
import { idpMetadata } from "../support/saml";
import { follow, openLogin, postToAcs, startSaml, type SamlConnectionRow } from "../support/saml-connection";
import { base64, encryptAssertion, makeKeyPair, responseXml, signAssertion } from "../support/saml-idp";

/**
 * Decision 081, both halves together: a connection made through the Admin API from the IdP's
 * metadata, with encryption on, signs people in. The key pair the Admin API generated (its
 * certificate published in the SP metadata) decrypts an assertion the IdP encrypted to it.
 */
describe("SAML: a connection from the Admin API signs in", () => {
  let porta: TestPorta;
  let api: ReturnType<typeof adminApi>;
  const idp = makeKeyPair();

  beforeAll(async () => {
    porta = await startTestPorta();
    api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  });
  afterAll(async () => {
    await porta.stop();
  });

  it("decrypts with the generated key and takes the SSO URL and certificate from the metadata", async () => {
    const t = await createTenant(porta, { defaultLoginMethods: ["password", "federated"], client: { skipConsent: true } });
    const domain = `interop-${randomBytes(3).toString("hex")}.test`;
    const idpEntityId = `https://idp-${randomBytes(3).toString("hex")}.test/entity`;
    const created = await api.post<{ id: string; name: string; saml: { entityId: string; acsUrl: string; spMetadataUrl: string; encryptionCertificate: string } }>("/identity-providers", {
      organizationId: t.org.id,
      kind: "saml",
      name: "Interop SAML",
      samlMetadataXml: idpMetadata({ entityId: idpEntityId, ssoUrl: "https://idp.test/sso", certificates: [idp.cert] }),
      domains: [domain],
      assumeVerifiedEmails: true,
      createAccounts: true,
      saml: { nameIdFormat: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent", encryption: true },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    // Assumed emails create accounts only for a domain the organization verified (decision 086).
    await recordVerifiedDomains(porta, t.org.id, [domain]);
    const { saml } = created.body;
    const connection: SamlConnectionRow = { id: created.body.id, name: created.body.name, idpEntityId, acsUrl: saml.acsUrl, entityId: saml.entityId, metadataUrl: saml.spMetadataUrl };
    const metadata = await (await fetch(saml.spMetadataUrl)).text();
    expect(metadata.replace(/\s/g, "")).toContain(saml.encryptionCertificate.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, ""));

    const flow = await openLogin(t);
    const request = await startSaml(flow, connection);
    expect(request.url.origin + request.url.pathname).toBe("https://idp.test/sso");
    const email = `ada-${randomBytes(3).toString("hex")}@${domain}`;
    const xml = await encryptAssertion(
      signAssertion(responseXml({ idpEntityId, audience: saml.entityId, acsUrl: saml.acsUrl, inResponseTo: request.id, nameId: "ada-interop", attributes: { email: [email] } }), idp),
      saml.encryptionCertificate,
    );
    expect(xml).not.toContain(email);
    const posted = await postToAcs(flow, saml.acsUrl, base64(xml), request.relayState);
    const end = await follow(flow.jar, posted, saml.acsUrl, (u) => u.startsWith(t.redirectUri));
    expect(end.url.startsWith(t.redirectUri), end.url).toBe(true);
    expect(await porta.services.db.prisma.user.count({ where: { organizationId: t.org.id, email } })).toBe(1);
  });
});
