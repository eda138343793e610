import { describe, expect, it } from "vitest";
import { base64, ECDSA_SHA1, ECDSA_SHA256, ECDSA_SHA384, encryptAssertion, makeKeyPair, responseXml, RSA_SHA1, RSA_SHA512, signAssertion, signAssertionWithXmlsec, signResponse, xmlId, type ResponseFields } from "../../../test/support/saml-idp";
import { samlAddresses } from "./saml-addresses";
import { authnRequestUrl, serviceProviderMetadata, type SamlConnection } from "./saml-protocol";
import { checkSamlResponse, readSamlResponse, SAML_MAX_DEPTH } from "./saml-response";

const idp = makeKeyPair();
const other = makeKeyPair("rsa", "/CN=other-idp");
const spKeys = makeKeyPair("rsa", "/CN=porta-sp");
const addresses = samlAddresses("https://porta.test", "acme", "0193a6f0-0000-7000-8000-000000000001");
const connection: SamlConnection = {
  idpEntityId: "https://idp.test/entity",
  addresses,
  decryptionKey: null,
  settings: {
    ssoUrl: "https://idp.test/sso",
    signingCertificates: [other.cert, idp.cert],
    metadataUrl: null,
    metadataRefreshedAt: null,
    nameIdFormat: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
    allowSha1: false,
    idpInitiatedClientId: null,
    groupRoles: [],
    encryptionCertificate: null,
  },
};
const request = { id: xmlId(), issuedAt: new Date().toISOString() };
const fields = (more: Partial<ResponseFields> = {}): ResponseFields => ({
  idpEntityId: connection.idpEntityId,
  audience: addresses.entityId,
  acsUrl: addresses.acsUrl,
  inResponseTo: request.id,
  nameId: "u-1",
  attributes: { email: ["ada@example.com"], groups: ["staff", "admins"] },
  ...more,
});
const check = (xml: string, c = connection, r: typeof request | null = request) => checkSamlResponse(c, r, base64(xml));

