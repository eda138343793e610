import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { inflateRawSync } from "node:zlib";
import { SamlLib } from "samlify";

/**
 * A SAML identity provider for tests: its own key pair and certificate (openssl), responses
 * built from a template with every field a test may want to change, signed (response and/or
 * assertion) and encrypted by samlify's primitives. Attacks edit the XML between the steps.
 */

export interface KeyPair {
  key: string;
  cert: string;
}

/** A self-signed certificate and its key: RSA 2048 by default, or an EC key (P-256 unless named). */
export function makeKeyPair(kind: "rsa" | "ec" = "rsa", subject = "/CN=test-idp", curve = "P-256"): KeyPair {
  const dir = mkdtempSync(join(tmpdir(), "porta-saml-"));
  try {
    const newkey = kind === "rsa" ? ["-newkey", "rsa:2048"] : ["-newkey", "ec", "-pkeyopt", `ec_paramgen_curve:${curve}`];
    execFileSync("openssl", ["req", "-x509", ...newkey, "-nodes", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"), "-days", "2", "-subj", subject], { stdio: "ignore" });
    return { key: readFileSync(join(dir, "key.pem"), "utf8"), cert: readFileSync(join(dir, "cert.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const SAML_NS = { protocol: "urn:oasis:names:tc:SAML:2.0:protocol", assertion: "urn:oasis:names:tc:SAML:2.0:assertion" };
export const RSA_SHA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256";
export const RSA_SHA512 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512";
export const RSA_SHA1 = "http://www.w3.org/2000/09/xmldsig#rsa-sha1";

export interface ResponseFields {
  idpEntityId: string;
  audience: string;
  acsUrl: string;
  inResponseTo?: string | null;
  destination?: string | null;
  recipient?: string;
  nameId: string;
  nameIdFormat?: string;
  attributes?: Record<string, string[]>;
  authnContextClassRef?: string;
  /** Shifts every instant (negative: in the past). */
  offsetMs?: number;
  /** How long the assertion is valid from its IssueInstant. */
  lifetimeMs?: number;
  assertionId?: string;
  responseId?: string;
  assertionIssuer?: string;
}

const xmlText = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
export const xmlId = () => `_${randomBytes(16).toString("hex")}`;

/** An unsigned Response with one Assertion, as an IdP answers an AuthnRequest. */
export function responseXml(f: ResponseFields): string {
  const now = Date.now() + (f.offsetMs ?? 0);
  const at = (ms: number) => new Date(now + ms).toISOString();
  const until = at(f.lifetimeMs ?? 5 * 60_000);
  const inResponseTo = f.inResponseTo === undefined ? null : f.inResponseTo;
  const irt = inResponseTo ? ` InResponseTo="${xmlText(inResponseTo)}"` : "";
  const destination = f.destination === undefined ? f.acsUrl : f.destination;
  const attrs = Object.entries(f.attributes ?? {})
    .map(([name, values]) => `<saml:Attribute Name="${xmlText(name)}">${values.map((v) => `<saml:AttributeValue>${xmlText(v)}</saml:AttributeValue>`).join("")}</saml:Attribute>`)
    .join("");
  return (
    `<samlp:Response xmlns:samlp="${SAML_NS.protocol}" xmlns:saml="${SAML_NS.assertion}" ID="${f.responseId ?? xmlId()}" Version="2.0" IssueInstant="${at(0)}"${destination ? ` Destination="${xmlText(destination)}"` : ""}${irt}>` +
    `<saml:Issuer>${xmlText(f.idpEntityId)}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
    `<saml:Assertion xmlns:saml="${SAML_NS.assertion}" ID="${f.assertionId ?? xmlId()}" Version="2.0" IssueInstant="${at(0)}">` +
    `<saml:Issuer>${xmlText(f.assertionIssuer ?? f.idpEntityId)}</saml:Issuer>` +
    `<saml:Subject><saml:NameID Format="${f.nameIdFormat ?? "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent"}">${xmlText(f.nameId)}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${until}" Recipient="${xmlText(f.recipient ?? f.acsUrl)}"${irt}/></saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${at(-30_000)}" NotOnOrAfter="${until}"><saml:AudienceRestriction><saml:Audience>${xmlText(f.audience)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${at(0)}" SessionIndex="${xmlId()}"><saml:AuthnContext><saml:AuthnContextClassRef>${f.authnContextClassRef ?? "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport"}</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
    (attrs ? `<saml:AttributeStatement>${attrs}</saml:AttributeStatement>` : "") +
    `</saml:Assertion></samlp:Response>`
  );
}

/** The base64 DER of a PEM certificate (as metadata carries it, and as samlify takes it). */
export const certBody = (pem: string) => pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").replace(/\s+/g, "");

const ASSERTION_PATH = "/*[local-name(.)='Response']/*[local-name(.)='Assertion']";

/** The assertion signed (enveloped signature after its Issuer), by samlify. */
export function signAssertion(xml: string, keys: KeyPair, algorithm = RSA_SHA256): string {
  return SamlLib.constructSAMLSignature({
    rawSamlMessage: xml,
    referenceTagXPath: ASSERTION_PATH,
    privateKey: keys.key,
    signatureAlgorithm: algorithm,
    signingCert: certBody(keys.cert),
    isBase64Output: false,
    signatureConfig: { prefix: "ds", location: { reference: `${ASSERTION_PATH}/*[local-name(.)='Issuer']`, action: "after" } },
  });
}

export const ECDSA_SHA256 = "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256";
export const ECDSA_SHA384 = "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384";
export const ECDSA_SHA1 = "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha1";

/**
 * The assertion signed by xmlsec1 (the C library of XML Security, Debian's xmlsec1), which signs
 * with ECDSA where samlify's xml-crypto cannot: an enveloped signature after the assertion's
 * Issuer, exclusive canonicalization, a SHA-256 digest (SHA-1 for an ECDSA-SHA1 signature).
 */
export function signAssertionWithXmlsec(xml: string, keys: KeyPair, algorithm = ECDSA_SHA256): string {
  // xml-crypto digests SHA-1, SHA-256 and SHA-512 only (none of the IdPs sends SHA-384 digests).
  const digest = algorithm.endsWith("sha1") ? "http://www.w3.org/2000/09/xmldsig#sha1" : "http://www.w3.org/2001/04/xmlenc#sha256";
  const id = /<saml:Assertion [^>]*ID="([^"]+)"/.exec(xml)?.[1];
  if (!id) throw new Error("no assertion ID");
  const template =
    `<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:SignedInfo><ds:CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/>` +
    `<ds:SignatureMethod Algorithm="${algorithm}"/><ds:Reference URI="#${id}"><ds:Transforms><ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/>` +
    `<ds:Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/></ds:Transforms><ds:DigestMethod Algorithm="${digest}"/><ds:DigestValue/></ds:Reference></ds:SignedInfo>` +
    `<ds:SignatureValue/><ds:KeyInfo><ds:X509Data/></ds:KeyInfo></ds:Signature>`;
  const at = xml.indexOf("</saml:Issuer>", xml.indexOf("<saml:Assertion ")) + "</saml:Issuer>".length;
  const dir = mkdtempSync(join(tmpdir(), "porta-xmlsec-"));
  try {
    writeFileSync(join(dir, "in.xml"), xml.slice(0, at) + template + xml.slice(at));
    writeFileSync(join(dir, "key.pem"), keys.key);
    writeFileSync(join(dir, "cert.pem"), keys.cert);
    execFileSync("xmlsec1", ["--sign", "--privkey-pem", `${join(dir, "key.pem")},${join(dir, "cert.pem")}`, "--id-attr:ID", "urn:oasis:names:tc:SAML:2.0:assertion:Assertion", "--output", join(dir, "out.xml"), join(dir, "in.xml")], { stdio: "pipe" });
    return readFileSync(join(dir, "out.xml"), "utf8").replace(/^<\?xml[^>]*>\s*/, "");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The whole response signed (enveloped signature after the response's Issuer), by samlify. */
export function signResponse(xml: string, keys: KeyPair, algorithm = RSA_SHA256): string {
  return SamlLib.constructSAMLSignature({
    rawSamlMessage: xml,
    isMessageSigned: true,
    privateKey: keys.key,
    signatureAlgorithm: algorithm,
    signingCert: certBody(keys.cert),
    isBase64Output: false,
    signatureConfig: { prefix: "ds", location: { reference: "/*[local-name(.)='Response']/*[local-name(.)='Issuer']", action: "after" } },
  });
}

/** The response's assertion encrypted for the SP's certificate (AES-256-GCM, RSA-OAEP), by samlify. */
export async function encryptAssertion(xml: string, spCert: string): Promise<string> {
  const body = certBody(spCert);
  const source = {
    entitySetting: {
      isAssertionEncrypted: true,
      dataEncryptionAlgorithm: "http://www.w3.org/2009/xmlenc11#aes256-gcm",
      keyEncryptionAlgorithm: "http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p",
      tagPrefix: { encryptedAssertion: "saml" },
    },
  };
  const target = { entityMeta: { getX509Certificate: () => body } };
  const encrypted = await SamlLib.encryptAssertion(source as never, target as never, xml);
  return Buffer.from(encrypted, "base64").toString("utf8");
}

export const base64 = (xml: string) => Buffer.from(xml, "utf8").toString("base64");

/** The AuthnRequest of an HTTP-Redirect URL (its ID, ACS URL, NameID format) and the RelayState. */
export function readRedirect(location: string): { url: URL; relayState: string; xml: string; id: string; acsUrl: string | null; nameIdFormat: string | null; destination: string | null } {
  const url = new URL(location);
  const xml = inflateRawSync(Buffer.from(url.searchParams.get("SAMLRequest") ?? "", "base64")).toString("utf8");
  const attr = (name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(xml)?.[1] ?? null;
  const format = /<samlp:NameIDPolicy[^>]*Format="([^"]*)"/.exec(xml)?.[1] ?? null;
  return { url, relayState: url.searchParams.get("RelayState") ?? "", xml, id: attr("ID") ?? "", acsUrl: attr("AssertionConsumerServiceURL"), nameIdFormat: format, destination: attr("Destination") };
}
