import { DOMParser } from "@xmldom/xmldom";
import { SamlEntityIdSchema } from "~/schemas/identity-provider";
import { normalizeCertificate } from "./saml-credentials";

/**
 * Reads an IdP's SAML 2.0 metadata (decision 081): its entity ID, its single sign-on URL for the
 * HTTP-Redirect binding and its signing certificates. The XML comes from an administrator or from
 * an address someone else serves, so it is hostile until shown otherwise: no DTD at all (no
 * external entities, no entity expansion), a size and a nesting limit, no characters XML does not
 * allow, and every problem named by field for a 422.
 */

export const SAML_METADATA_MAX_BYTES = 1024 * 1024;
export const SAML_METADATA_MAX_DEPTH = 40;
/** More signing certificates than a rollover needs are not kept (SamlSettingsSchema allows five). */
export const SAML_MAX_SIGNING_CERTIFICATES = 5;

const MD = "urn:oasis:names:tc:SAML:2.0:metadata";
const DS = "http://www.w3.org/2000/09/xmldsig#";
export const HTTP_REDIRECT_BINDING = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect";

export interface IdpMetadata {
  entityId: string;
  ssoUrl: string;
  /** PEM, in the order the metadata lists them, without duplicates. */
  signingCertificates: string[];
  /** The NameID formats the IdP says it supports (may be empty). */
  nameIdFormats: string[];
}

export interface MetadataProblem {
  field: string;
  message: string;
}

export type MetadataResult = { ok: true; metadata: IdpMetadata } | { ok: false; problems: MetadataProblem[] };

/** Characters XML 1.0 forbids (NUL and most C0 controls) and UTF-16 halves without their other half. */
// eslint-disable-next-line no-control-regex -- the control characters are what this refuses
const FORBIDDEN_CHARACTERS = /[\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The deepest element nesting of the text, counted before any parser builds a tree of it (a
 * million nested elements would cost the parser and every walk after it). Comments, CDATA and
 * processing instructions are skipped; the count stops at the first level past the limit.
 */
function nestingExceeds(xml: string, limit: number): boolean {
  let depth = 0;
  let i = 0;
  while (i < xml.length) {
    const lt = xml.indexOf("<", i);
    if (lt < 0) break;
    if (xml.startsWith("<!--", lt)) {
      const end = xml.indexOf("-->", lt + 4);
      i = end < 0 ? xml.length : end + 3;
      continue;
    }
    if (xml.startsWith("<![CDATA[", lt)) {
      const end = xml.indexOf("]]>", lt + 9);
      i = end < 0 ? xml.length : end + 3;
      continue;
    }
    if (xml.startsWith("<?", lt)) {
      const end = xml.indexOf("?>", lt + 2);
      i = end < 0 ? xml.length : end + 2;
      continue;
    }
    const gt = xml.indexOf(">", lt + 1);
    if (gt < 0) break;
    if (xml[lt + 1] === "/") depth -= 1;
    else if (xml[gt - 1] !== "/") {
      depth += 1;
      if (depth > limit) return true;
    }
    i = gt + 1;
  }
  return false;
}

const childElements = (parent: Element, ns: string, localName: string): Element[] => {
  const found: Element[] = [];
  for (let node = parent.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === 1 && (node as Element).namespaceURI === ns && (node as Element).localName === localName) found.push(node as Element);
  }
  return found;
};

const textOf = (element: Element) => (element.textContent ?? "").trim();

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "https:" || url.protocol === "http:") && value.length <= 500;
  } catch {
    return false;
  }
}

