import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resources } from "~/i18n/config";
import { createTenant, escapeHtml, mainOf, type Tenant } from "../login/helpers";
import { startTestPorta, type TestPorta } from "../support/porta";
import { answer, createSamlConnection, follow, openLogin, postToAcs, startSaml, type SamlConnectionRow, type SamlFlow } from "../support/saml-connection";
import { base64, makeKeyPair, responseXml, RSA_SHA1, signAssertion, signResponse, xmlId, type ResponseFields } from "../support/saml-idp";

/**
 * Decision 081: what an attacker can post to a SAML connection's ACS. Every refusal shows the
 * failure page with a way back, writes an `auth.login.failure` audit entry (method saml, the
 * reason), logs one line without the assertion, and creates no account and no link.
 */

type Messages = (typeof resources)["en"]["login"];

describe("SAML sign-in: attacks on the ACS", () => {
  let porta: TestPorta;
  const idp = makeKeyPair();
  const prisma = () => porta.services.db.prisma;
  // A second server on the same database needs the key the first sealed its signing keys with.
  const env = { ENCRYPTION_KEY: randomBytes(32).toString("base64") };

  beforeAll(async () => {
    porta = await startTestPorta({ env });
  });
  afterAll(async () => {
    await porta.stop();
  });

  interface Setup {
    t: Tenant;
    connection: SamlConnectionRow;
    domain: string;
  }

  async function setup(settings: Parameters<typeof createSamlConnection>[2]["settings"] = {}): Promise<Setup> {
    const t = await createTenant(porta, { defaultLoginMethods: ["password", "federated"], client: { skipConsent: true } });
    const domain = `corp-${randomBytes(3).toString("hex")}.test`;
    const connection = await createSamlConnection(porta, t.org, { idp, domains: [domain], assumeVerifiedEmails: true, settings });
    return { t, connection, domain };
  }

  const person = (s: Setup, more: Partial<ResponseFields> = {}): Partial<ResponseFields> => ({ nameId: "victim-1", attributes: { email: [`victim@${s.domain}`] }, ...more });

  const unsigned = (s: Setup, request: { id: string }, more: Partial<ResponseFields> = {}) =>
    responseXml({ idpEntityId: s.connection.idpEntityId, audience: s.connection.entityId, acsUrl: s.connection.acsUrl, inResponseTo: request.id, nameId: "victim-1", ...person(s), ...more });

  const pageText = (reason: keyof Messages["federation"]["reason"], provider: string) =>
    escapeHtml((resources.en.login as Messages).federation.reason[reason].replaceAll("{{provider}}", provider));

  /** The refusal as a person and an operator see it; nothing was created. */
  async function expectRefused(s: Setup, res: Response, reason: string, page: "invalid" | "expired" = "invalid") {
    expect(res.status).toBe(400);
    const html = mainOf(await res.text());
    expect(html).toContain(pageText(page, s.connection.name));
    expect(html).toContain('href="/interaction/');
    const failures = await prisma().auditEntry.findMany({ where: { organizationId: s.t.org.id, eventType: "auth.login.failure" } });
    expect(failures.map((f) => f.data)).toContainEqual(expect.objectContaining({ method: "saml", reason, providerId: s.connection.id }));
    expect(await prisma().user.count({ where: { organizationId: s.t.org.id } })).toBe(0);
    expect(await prisma().federatedIdentity.count({ where: { providerId: s.connection.id } })).toBe(0);
    expect(await prisma().auditEntry.count({ where: { organizationId: s.t.org.id, eventType: "auth.login.success" } })).toBe(0);
    const lines = porta.logs.lines.filter((l) => l.msg === "SAML response refused" && l.providerId === s.connection.id && l.reason === reason);
    expect(lines.length).toBeGreaterThanOrEqual(1);
    for (const line of lines) {
      expect(JSON.stringify(line)).not.toContain("victim@");
      expect(JSON.stringify(line)).not.toMatch(/stack|PHNhbWxw/);
    }
  }

  /** A browser that started a sign-in at the connection, and its request. */
  async function started(s: Setup): Promise<{ flow: SamlFlow; request: Awaited<ReturnType<typeof startSaml>> }> {
    const flow = await openLogin(s.t);
    return { flow, request: await startSaml(flow, s.connection) };
  }

  async function attempt(s: Setup, xml: (request: { id: string }) => string) {
    const { flow, request } = await started(s);
    return postToAcs(flow, s.connection.acsUrl, base64(xml(request)), request.relayState);
  }

  const assertionOf = (xml: string) => /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(xml)![0];

  it("signature wrapping: a signed assertion moved aside for an unsigned one in its place", async () => {
    const s = await setup();
    const res = await attempt(s, (request) => {
      const genuine = assertionOf(signAssertion(unsigned(s, request, { nameId: "attacker", attributes: { email: [`attacker@${s.domain}`] } }), idp));
      const forged = unsigned(s, request);
      return forged.replace("<samlp:Status>", `<samlp:Extensions>${genuine}</samlp:Extensions><samlp:Status>`);
    });
    await expectRefused(s, res, "invalid_signature");
  });

  it("signature wrapping: an unsigned assertion added beside a signed one", async () => {
    const s = await setup();
    const res = await attempt(s, (request) => {
      const signed = signAssertion(unsigned(s, request, { nameId: "attacker", attributes: { email: [`attacker@${s.domain}`] } }), idp);
      return signed.replace("</samlp:Response>", `${assertionOf(unsigned(s, request))}</samlp:Response>`);
    });
    await expectRefused(s, res, "invalid_signature");
  });

  it("signature wrapping: a signed response wrapped in a new one with an unsigned assertion", async () => {
    const s = await setup();
    const res = await attempt(s, (request) => {
      const genuine = signResponse(unsigned(s, request, { nameId: "attacker", attributes: { email: [`attacker@${s.domain}`] } }), idp).replace(/^<\?xml[^>]*>/, "");
      const forged = unsigned(s, request);
      return forged.replace("<samlp:Status>", `<samlp:Extensions>${genuine}</samlp:Extensions><samlp:Status>`);
    });
    await expectRefused(s, res, "invalid_signature");
  });

  it("a comment inside the NameID and the email: refused, neither the cut nor the whole address signs in", async () => {
    const s = await setup();
    const res = await attempt(s, (request) => {
      const signed = signAssertion(unsigned(s, request, { nameId: `user@evil.com.${s.domain}`, nameIdFormat: "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress", attributes: {} }), idp);
      // Exclusive canonicalization drops comments: the signature still verifies after the insertion.
      return signed.replace(`>user@evil.com.${s.domain}<`, `>user@evil.com<!---->.${s.domain}<`);
    });
    await expectRefused(s, res, "malformed");
  });

  it("XXE and entity expansion are refused before any parser resolves them", async () => {
    const s = await setup();
    const xxe = await attempt(s, (request) => `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>${unsigned(s, request, { nameId: "&x;" })}`);
    await expectRefused(s, xxe, "malformed");
    const laughs = await attempt(
      s,
      (request) =>
        `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>${signAssertion(unsigned(s, request), idp).replace("victim-1", "&c;")}`,
    );
    await expectRefused(s, laughs, "malformed");
  });

  it("an unsigned response, and one signed by a key the connection does not have", async () => {
    const s = await setup();
    await expectRefused(s, await attempt(s, (request) => unsigned(s, request)), "invalid_signature");
    await expectRefused(s, await attempt(s, (request) => signAssertion(unsigned(s, request), makeKeyPair())), "invalid_signature");
  });

  it("another audience, another ACS (Destination and Recipient), another issuer", async () => {
    const s = await setup();
    await expectRefused(s, await attempt(s, (request) => signAssertion(unsigned(s, request, { audience: "https://other-sp.test/metadata" }), idp)), "wrong_audience");
    await expectRefused(s, await attempt(s, (request) => signResponse(unsigned(s, request, { destination: "https://other-sp.test/acs" }), idp)), "wrong_destination");
    await expectRefused(s, await attempt(s, (request) => signAssertion(unsigned(s, request, { recipient: "https://other-sp.test/acs" }), idp)), "wrong_recipient");
    await expectRefused(s, await attempt(s, (request) => signAssertion(unsigned(s, request, { assertionIssuer: "https://evil.test/idp" }), idp)), "wrong_issuer");
  });

  it("an expired and a not yet valid assertion", async () => {
    const s = await setup();
    await expectRefused(s, await attempt(s, (request) => signAssertion(unsigned(s, request, { offsetMs: -30 * 60_000 }), idp)), "expired");
    await expectRefused(s, await attempt(s, (request) => signAssertion(unsigned(s, request, { offsetMs: 15 * 60_000 }), idp)), "not_yet_valid");
  });

  it("replay: the same response twice, and an assertion ID another process already used", async () => {
    const s = await setup();
    const { flow, request } = await started(s);
    const response = answer(s.connection, request, idp, person(s));
    const first = await postToAcs(flow, s.connection.acsUrl, response, request.relayState);
    expect(first.status).toBe(303);
    await first.body?.cancel();
    const again = await postToAcs(flow, s.connection.acsUrl, response, request.relayState);
    expect(again.status).toBe(400);
    expect((await prisma().auditEntry.findMany({ where: { organizationId: s.t.org.id, eventType: "auth.login.failure" } })).map((e) => e.data)).toContainEqual(
      expect.objectContaining({ method: "saml", reason: "invalid_state" }),
    );

    // The IdP's answer to a new request carrying an assertion ID used before (by this process, then by another one).
    const reused = (await prisma().samlAssertionUse.findFirstOrThrow({ where: { providerId: s.connection.id } })).assertionId;
    const other = await setup();
    const client = new pg.Client({ connectionString: porta.services.config.databaseUrl });
    await client.connect();
    const foreignId = xmlId();
    try {
      await client.query(`INSERT INTO "SamlAssertionUse" ("providerId", "assertionId", "expiresAt") VALUES ($1, $2, now() + interval '10 minutes')`, [other.connection.id, foreignId]);
    } finally {
      await client.end();
    }
    await expectRefused(other, await attempt(other, (r) => signAssertion(unsigned(other, r, { assertionId: foreignId }), idp)), "replay");
    const s2 = { ...s };
    const replayed = await attempt(s2, (r) => signAssertion(unsigned(s2, r, { assertionId: reused }), idp));
    expect(replayed.status).toBe(400);
    expect((await prisma().auditEntry.findMany({ where: { organizationId: s.t.org.id, eventType: "auth.login.failure" } })).map((e) => e.data)).toContainEqual(
      expect.objectContaining({ method: "saml", reason: "replay" }),
    );
  });

  it("replay across two Porta servers on one database: the second refuses an assertion ID the first used", async () => {
    const s = await setup();
    const second = await startTestPorta({ env, databaseUrl: porta.services.config.databaseUrl });
    try {
      const { flow, request } = await started(s);
      const assertionId = xmlId();
      const first = await postToAcs(flow, s.connection.acsUrl, base64(signAssertion(unsigned(s, request, { assertionId }), idp)), request.relayState);
      expect(first.status).toBe(303);
      await first.body?.cancel();
      // The same connection served by the second server (same database, a store of its own).
      const there = { ...s, t: { ...s.t, issuer: `${second.baseUrl}/${s.t.org.slug}` } };
      const flow2 = await openLogin(there.t);
      const request2 = await startSaml(flow2, s.connection);
      const replayed = await postToAcs(flow2, `${second.baseUrl}/${s.t.org.slug}/saml/${s.connection.id}/acs`, base64(signAssertion(unsigned(s, request2, { assertionId, acsUrl: `${second.baseUrl}/${s.t.org.slug}/saml/${s.connection.id}/acs`, audience: `${second.baseUrl}/${s.t.org.slug}/saml/${s.connection.id}/metadata` }), idp)), request2.relayState);
      expect(replayed.status).toBe(400);
      expect((await prisma().auditEntry.findMany({ where: { organizationId: s.t.org.id, eventType: "auth.login.failure" } })).map((e) => e.data)).toContainEqual(
        expect.objectContaining({ method: "saml", reason: "replay" }),
      );
    } finally {
      await second.stop();
    }
  });

  it("a response to another browser's request, and a response for another organization's connection", async () => {
    const s = await setup();
    const victim = await started(s);
    const attacker = await started(s);
    // The attacker's RelayState with a response the IdP issued to the victim's request.
    const crossed = await postToAcs(attacker.flow, s.connection.acsUrl, answer(s.connection, victim.request, idp, person(s)), attacker.request.relayState);
    await expectRefused(s, crossed, "invalid_in_response_to");

    const other = await setup();
    const there = await started(other);
    // Organization B's response (its audience and ACS) posted to A's connection with A's own pending request.
    const mine = await started(s);
    const foreign = answer(other.connection, mine.request, idp, person(other));
    // Its Destination names B's ACS (and its audience B's entity ID): refused at the first check.
    await expectRefused(s, await postToAcs(mine.flow, s.connection.acsUrl, foreign, mine.request.relayState), "wrong_destination");
    // A's RelayState at B's ACS: no pending sign-in there.
    const atB = await postToAcs(there.flow, other.connection.acsUrl, answer(other.connection, there.request, idp, person(other)), (await started(s)).request.relayState);
    expect(atB.status).toBe(400);
    expect((await prisma().auditEntry.findMany({ where: { organizationId: other.t.org.id, eventType: "auth.login.failure" } })).map((e) => e.data)).toContainEqual(
      expect.objectContaining({ method: "saml", reason: "invalid_state" }),
    );
  });

  it("the ACS's hand-over key signs in only the interaction it was made for, once", async () => {
    const s = await setup();
    const victim = await started(s);
    const posted = await postToAcs(victim.flow, s.connection.acsUrl, answer(s.connection, victim.request, idp, person(s)), victim.request.relayState);
    expect(posted.status).toBe(303);
    const handOver = new URL(posted.headers.get("location")!, s.connection.acsUrl);
    // Another browser, with an interaction of its own, replays the key at its own return page.
    const attacker = await openLogin(s.t);
    const stolen = new URL(`${attacker.loginUrl}/federated/return${handOver.search}`);
    const refused = await attacker.jar.fetch(stolen);
    expect(refused.status).toBe(400);
    expect(mainOf(await refused.text())).toContain(escapeHtml((resources.en.login as Messages).federation.reason.expired.replaceAll("{{provider}}", "")).slice(0, 20));
    expect((await prisma().auditEntry.findMany({ where: { organizationId: s.t.org.id, eventType: "auth.login.failure" } })).map((e) => e.data)).toContainEqual(
      expect.objectContaining({ method: "saml", reason: "invalid_state" }),
    );
    expect(await prisma().user.count({ where: { organizationId: s.t.org.id } })).toBe(0);
    // The key was taken: the victim's own browser cannot use it any more either (it starts again).
    const late = await victim.flow.jar.fetch(handOver);
    expect(late.status).toBe(400);
    expect(await prisma().user.count({ where: { organizationId: s.t.org.id } })).toBe(0);
  });

  it("an unsolicited (IdP-initiated) response is refused while the connection has it off", async () => {
    const s = await setup();
    const flow = await openLogin(s.t);
    const res = await postToAcs(flow, s.connection.acsUrl, base64(signAssertion(unsigned(s, { id: "" }, { inResponseTo: null }), idp)), "");
    expect(res.status).toBe(400);
    expect((await prisma().auditEntry.findMany({ where: { organizationId: s.t.org.id, eventType: "auth.login.failure" } })).map((e) => e.data)).toContainEqual(
      expect.objectContaining({ method: "saml", reason: "unsolicited_response" }),
    );
    expect(await prisma().user.count({ where: { organizationId: s.t.org.id } })).toBe(0);
  });

  it("oversized, deeply nested and broken input", async () => {
    const s = await setup();
    const { flow, request } = await started(s);
    await expectRefused(s, await postToAcs(flow, s.connection.acsUrl, "A".repeat(300 * 1024), request.relayState), "too_large");
    const deep = "<a>".repeat(200) + "</a>".repeat(200);
    await expectRefused(s, await attempt(s, (r) => signAssertion(unsigned(s, r), idp).replace("<samlp:Status>", `<samlp:Extensions>${deep}</samlp:Extensions><samlp:Status>`)), "too_large");
    const next = await started(s);
    await expectRefused(s, await postToAcs(next.flow, s.connection.acsUrl, "not*base64!", next.request.relayState), "malformed");
    // A field far over the limit is not kept; the RelayState after it still finds the sign-in.
    const huge = await started(s);
    await expectRefused(s, await postToAcs(huge.flow, s.connection.acsUrl, "A".repeat(2 * 1024 * 1024), huge.request.relayState), "too_large");
  });

  it("SHA-1 signatures are refused unless the connection allows them", async () => {
    const s = await setup();
    await expectRefused(s, await attempt(s, (r) => signAssertion(unsigned(s, r), idp, RSA_SHA1)), "weak_algorithm");
    const allowed = await setup({ allowSha1: true });
    const { flow, request } = await started(allowed);
    const posted = await postToAcs(flow, allowed.connection.acsUrl, base64(signAssertion(unsigned(allowed, request), idp, RSA_SHA1)), request.relayState);
    expect(posted.status).toBe(303);
    const end = await follow(flow.jar, posted, allowed.connection.acsUrl, (u) => u.startsWith(allowed.t.redirectUri));
    expect(end.url.startsWith(allowed.t.redirectUri), end.url).toBe(true);
  });
});