describe("checkSamlResponse", () => {
  it("accepts a signed assertion and reads the subject, attributes and authentication context from it", async () => {
    const result = await check(signAssertion(responseXml(fields({ authnContextClassRef: "https://refeds.org/profile/mfa" })), idp));
    expect(result).toMatchObject({ ok: true, assertion: { nameId: "u-1", attributes: { email: ["ada@example.com"], groups: ["staff", "admins"] }, authnContextClassRefs: ["https://refeds.org/profile/mfa"] } });
  });

  it("accepts a signed response around an unsigned assertion, and RSA-SHA512", async () => {
    expect((await check(signResponse(responseXml(fields()), idp))).ok).toBe(true);
    expect((await check(signAssertion(responseXml(fields()), idp, RSA_SHA512))).ok).toBe(true);
  });

  it("refuses an unsigned response, and one signed by a key not on the connection", async () => {
    expect(await check(responseXml(fields()))).toMatchObject({ ok: false, reason: "invalid_signature" });
    expect(await check(signAssertion(responseXml(fields()), makeKeyPair()))).toMatchObject({ ok: false, reason: "invalid_signature" });
  });

  it("accepts ECDSA (P-256 with SHA-256, P-384 with SHA-384) signed by another implementation, xmlsec1", async () => {
    const p256 = makeKeyPair("ec", "/CN=ec-idp");
    const p384 = makeKeyPair("ec", "/CN=ec-idp-384", "P-384");
    const withCerts = (...certs: string[]) => ({ ...connection, settings: { ...connection.settings, signingCertificates: certs } });
    const signed = signAssertionWithXmlsec(responseXml(fields()), p256);
    expect(signed).toContain(ECDSA_SHA256);
    expect(await check(signed, withCerts(idp.cert, p256.cert))).toMatchObject({ ok: true, assertion: { nameId: "u-1" } });
    expect(await check(signAssertionWithXmlsec(responseXml(fields()), p384, ECDSA_SHA384), withCerts(p384.cert))).toMatchObject({ ok: true });
  });

  it("refuses ECDSA by a key not on the connection, an altered assertion, an RSA certificate under an ECDSA method, and ECDSA-SHA1", async () => {
    const ec = makeKeyPair("ec", "/CN=ec-idp");
    const withCerts = (...certs: string[]) => ({ ...connection, settings: { ...connection.settings, signingCertificates: certs } });
    const signed = signAssertionWithXmlsec(responseXml(fields()), ec);
    expect(await check(signed, withCerts(makeKeyPair("ec").cert))).toMatchObject({ ok: false, reason: "invalid_signature" });
    expect(await check(signed.replace("ada@example.com", "eve@example.com"), withCerts(ec.cert))).toMatchObject({ ok: false, reason: "invalid_signature" });
    const relabelled = signAssertion(responseXml(fields()), idp).replace("http://www.w3.org/2001/04/xmldsig-more#rsa-sha256", ECDSA_SHA256);
    expect(await check(relabelled)).toMatchObject({ ok: false, reason: "invalid_signature" });
    expect(await check(signAssertionWithXmlsec(responseXml(fields()), ec, ECDSA_SHA1), withCerts(ec.cert))).toMatchObject({ ok: false, reason: "weak_algorithm" });
  });

  it("refuses SHA-1 unless the connection allows it", async () => {
    const xml = signAssertion(responseXml(fields()), idp, RSA_SHA1);
    expect(await check(xml)).toMatchObject({ ok: false, reason: "weak_algorithm" });
    expect((await check(xml, { ...connection, settings: { ...connection.settings, allowSha1: true } })).ok).toBe(true);
  });

  it("refuses another audience, destination, recipient, issuer, and another request", async () => {
    expect(await check(signAssertion(responseXml(fields({ audience: "https://other.test/sp" })), idp))).toMatchObject({ reason: "wrong_audience" });
    expect(await check(signAssertion(responseXml(fields({ destination: "https://other.test/acs" })), idp))).toMatchObject({ reason: "wrong_destination" });
    expect(await check(signAssertion(responseXml(fields({ recipient: "https://other.test/acs" })), idp))).toMatchObject({ reason: "wrong_recipient" });
    expect(await check(signAssertion(responseXml(fields({ assertionIssuer: "https://evil.test" })), idp))).toMatchObject({ reason: "wrong_issuer" });
    expect(await check(signAssertion(responseXml(fields({ inResponseTo: xmlId() })), idp))).toMatchObject({ reason: "invalid_in_response_to" });
    expect(await check(signAssertion(responseXml(fields({ inResponseTo: null })), idp))).toMatchObject({ reason: "unsolicited_response" });
  });

  it("refuses an expired and a not yet valid assertion", async () => {
    expect(await check(signAssertion(responseXml(fields({ offsetMs: -20 * 60_000, lifetimeMs: 5 * 60_000 })), idp))).toMatchObject({ reason: "expired" });
    expect(await check(signAssertion(responseXml(fields({ offsetMs: 10 * 60_000 })), idp))).toMatchObject({ reason: "not_yet_valid" });
  });

  it("reads an IdP's refusal (a status other than Success) as upstream_error", async () => {
    const refusal = responseXml(fields())
      .replace(/<saml:Assertion[\s\S]*<\/saml:Assertion>/, "")
      .replace('<samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/>', '<samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Responder"><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:AuthnFailed"/></samlp:StatusCode>');
    expect(await check(refusal)).toMatchObject({ ok: false, reason: "upstream_error" });
  });

  it("decrypts an encrypted assertion with the connection's key", async () => {
    const encrypted = { ...connection, decryptionKey: spKeys.key, settings: { ...connection.settings, encryptionCertificate: spKeys.cert } };
    const xml = await encryptAssertion(signAssertion(responseXml(fields()), idp), spKeys.cert);
    expect(xml).toContain("EncryptedAssertion");
    expect(await check(xml, encrypted)).toMatchObject({ ok: true, assertion: { nameId: "u-1" } });
    expect(await check(xml, { ...connection, decryptionKey: makeKeyPair().key })).toMatchObject({ ok: false, reason: "decryption_failed" });
  });

  it("refuses bytes that are not a plain SAML response before any signature is looked at", () => {
    expect(readSamlResponse("%%%")).toMatchObject({ ok: false, reason: "malformed" });
    expect(readSamlResponse("A".repeat(300 * 1024))).toMatchObject({ ok: false, reason: "too_large" });
    expect(readSamlResponse(base64('<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x "y">]><r>&x;</r>'))).toMatchObject({ ok: false, reason: "malformed" });
    expect(readSamlResponse(base64(responseXml(fields({ nameId: "x" })).replace(">x<", ">user@evil.com<!---->.example.com<")))).toMatchObject({ ok: false, reason: "malformed" });
    const deep = "<a>".repeat(SAML_MAX_DEPTH + 5) + "</a>".repeat(SAML_MAX_DEPTH + 5);
    expect(readSamlResponse(base64(responseXml(fields()).replace("<samlp:Status>", `<samlp:Extensions>${deep}</samlp:Extensions><samlp:Status>`)))).toMatchObject({ ok: false, reason: "too_large" });
    expect(readSamlResponse(base64("<not-closed>"))).toMatchObject({ ok: false, reason: "malformed" });
  });
});

describe("the AuthnRequest and the metadata", () => {
  it("sends an AuthnRequest with the ACS URL, NameID format and RelayState over HTTP-Redirect", async () => {
    const { url, request: sent } = await authnRequestUrl(connection, "state-1");
    const to = new URL(url);
    expect(to.origin + to.pathname).toBe("https://idp.test/sso");
    expect(to.searchParams.get("RelayState")).toBe("state-1");
    expect(sent.id).toMatch(/^_[0-9a-f]{40}$/);
  });

  it("publishes the entity ID, the ACS and the encryption certificate when there is one", async () => {
    const plain = await serviceProviderMetadata(connection);
    expect(plain).toContain(`entityID="${addresses.entityId}"`);
    expect(plain).toContain(`Location="${addresses.acsUrl}"`);
    expect(plain).not.toContain("KeyDescriptor");
    const withKey = await serviceProviderMetadata({ ...connection, decryptionKey: spKeys.key, settings: { ...connection.settings, encryptionCertificate: spKeys.cert } });
    expect(withKey).toContain('use="encryption"');
  });
});
