import { DOMParser } from "@xmldom/xmldom";
import type { Profile } from "@node-saml/node-saml";
import { onFirstUse } from "../lazy";
import { nodeSaml, SAML_CLOCK_SKEW_MS, SAML_MAX_ASSERTION_AGE_MS, samlFor, type SamlConnection, type SentRequest } from "./saml-protocol";

/** node-saml's XML decryption, loaded with the first encrypted assertion (decision 056). */
const nodeSamlXml = onFirstUse(() => import("@node-saml/node-saml/lib/xml"));

/**
 * Checks an HTTP-POST SAMLResponse for one connection (decision 081). Porta looks at the bytes
 * before node-saml does (size, base64, no DTD, no comments, nesting depth, the algorithms the
 * signatures name, InResponseTo and Destination), node-saml checks the signature (of the
 * response or of the assertion, against every certificate of the connection), the assertion it
 * covers, InResponseTo against the request this browser sent, the time conditions and the
 * audience; then Porta checks what node-saml does not: the assertion's issuer, the
 * SubjectConfirmationData Recipient, the algorithms inside an encrypted assertion, and that the
 * assertion has an ID and a NameID. Everything read afterwards comes from the signed assertion.
 */

/** The base64 SAMLResponse Porta reads at most (a response with a few certificates and attributes is a few KiB). */
export const SAML_RESPONSE_MAX_BASE64 = 256 * 1024;
/** Elements nested deeper than this are refused (an encrypted, signed response is about ten deep). */
export const SAML_MAX_DEPTH = 40;
/** More elements than this are refused (a response with a hundred attribute values has a few hundred). */
export const SAML_MAX_ELEMENTS = 5_000;

export type SamlRefusal =
  | "too_large"
  | "malformed"
  | "unsolicited_response"
  | "invalid_in_response_to"
  | "wrong_destination"
  | "weak_algorithm"
  | "invalid_signature"
  | "wrong_issuer"
  | "wrong_audience"
  | "wrong_recipient"
  | "expired"
  | "not_yet_valid"
  | "decryption_failed"
  | "missing_subject"
  | "upstream_error";

export interface VerifiedAssertion {
  assertionId: string;
  nameId: string;
  nameIdFormat: string | null;
  /** Attribute values by attribute name (text values only). */
  attributes: Record<string, string[]>;
  authnContextClassRefs: string[];
  /** After this the assertion is refused anyway: its ID is kept as used until then. */
  usableUntil: Date;
}

export type SamlCheckResult = { ok: true; assertion: VerifiedAssertion } | { ok: false; reason: SamlRefusal; detail: string };

const PROTOCOL_NS = "urn:oasis:names:tc:SAML:2.0:protocol";
const ASSERTION_NS = "urn:oasis:names:tc:SAML:2.0:assertion";
const DSIG_NS = "http://www.w3.org/2000/09/xmldsig#";
const SHA1_ALGORITHMS = new Set(["http://www.w3.org/2000/09/xmldsig#rsa-sha1", "http://www.w3.org/2000/09/xmldsig#sha1", "http://www.w3.org/2000/09/xmldsig#dsa-sha1", "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha1"]);

const refuse = (reason: SamlRefusal, detail: string): SamlCheckResult & { ok: false } => ({ ok: false, reason, detail });

/** What the first look at the posted bytes found. */
export type ReadResponse =
  | { ok: true; xml: string; base64: string; inResponseTo: string | null; destination: string | null; responseIssuer: string | null; encrypted: Element | null; algorithms: string[] }
  | { ok: false; reason: SamlRefusal; detail: string };

/**
 * The posted SAMLResponse as XML, before any signature is looked at: refused when too large,
 * not base64, not UTF-8, with a DOCTYPE or entity (XXE, entity expansion), a comment (the
 * NameID comment trick) or processing instruction, nested too deep, or not a SAML Response.
 */