/** Parses metadata text; `field` names the input in the problems (samlMetadataXml, samlMetadataUrl). */
export function parseIdpMetadata(xml: string, field = "samlMetadataXml"): MetadataResult {
  const refuse = (message: string): MetadataResult => ({ ok: false, problems: [{ field, message }] });
  if (Buffer.byteLength(xml, "utf8") > SAML_METADATA_MAX_BYTES) return refuse(`must have at most ${SAML_METADATA_MAX_BYTES} bytes`);
  if (xml.trim().length === 0) return refuse("must not be empty");
  if (FORBIDDEN_CHARACTERS.test(xml)) return refuse("must not contain NUL, control characters or unpaired surrogates");
  // Metadata never needs a DTD; without one there is nothing to expand and nothing external to load.
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) return refuse("must not contain a DOCTYPE or ENTITY declaration");
  if (nestingExceeds(xml, SAML_METADATA_MAX_DEPTH)) return refuse(`must not nest elements deeper than ${SAML_METADATA_MAX_DEPTH} levels`);

  const errors: string[] = [];
  let doc: Document;
  try {
    const parser = new DOMParser({
      errorHandler: {
        // xmldom reports some malformations (an unclosed element) only as warnings; metadata has none.
        warning: (message: string) => void errors.push(message),
        error: (message: string) => void errors.push(message),
        fatalError: (message: string) => void errors.push(message),
      },
    });
    doc = parser.parseFromString(xml, "application/xml") as unknown as Document;
  } catch {
    return refuse("is not well-formed XML");
  }
  if (errors.length > 0 || !doc?.documentElement) return refuse("is not well-formed XML");

  let entity: Element = doc.documentElement;
  if (entity.namespaceURI === MD && entity.localName === "EntitiesDescriptor") {
    const idps = childElements(entity, MD, "EntityDescriptor").filter((e) => childElements(e, MD, "IDPSSODescriptor").length > 0);
    if (idps.length !== 1) return refuse(`must describe one identity provider (this lists ${idps.length})`);
    entity = idps[0]!;
  }
  if (entity.namespaceURI !== MD || entity.localName !== "EntityDescriptor") return refuse("must be SAML 2.0 metadata (an md:EntityDescriptor)");

  const problems: MetadataProblem[] = [];
  const entityId = SamlEntityIdSchema.safeParse(entity.getAttribute("entityID") ?? "");
  if (!entityId.success) problems.push({ field: `${field}.entityID`, message: entityId.error.issues[0]?.message ?? "is not an entity ID" });

  const idp = childElements(entity, MD, "IDPSSODescriptor")[0];
  if (!idp) return { ok: false, problems: [...problems, { field: `${field}.IDPSSODescriptor`, message: "is missing: this is not an identity provider's metadata" }] };

  const redirect = childElements(idp, MD, "SingleSignOnService").find((s) => s.getAttribute("Binding") === HTTP_REDIRECT_BINDING);
  const ssoUrl = redirect?.getAttribute("Location")?.trim() ?? "";
  if (!redirect) problems.push({ field: `${field}.SingleSignOnService`, message: "has no HTTP-Redirect binding" });
  else if (!isHttpUrl(ssoUrl)) problems.push({ field: `${field}.SingleSignOnService`, message: "Location must be an absolute http(s) URL" });

  const certificates: string[] = [];
  for (const descriptor of childElements(idp, MD, "KeyDescriptor")) {
    const use = descriptor.getAttribute("use");
    if (use && use !== "signing") continue;
    for (const keyInfo of childElements(descriptor, DS, "KeyInfo")) {
      for (const data of childElements(keyInfo, DS, "X509Data")) {
        for (const certElement of childElements(data, DS, "X509Certificate")) {
          const pem = normalizeCertificate(textOf(certElement));
          if (!pem) {
            problems.push({ field: `${field}.KeyDescriptor`, message: "holds something that is not an X.509 certificate" });
            continue;
          }
          if (!certificates.includes(pem)) certificates.push(pem);
        }
      }
    }
  }
  if (certificates.length === 0 && !problems.some((p) => p.field === `${field}.KeyDescriptor`)) {
    problems.push({ field: `${field}.KeyDescriptor`, message: "has no signing certificate (Porta accepts only signed responses)" });
  }
  const nameIdFormats = childElements(idp, MD, "NameIDFormat").map(textOf).filter((f) => f.length > 0);
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, metadata: { entityId: entityId.data!, ssoUrl, signingCertificates: certificates.slice(0, SAML_MAX_SIGNING_CERTIFICATES), nameIdFormats } };
}
