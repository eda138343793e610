import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, mainOf, type Tenant } from "../login/helpers";
import { startTestPorta, type TestPorta } from "../support/porta";
import { answer, createSamlConnection, follow, openLogin, postForm, redeem, startAuthorization, startSaml, postToAcs, unsolicited, type SamlConnectionRow } from "../support/saml-connection";
import { base64, makeKeyPair, responseXml, signAssertion } from "../support/saml-idp";
import { CookieJar } from "../support/oidc";
import { createClient } from "../support/factories";
import { selfPostingForm } from "../support/browser";

/**
 * Decision 083: a sign-in that starts at the IdP (a tile in Okta or Entra ID's My Apps) reaches
 * the one application the connection names, through that application's own sign-in start
 * (OpenID Connect third-party initiated login), and signs in exactly the person the IdP named.
 */
describe("IdP-initiated SAML sign-in", () => {
  let porta: TestPorta;
  const idp = makeKeyPair();
  const prisma = () => porta.services.db.prisma;
  const START = "https://rp.example.com/login";

  beforeAll(async () => {
    porta = await startTestPorta();
  });
  afterAll(async () => {
    await porta.stop();
  });

  const failures = async (organizationId: string) =>
    (await prisma().auditEntry.findMany({ where: { organizationId, eventType: "auth.login.failure" }, orderBy: { createdAt: "asc" } })).map((e) => (e.data as { reason: string }).reason);

  async function setUp(): Promise<{ t: Tenant; connection: SamlConnectionRow; domain: string }> {
    const t = await createTenant(porta, { defaultLoginMethods: ["password", "federated"], client: { skipConsent: true, initiateLoginUri: START } });
    const domain = `tile-${randomBytes(3).toString("hex")}.test`;
    const connection = await createSamlConnection(porta, t.org, { idp, domains: [domain], assumeVerifiedEmails: true, settings: { idpInitiatedClientId: t.client.id } });
    return { t, connection, domain };
  }

  /** The IdP's post to the ACS with no RelayState, as a tile click sends it. */
  const postUnsolicited = (jar: CookieJar, connection: SamlConnectionRow, samlResponse: string) =>
    postForm(jar, connection.acsUrl, { SAMLResponse: samlResponse }, { origin: "https://idp.test" });

  /** The application, sent its `iss`, starts its own authorization request; the browser follows it to the callback. */
  async function applicationSignsIn(t: Tenant, jar: CookieJar) {
    const flow = await startAuthorization(t, {}, jar);
    expect(flow.started.status).toBe(303);
    const end = await follow(jar, flow.started, flow.loginUrl, (u) => u.startsWith(t.redirectUri));
    return { flow, end };
  }

  it("sends the browser to the application's sign-in start, then signs in the person the IdP named", async () => {
    const { t, connection, domain } = await setUp();
    const email = `tile-user-${randomBytes(3).toString("hex")}@${domain}`;
    const jar = new CookieJar();
    const posted = await postUnsolicited(jar, connection, unsolicited(connection, idp, { nameId: "tile-1", attributes: { email: [email] } }));
    expect(posted.status).toBe(303);
    const start = new URL(posted.headers.get("location")!);
    expect(start.origin + start.pathname).toBe(START);
    expect(start.searchParams.get("iss")).toBe(t.issuer);
    expect(start.searchParams.get("login_hint")).toBe(email);
    expect(posted.headers.get("set-cookie")).toMatch(/^porta_saml_idp=[^;]+; Path=\/; Max-Age=300; HttpOnly; SameSite=Lax/);

    const { flow, end } = await applicationSignsIn(t, jar);
    expect(end.url.startsWith(t.redirectUri), end.url).toBe(true);
    const claims = await redeem({ ...flow, html: "" }, end.url);
    const user = await prisma().user.findFirstOrThrow({ where: { organizationId: t.org.id, email } });
    expect(claims.sub).toBe(user.id);
    expect(await prisma().federatedIdentity.findFirstOrThrow({ where: { userId: user.id } })).toMatchObject({ providerId: connection.id, subject: "tile-1" });
    // The mark is used up: the application's next request is answered from the session, no sign-in asked.
    const again = await applicationSignsIn(t, jar);
    expect(again.end.url.startsWith(t.redirectUri), again.end.url).toBe(true);
    expect((await redeem({ ...again.flow, html: "" }, again.end.url)).sub).toBe(user.id);
  });

  it("signs in the IdP's person even where the browser's session holds someone else", async () => {
    const { t, connection, domain } = await setUp();
    const alice = `alice-${randomBytes(3).toString("hex")}@${domain}`;
    const bob = `bob-${randomBytes(3).toString("hex")}@${domain}`;
    const first = await openLogin(t);
    const request = await startSaml(first, connection);
    const signedIn = await postToAcs(first, connection.acsUrl, answer(connection, request, idp, { nameId: "alice", attributes: { email: [alice] } }), request.relayState);
    const aliceEnd = await follow(first.jar, signedIn, connection.acsUrl, (u) => u.startsWith(t.redirectUri));
    expect(aliceEnd.url.startsWith(t.redirectUri), aliceEnd.url).toBe(true);
    const aliceId = (await prisma().user.findFirstOrThrow({ where: { organizationId: t.org.id, email: alice } })).id;

    await postUnsolicited(first.jar, connection, unsolicited(connection, idp, { nameId: "bob", attributes: { email: [bob] } }));
    const { flow, end: ended } = await applicationSignsIn(t, first.jar);
    // The provider ends Alice's session before it records Bob's sign-in: a page whose form posts itself.
    const form = selfPostingForm(await ended.res.text());
    expect(form?.action).toMatch(/\/session\/end\/confirm$/);
    const confirmed = await postForm(first.jar, form!.action, form!.fields);
    const end = await follow(first.jar, confirmed, form!.action, (u) => u.startsWith(t.redirectUri));
    expect(end.url.startsWith(t.redirectUri), end.url).toBe(true);
    const claims = await redeem({ ...flow, html: "" }, end.url);
    const bobId = (await prisma().user.findFirstOrThrow({ where: { organizationId: t.org.id, email: bob } })).id;
    expect(claims.sub).toBe(bobId);
    expect(claims.sub).not.toBe(aliceId);
  });

  it("is refused while the connection names no application, and when the application has no sign-in start", async () => {
    const { t, connection, domain } = await setUp();
    const off = await createSamlConnection(porta, t.org, { idp, domains: [`off-${domain}`], assumeVerifiedEmails: true });
    const refused = await postUnsolicited(new CookieJar(), off, unsolicited(off, idp, { nameId: "x", attributes: { email: [`x@off-${domain}`] } }));
    expect(refused.status).toBe(400);
    expect(refused.headers.get("set-cookie")).toBeNull();

    await prisma().client.update({ where: { id: t.client.id }, data: { initiateLoginUri: null } });
    const noStart = await postUnsolicited(new CookieJar(), connection, unsolicited(connection, idp, { nameId: "y", attributes: { email: [`y@${domain}`] } }));
    expect(noStart.status).toBe(400);
    expect(await failures(t.org.id)).toEqual(["unsolicited_response", "idp_initiated_unavailable"]);
    expect(await prisma().user.count({ where: { organizationId: t.org.id } })).toBe(0);
    expect(await prisma().samlAssertionUse.count({ where: { providerId: { in: [connection.id, off.id] } } })).toBe(0);
  });

  it("refuses a replayed response, and an assertion that answered a request posted as unsolicited", async () => {
    const { t, connection, domain } = await setUp();
    const response = unsolicited(connection, idp, { nameId: "r", attributes: { email: [`r@${domain}`] } });
    expect((await postUnsolicited(new CookieJar(), connection, response)).status).toBe(303);
    expect((await postUnsolicited(new CookieJar(), connection, response)).status).toBe(400);

    // Cut from an SP-initiated answer: the response loses its InResponseTo, the signed assertion keeps its own.
    const answered = responseXml({ idpEntityId: connection.idpEntityId, audience: connection.entityId, acsUrl: connection.acsUrl, inResponseTo: "_someone-elses-request", nameId: "s", attributes: { email: [`s@${domain}`] } });
    const stripped = answered.replace(/(<samlp:Response[^>]*?) InResponseTo="[^"]*"/, "$1");
    expect(stripped).not.toBe(answered);
    expect((await postUnsolicited(new CookieJar(), connection, base64(signAssertion(stripped, idp)))).status).toBe(400);
    expect(await failures(t.org.id)).toEqual(["replay", "invalid_in_response_to"]);
  });

  it("another application's request, or the application in another browser, shows the login page as usual", async () => {
    const { t, connection, domain } = await setUp();
    const jar = new CookieJar();
    await postUnsolicited(jar, connection, unsolicited(connection, idp, { nameId: "o", attributes: { email: [`o@${domain}`] } }));
    const other = await createClient(prisma(), t.org.id, { skipConsent: true });
    const otherFlow = await startAuthorization({ ...t, client: other.client, secret: other.secret?.value }, {}, jar);
    const otherPage = await jar.fetch(otherFlow.loginUrl);
    expect(otherPage.status).toBe(200);
    expect(mainOf(await otherPage.text())).toContain(connection.name);

    const elsewhere = await openLogin(t);
    expect(elsewhere.loginUrl).toMatch(/\/interaction\/[^/]+$/);
    // The mark still waits for its own application in the first browser.
    const { end } = await applicationSignsIn(t, jar);
    expect(end.url.startsWith(t.redirectUri), end.url).toBe(true);
  });
});