export function readSamlResponse(posted: string): ReadResponse {
  if (posted.length > SAML_RESPONSE_MAX_BASE64) return refuse("too_large", "base64 over the size limit");
  const base64 = posted.replace(/[\r\n\t ]+/g, "");
  if (base64.length === 0 || base64.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return refuse("malformed", "not base64");
  let xml: string;
  try {
    xml = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(base64, "base64"));
  } catch {
    return refuse("malformed", "not UTF-8");
  }
  if (/<!DOCTYPE|<!ENTITY|<!\[CDATA\[/i.test(xml)) return refuse("malformed", "DTD, entity or CDATA");
  if (xml.includes("<!--")) return refuse("malformed", "XML comment");
  if (/<\?(?!xml[\s?])/i.test(xml) || (xml.match(/<\?/g)?.length ?? 0) > 1) return refuse("malformed", "processing instruction");
  // Every element starts with "<": a cheap bound before the parser builds anything.
  if ((xml.match(/</g)?.length ?? 0) > 2 * SAML_MAX_ELEMENTS) return refuse("too_large", "too many elements");
  let doc: Document;
  try {
    const fail = (message: string) => {
      throw new Error(message);
    };
    doc = new DOMParser({ errorHandler: { warning: () => undefined, error: fail, fatalError: fail } }).parseFromString(xml, "text/xml") as unknown as Document;
  } catch {
    return refuse("malformed", "not well-formed XML");
  }
  const root = doc.documentElement;
  if (!root || root.localName !== "Response" || root.namespaceURI !== PROTOCOL_NS) return refuse("malformed", "not a SAML Response");
  // node-saml, xml-crypto and xml2js walk the tree recursively.
  if (depthOf(root) > SAML_MAX_DEPTH) return refuse("too_large", "nested too deep");
  const algorithms: string[] = [];
  for (const name of ["SignatureMethod", "DigestMethod"]) {
    for (const node of Array.from(doc.getElementsByTagNameNS(DSIG_NS, name))) {
      // Only the signatures' own methods: the DigestMethod of an EncryptedKey's RSA-OAEP is not a signature digest.
      const parent = node.parentNode as Element | null;
      if (parent && parent.namespaceURI === DSIG_NS && (parent.localName === "SignedInfo" || parent.localName === "Reference")) algorithms.push(node.getAttribute("Algorithm") ?? "");
    }
  }
  const child = (name: string, ns: string) => Array.from(root.childNodes).find((n): n is Element => n.nodeType === 1 && (n as Element).localName === name && (n as Element).namespaceURI === ns) ?? null;
  const attribute = (name: string) => (root.hasAttribute(name) ? root.getAttribute(name) : null);
  return {
    ok: true,
    xml,
    base64,
    inResponseTo: attribute("InResponseTo"),
    destination: attribute("Destination"),
    responseIssuer: child("Issuer", ASSERTION_NS)?.textContent?.trim() ?? null,
    encrypted: child("EncryptedAssertion", ASSERTION_NS),
    algorithms,
  };
}

/** How deep the parsed elements nest, walked without recursion (a deep document must not exhaust the stack here). */
function depthOf(root: Element): number {
  let max = 0;
  const stack: Array<[Node, number]> = [[root, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > max) max = depth;
    for (let c = node.firstChild; c; c = c.nextSibling) if (c.nodeType === 1) stack.push([c, depth + 1]);
  }
  return max;
}

const weak = (algorithms: string[]) => algorithms.find((a) => SHA1_ALGORITHMS.has(a));

/** node-saml's refusals by their message, in Porta's reasons. */
async function reasonOf(error: unknown): Promise<{ reason: SamlRefusal; detail: string }> {
  const { SamlStatusError } = await nodeSaml();
  if (error instanceof SamlStatusError) return { reason: "upstream_error", detail: error.message.slice(0, 200) };
  const message = error instanceof Error ? error.message : String(error);
  const detail = message.slice(0, 200);
  if (/InResponseTo/i.test(message)) return { reason: "invalid_in_response_to", detail };
  if (/not yet valid/i.test(message)) return { reason: "not_yet_valid", detail };
  if (/expired|No valid subject confirmation/i.test(message)) return { reason: "expired", detail };
  if (/audience/i.test(message)) return { reason: "wrong_audience", detail };
  if (/decrypt|EncryptedAssertion/i.test(message)) return { reason: "decryption_failed", detail };
  if (/signature|signed|Referenced node|ID cannot refer|multiple assertions|Missing SAML assertion/i.test(message)) return { reason: "invalid_signature", detail };
  return { reason: "malformed", detail };
}

type XmlJs = { $?: Record<string, string>; _?: string } & { [key: string]: XmlJs[] | Record<string, string> | string | undefined };

const children = (node: XmlJs | undefined, name: string): XmlJs[] => {
  const value = node?.[name];
  return Array.isArray(value) ? value : [];
};
const textOf = (node: XmlJs | undefined): string | null => (node && typeof node._ === "string" ? node._ : null);

/**
 * The response checked for this connection and the request this browser sent. `request` null:
 * an IdP-initiated response, which must answer no request at all (neither the response nor
 * its SubjectConfirmationData names an InResponseTo); every other check is the same.
 */
export async function checkSamlResponse(connection: SamlConnection, request: SentRequest | null, posted: string, now = new Date()): Promise<SamlCheckResult> {
  const read = readSamlResponse(posted);
  if (!read.ok) return read;
  if (request && read.inResponseTo === null) return refuse("unsolicited_response", "no InResponseTo");
  if (request ? read.inResponseTo !== request.id : read.inResponseTo !== null) return refuse("invalid_in_response_to", "not the request this sign-in sent");
  if (read.destination !== null && read.destination !== connection.addresses.acsUrl) return refuse("wrong_destination", "Destination is not this connection's ACS");
  if (read.responseIssuer !== null && read.responseIssuer !== connection.idpEntityId) return refuse("wrong_issuer", "response Issuer is not the connection's IdP");
  const sha1 = weak(read.algorithms);
  if (sha1 && !connection.settings.allowSha1) return refuse("weak_algorithm", `SHA-1 (${sha1})`);

  let profile: Profile | null;
  try {
    ({ profile } = await (await samlFor(connection, request)).validatePostResponseAsync({ SAMLResponse: read.base64 }));
  } catch (error) {
    const { reason, detail } = await reasonOf(error);
    // The key unwrapping and the cipher fail with their own messages (OAEP decoding, a bad tag).
    return refuse(reason === "malformed" && read.encrypted ? "decryption_failed" : reason, detail);
  }
  if (!profile) return refuse("malformed", "no assertion");
  // Everything below reads the assertion node-saml verified (the signed bytes), never the posted envelope.
  const assertion = (profile.getAssertion?.() as { Assertion?: XmlJs } | undefined)?.Assertion;
  if (!assertion) return refuse("malformed", "no assertion");
  if (profile.issuer !== connection.idpEntityId) return refuse("wrong_issuer", "assertion Issuer is not the connection's IdP");
  const assertionId = assertion.$?.ID;
  if (!assertionId || assertionId.length > 256) return refuse("malformed", "assertion without a usable ID");
  const subject = children(assertion, "Subject")[0];
  const confirmations = children(subject, "SubjectConfirmation").flatMap((c) => children(c, "SubjectConfirmationData"));
  const recipients = confirmations.map((d) => d.$?.Recipient ?? null);
  if (recipients.length === 0 || recipients.some((r) => r !== connection.addresses.acsUrl)) return refuse("wrong_recipient", "SubjectConfirmationData Recipient is not this connection's ACS");
  // An assertion that answered some request (another browser's) cannot come back as unsolicited.
  if (!request && confirmations.some((d) => d.$?.InResponseTo !== undefined)) return refuse("invalid_in_response_to", "assertion answers a request, posted as unsolicited");
  if (read.encrypted) {
    // The encrypted assertion's own signature names its algorithms inside the ciphertext.
    try {
      const inner = readAlgorithms(await (await nodeSamlXml()).decryptXml(read.encrypted.toString(), connection.decryptionKey ?? ""));
      const innerSha1 = weak(inner);
      if (innerSha1 && !connection.settings.allowSha1) return refuse("weak_algorithm", `SHA-1 (${innerSha1})`);
    } catch {
      return refuse("decryption_failed", "encrypted assertion did not decrypt again");
    }
  }
  const nameId = typeof profile.nameID === "string" ? profile.nameID.trim() : "";
  if (!nameId || nameId.length > 512) return refuse("missing_subject", "no NameID");
  const issueInstant = Date.parse(assertion.$?.IssueInstant ?? "");
  if (Number.isNaN(issueInstant)) return refuse("malformed", "assertion without IssueInstant");
  if (issueInstant > now.getTime() + SAML_CLOCK_SKEW_MS) return refuse("not_yet_valid", "issued in the future");
  if (issueInstant + SAML_MAX_ASSERTION_AGE_MS + SAML_CLOCK_SKEW_MS <= now.getTime()) return refuse("expired", "issued too long ago");
  const authnContextClassRefs = children(assertion, "AuthnStatement")
    .flatMap((s) => children(s, "AuthnContext"))
    .flatMap((c) => children(c, "AuthnContextClassRef"))
    .map(textOf)
    .filter((v): v is string => v !== null)
    .map((v) => v.trim());
  return {
    ok: true,
    assertion: {
      assertionId,
      nameId,
      nameIdFormat: typeof profile.nameIDFormat === "string" ? profile.nameIDFormat : null,
      attributes: attributesOf(assertion),
      authnContextClassRefs,
      usableUntil: new Date(issueInstant + SAML_MAX_ASSERTION_AGE_MS + SAML_CLOCK_SKEW_MS),
    },
  };
}

function readAlgorithms(xml: string): string[] {
  const doc = new DOMParser().parseFromString(xml, "text/xml") as unknown as Document;
  const found: string[] = [];
  for (const name of ["SignatureMethod", "DigestMethod"]) {
    for (const node of Array.from(doc.getElementsByTagNameNS(DSIG_NS, name))) {
      const parent = node.parentNode as Element | null;
      if (parent && (parent.localName === "SignedInfo" || parent.localName === "Reference")) found.push(node.getAttribute("Algorithm") ?? "");
    }
  }
  return found;
}

/** The signed assertion's attributes: text values by name; values with child elements are left out. */
function attributesOf(assertion: XmlJs): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const attribute of children(assertion, "AttributeStatement").flatMap((s) => children(s, "Attribute"))) {
    const name = attribute.$?.Name;
    if (!name) continue;
    const values = children(attribute, "AttributeValue")
      .map(textOf)
      .filter((v): v is string => v !== null)
      .map((v) => v.trim())
      .filter(Boolean);
    out[name] = [...(out[name] ?? []), ...values].slice(0, 500);
  }
  return out;
}
