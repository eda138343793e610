import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, mainOf, type Tenant } from "../login/helpers";
import { startTestPorta, type TestPorta } from "../support/porta";
import { answer, createSamlConnection, follow, openLogin, postForm, postToAcs, redeem, startSaml, type SamlConnectionRow } from "../support/saml-connection";
import { encryptAssertion, makeKeyPair, responseXml, signAssertion, signAssertionWithXmlsec, base64 } from "../support/saml-idp";
import { csrfOf } from "../support/browser";

/**
 * Decision 081: signing in through a SAML 2.0 connection, end to end over HTTP. The test plays
 * the IdP (its own key and certificate, responses signed by samlify); Porta runs as it does in
 * production, the browser keeps its cookies by name and path.
 */
describe("SAML sign-in", () => {
  let porta: TestPorta;
  const idp = makeKeyPair();
  const prisma = () => porta.services.db.prisma;

  beforeAll(async () => {
    porta = await startTestPorta();
  });
  afterAll(async () => {
    await porta.stop();
  });

  const tenant = () => createTenant(porta, { defaultLoginMethods: ["password", "federated"], client: { skipConsent: true } });
  const audit = (organizationId: string, eventType: string) => prisma().auditEntry.findMany({ where: { organizationId, eventType }, orderBy: { createdAt: "asc" } });

  /** One sign-in from the login page to the relying party's redirect URI (or the page that stopped it). */
  async function signIn(t: Tenant, connection: SamlConnectionRow, fields: Parameters<typeof answer>[3], sign?: Parameters<typeof answer>[4]) {
    const flow = await openLogin(t);
    const request = await startSaml(flow, connection);
    const posted = await postToAcs(flow, connection.acsUrl, answer(connection, request, idp, fields, sign), request.relayState);
    const end = await follow(flow.jar, posted, connection.acsUrl, (u) => u.startsWith(t.redirectUri));
    return { flow, request, posted, end };
  }

  it("sends an AuthnRequest with the ACS, the NameID format and a RelayState, and creates the account just in time", async () => {
    const t = await tenant();
    const domain = `corp-${randomBytes(3).toString("hex")}.test`;
    const connection = await createSamlConnection(porta, t.org, { idp, domains: [domain], assumeVerifiedEmails: true, settings: { nameIdFormat: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent" } });
    const flow = await openLogin(t);
    expect(mainOf(flow.html)).toContain(connection.name);
    const request = await startSaml(flow, connection);
    expect(request.url.origin + request.url.pathname).toBe("https://idp.test/sso");
    expect(request.acsUrl).toBe(connection.acsUrl);
    expect(request.nameIdFormat).toBe("urn:oasis:names:tc:SAML:2.0:nameid-format:persistent");
    expect(request.relayState).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(request.xml).toContain(`<saml:Issuer xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion">${connection.entityId}</saml:Issuer>`);

    const email = `ada-${randomBytes(3).toString("hex")}@${domain}`;
    const posted = await postToAcs(flow, connection.acsUrl, answer(connection, request, idp, { nameId: "ada-1", attributes: { email: [email], firstName: ["Ada"], lastName: ["Lovelace"] } }), request.relayState);
    expect(posted.status).toBe(303);
    expect(posted.headers.get("location")).toMatch(/^\/interaction\/[^/]+\/federated\/return\?saml=[A-Za-z0-9_-]{43}$/);
    const end = await follow(flow.jar, posted, connection.acsUrl, (u) => u.startsWith(t.redirectUri));
    expect(end.url.startsWith(t.redirectUri), end.url).toBe(true);
    const claims = await redeem(flow, end.url);
    const user = await prisma().user.findFirstOrThrow({ where: { organizationId: t.org.id, email } });
    expect(claims.sub).toBe(user.id);
    expect(claims.amr).toEqual(["fed"]);
    expect(user).toMatchObject({ givenName: "Ada", familyName: "Lovelace", emailVerified: true });
    expect(await prisma().federatedIdentity.findFirstOrThrow({ where: { userId: user.id } })).toMatchObject({ providerId: connection.id, subject: "ada-1" });
    expect((await audit(t.org.id, "auth.login.success"))[0]?.data).toMatchObject({ method: "federated", providerId: connection.id });
    expect(await prisma().samlAssertionUse.count({ where: { providerId: connection.id } })).toBe(1);

    // The second sign-in finds the same account by the link, whatever the email says now.
    const again = await signIn(t, connection, { nameId: "ada-1", attributes: { email: [`renamed@${domain}`] } });
    expect(again.end.url.startsWith(t.redirectUri), again.end.url).toBe(true);
    expect((await redeem(again.flow, again.end.url)).sub).toBe(user.id);
    expect(await prisma().user.count({ where: { organizationId: t.org.id } })).toBe(1);
    expect(await prisma().federatedIdentity.count({ where: { providerId: connection.id } })).toBe(1);
  });

  it("home-realm discovery sends an email of the connection's domain to the IdP", async () => {
    const t = await tenant();
    const domain = `hrd-${randomBytes(3).toString("hex")}.test`;
    const connection = await createSamlConnection(porta, t.org, { idp, domains: [domain] });
    const flow = await openLogin(t);
    const res = await postForm(flow.jar, `${flow.loginUrl}/federated`, { csrf: csrfOf(flow.html), email: `someone@${domain}` });
    expect(res.status).toBe(303);
    const to = new URL(res.headers.get("location")!);
    expect(to.origin + to.pathname).toBe("https://idp.test/sso");
    expect(to.searchParams.get("SAMLRequest")).toBeTruthy();
    expect(connection.id).toBeTruthy();
  });

  it("never takes an email outside the connection's domains as verified: no link to an existing account, no new one", async () => {
    const t = await tenant();
    const connection = await createSamlConnection(porta, t.org, { idp, domains: ["corp.test"], assumeVerifiedEmails: true });
    const email = `victim-${randomBytes(3).toString("hex")}@elsewhere.test`;
    const victim = await prisma().user.create({ data: { organizationId: t.org.id, email, emailVerified: true } });
    const { end } = await signIn(t, connection, { nameId: "eve", attributes: { email: [email] } });
    expect(end.res.status).toBe(403);
    expect(await prisma().federatedIdentity.count({ where: { userId: victim.id } })).toBe(0);
    expect((await audit(t.org.id, "auth.login.failure"))[0]?.data).toMatchObject({ method: "saml", reason: "unverified_email" });
  });

  it("gives the roles the asserted groups map to and takes back managed roles the groups no longer give", async () => {
    const t = await tenant();
    const domain = `roles-${randomBytes(3).toString("hex")}.test`;
    const [editor, viewer, manual] = await Promise.all(["editor", "viewer", "manual"].map((name) => prisma().role.create({ data: { organizationId: t.org.id, name } })));
    const connection = await createSamlConnection(porta, t.org, {
      idp,
      domains: [domain],
      assumeVerifiedEmails: true,
      settings: {
        groupRoles: [
          { group: "Editors", roles: ["editor", "no-such-role"] },
          { group: "Staff", roles: ["viewer"] },
        ],
      },
    });
    const email = `grace-${randomBytes(3).toString("hex")}@${domain}`;
    const first = await signIn(t, connection, { nameId: "grace", attributes: { email: [email], groups: ["Editors", "Staff", "Unmapped"] } });
    expect(first.end.url.startsWith(t.redirectUri), first.end.url).toBe(true);
    const user = await prisma().user.findFirstOrThrow({ where: { organizationId: t.org.id, email } });
    await prisma().userRole.create({ data: { userId: user.id, roleId: manual!.id } });
    const held = async () => (await prisma().userRole.findMany({ where: { userId: user.id }, include: { role: true } })).map((r) => r.role.name).sort();
    expect(await held()).toEqual(["editor", "manual", "viewer"]);
    expect(porta.logs.lines.filter((l) => JSON.stringify(l).includes("no-such-role"))).toHaveLength(1);

    const second = await signIn(t, connection, { nameId: "grace", attributes: { email: [email], groups: ["Staff"] } });
    expect(second.end.url.startsWith(t.redirectUri), second.end.url).toBe(true);
    expect(await held()).toEqual(["manual", "viewer"]);
    const removed = await audit(t.org.id, "user.role_removed");
    expect(removed.map((e) => e.data)).toEqual([expect.objectContaining({ change: { roleId: editor!.id, role: "editor" }, source: "saml_groups" })]);
    expect((await audit(t.org.id, "user.role_assigned")).map((e) => (e.data as { change: { role: string } }).change.role).sort()).toEqual(["editor", "viewer"]);
    expect(viewer).toBeTruthy();
    // The unknown role was logged once only, for both sign-ins.
    expect(porta.logs.lines.filter((l) => JSON.stringify(l).includes("no-such-role"))).toHaveLength(1);
  });

  it("signs in through an IdP that signs with ECDSA", async () => {
    const t = await tenant();
    const ec = makeKeyPair("ec", "/CN=ec-idp");
    const domain = `ec-${randomBytes(3).toString("hex")}.test`;
    const connection = await createSamlConnection(porta, t.org, { idp: ec, domains: [domain], assumeVerifiedEmails: true });
    const email = `ec-${randomBytes(3).toString("hex")}@${domain}`;
    const { flow, end } = await signIn(t, connection, { nameId: "ec-1", attributes: { email: [email] } }, (xml) => signAssertionWithXmlsec(xml, ec));
    expect(end.url.startsWith(t.redirectUri), end.url).toBe(true);
    const user = await prisma().user.findFirstOrThrow({ where: { organizationId: t.org.id, email } });
    expect((await redeem(flow, end.url)).sub).toBe(user.id);
  });

  it("signs in with an encrypted assertion, decrypted with the connection's key", async () => {
    const t = await tenant();
    const sp = makeKeyPair("rsa", "/CN=porta-sp");
    const domain = `enc-${randomBytes(3).toString("hex")}.test`;
    const connection = await createSamlConnection(porta, t.org, { idp, domains: [domain], assumeVerifiedEmails: true, decryptionKey: sp.key, settings: { encryptionCertificate: sp.cert } });
    const metadata = await fetch(connection.metadataUrl);
    expect(await metadata.text()).toContain('use="encryption"');
    const flow = await openLogin(t);
    const request = await startSaml(flow, connection);
    const email = `enc-${randomBytes(3).toString("hex")}@${domain}`;
    const xml = await encryptAssertion(
      signAssertion(responseXml({ idpEntityId: connection.idpEntityId, audience: connection.entityId, acsUrl: connection.acsUrl, inResponseTo: request.id, nameId: "enc-1", attributes: { email: [email] } }), idp),
      sp.cert,
    );
    expect(xml).not.toContain(email);
    const posted = await postToAcs(flow, connection.acsUrl, base64(xml), request.relayState);
    const end = await follow(flow.jar, posted, connection.acsUrl, (u) => u.startsWith(t.redirectUri));
    expect(end.url.startsWith(t.redirectUri), end.url).toBe(true);
    expect(await prisma().user.count({ where: { organizationId: t.org.id, email } })).toBe(1);
  });

  it("takes a multi-factor authentication context as the second factor when the connection trusts it", async () => {
    const t = await createTenant(porta, { defaultLoginMethods: ["password", "federated"], client: { skipConsent: true } });
    await prisma().organization.update({ where: { id: t.org.id }, data: { twoFactorPolicy: "required_email" } });
    const domain = `mfa-${randomBytes(3).toString("hex")}.test`;
    const connection = await createSamlConnection(porta, t.org, { idp, domains: [domain], assumeVerifiedEmails: true });
    const mfa = await signIn(t, connection, { nameId: "m-1", attributes: { email: [`m1@${domain}`] }, authnContextClassRef: "https://refeds.org/profile/mfa" });
    expect(mfa.end.url.startsWith(t.redirectUri), mfa.end.url).toBe(true);
    expect((await redeem(mfa.flow, mfa.end.url)).amr).toEqual(["fed", "mfa"]);
    // A password-only context leads to the organization's own second factor.
    const single = await signIn(t, connection, { nameId: "m-2", attributes: { email: [`m2@${domain}`] } });
    expect(single.end.url).toContain("/two-factor");
  });

  it("serves the SP metadata of an enabled connection only", async () => {
    const t = await tenant();
    const other = await tenant();
    const connection = await createSamlConnection(porta, t.org, { idp });
    const disabled = await createSamlConnection(porta, t.org, { idp, enabled: false });
    const res = await fetch(connection.metadataUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("xml");
    const xml = await res.text();
    expect(xml).toContain(`entityID="${connection.entityId}"`);
    expect(xml).toContain(`Location="${connection.acsUrl}"`);
    expect(xml).toContain("urn:oasis:names:tc:SAML:2.0:nameid-format:persistent");
    expect((await fetch(disabled.metadataUrl)).status).toBe(404);
    expect((await fetch(`${porta.baseUrl}/${other.org.slug}/saml/${connection.id}/metadata`)).status).toBe(404);
    expect((await fetch(`${porta.baseUrl}/${t.org.slug}/saml/not-a-uuid/metadata`)).status).toBe(404);
  });
});
