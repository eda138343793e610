import { beforeAll, describe, expect, it } from "vitest";
import { generateEncryptionKeyPair, normalizeCertificate } from "./saml-credentials";
import { parseIdpMetadata, SAML_METADATA_MAX_BYTES, SAML_METADATA_MAX_DEPTH, type MetadataResult } from "./saml-metadata";

let certA = "";
let certB = "";
let encCert = "";
const der = (pem: string) => pem.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, "");

beforeAll(async () => {
  certA = (await generateEncryptionKeyPair("idp-a")).certificatePem;
  certB = (await generateEncryptionKeyPair("idp-b")).certificatePem;
  encCert = (await generateEncryptionKeyPair("idp-enc")).certificatePem;
});

function metadata(options: { entityId?: string; keys?: string; sso?: string; root?: (inner: string) => string } = {}) {
  const keys =
    options.keys ??
    `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>
${der(certA)}
</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
<md:KeyDescriptor><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${der(certB)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
<md:KeyDescriptor use="encryption"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${der(encCert)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`;
  const sso =
    options.sso ??
    `<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://idp.example.com/sso/post"/>
<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.example.com/sso/redirect"/>`;
  const entity = `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${options.entityId ?? "https://idp.example.com/entity"}">
<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
${keys}
<md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat>
${sso}
</md:IDPSSODescriptor></md:EntityDescriptor>`;
  return `<?xml version="1.0" encoding="UTF-8"?>\n${options.root ? options.root(entity) : entity}`;
}

const fields = (result: MetadataResult) => (result.ok ? [] : result.problems.map((p) => p.field));
const messages = (result: MetadataResult) => (result.ok ? "" : result.problems.map((p) => p.message).join("; "));

describe("IdP metadata", () => {
  it("reads the entity ID, the HTTP-Redirect SSO URL and every signing certificate (not the encryption one)", () => {
    const result = parseIdpMetadata(metadata());
    expect(result.ok, messages(result)).toBe(true);
    if (!result.ok) return;
    expect(result.metadata.entityId).toBe("https://idp.example.com/entity");
    expect(result.metadata.ssoUrl).toBe("https://idp.example.com/sso/redirect");
    expect(result.metadata.signingCertificates).toEqual([normalizeCertificate(certA), normalizeCertificate(certB)]);
    expect(result.metadata.signingCertificates.join()).not.toContain(der(encCert).slice(0, 40));
    expect(result.metadata.nameIdFormats).toEqual(["urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"]);
  });

  it("takes a URN as the entity ID and the one IdP of an EntitiesDescriptor", () => {
    const wrapped = metadata({ entityId: "urn:example:idp", root: (inner) => `<md:EntitiesDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata">${inner}</md:EntitiesDescriptor>` });
    const result = parseIdpMetadata(wrapped);
    expect(result.ok, messages(result)).toBe(true);
    if (result.ok) expect(result.metadata.entityId).toBe("urn:example:idp");
  });

  it("refuses a DOCTYPE, an external entity and the billion laughs before parsing", () => {
    const xxe = `<?xml version="1.0"?><!DOCTYPE md [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${metadata().replace(/^<\?xml[^>]*>\n/, "").replace("https://idp.example.com/entity", "&xxe;")}`;
    const laughs = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]><lolz>&lol3;</lolz>`;
    const lower = `<!doctype foo><foo/>`;
    for (const xml of [xxe, laughs, lower]) {
      const result = parseIdpMetadata(xml);
      expect(result.ok).toBe(false);
      expect(fields(result)).toEqual(["samlMetadataXml"]);
      expect(messages(result)).toContain("DOCTYPE");
    }
  });

  it("refuses text over the size limit and nesting past the depth limit", () => {
    const huge = metadata().replace("<md:IDPSSODescriptor", `<!--${"x".repeat(SAML_METADATA_MAX_BYTES)}--><md:IDPSSODescriptor`);
    expect(messages(parseIdpMetadata(huge))).toContain("at most");
    const deep = `${"<a>".repeat(SAML_METADATA_MAX_DEPTH + 1)}${"</a>".repeat(SAML_METADATA_MAX_DEPTH + 1)}`;
    expect(messages(parseIdpMetadata(deep))).toContain("deeper");
    // A hundred thousand levels are refused at once, without building a tree of them.
    const deeper = `${"<a>".repeat(100_000)}${"</a>".repeat(100_000)}`;
    const started = Date.now();
    expect(messages(parseIdpMetadata(deeper))).toContain("deeper");
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("refuses broken XML, NUL, control characters and lone surrogates", () => {
    for (const xml of ["<md:EntityDescriptor", "<a><b></a>", "not xml at all", "<a>\u0000</a>", "<a>\u0007</a>", `<a entityID="\uD800x"/>`, `<a>\uDC00</a>`, metadata({ entityId: "https://idp.example.com/\uD83D" })]) {
      const result = parseIdpMetadata(xml);
      expect(result.ok, JSON.stringify(xml.slice(0, 40))).toBe(false);
    }
    expect(messages(parseIdpMetadata("<a>\u0000</a>"))).toContain("NUL");
    expect(messages(parseIdpMetadata(metadata().replace("</md:IDPSSODescriptor>", "")))).toContain("well-formed");
    expect(messages(parseIdpMetadata(metadata().replace('entityID="', 'entityID="a" entityID="')))).toContain("well-formed");
    // A pair of surrogates is one character, welcome in an attribute.
    expect(parseIdpMetadata(metadata({ entityId: "urn:example:\uD83D\uDE00" })).ok).toBe(false); // not printable ASCII: SamlEntityIdSchema
  });

  it("refuses metadata that is not an IdP's, or lacks a signing certificate or a redirect SSO URL, naming the part", () => {
    expect(fields(parseIdpMetadata(`<foo xmlns="urn:other"/>`))).toEqual(["samlMetadataXml"]);
    const sp = `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://sp.example"><md:SPSSODescriptor/></md:EntityDescriptor>`;
    expect(fields(parseIdpMetadata(sp))).toEqual(["samlMetadataXml.IDPSSODescriptor"]);
    expect(fields(parseIdpMetadata(metadata({ keys: "" })))).toEqual(["samlMetadataXml.KeyDescriptor"]);
    const encryptionOnly = `<md:KeyDescriptor use="encryption"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${der(certA)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`;
    expect(fields(parseIdpMetadata(metadata({ keys: encryptionOnly })))).toEqual(["samlMetadataXml.KeyDescriptor"]);
    const postOnly = `<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://idp.example.com/sso"/>`;
    expect(fields(parseIdpMetadata(metadata({ sso: postOnly })))).toEqual(["samlMetadataXml.SingleSignOnService"]);
    const badLocation = `<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="javascript:alert(1)"/>`;
    expect(fields(parseIdpMetadata(metadata({ sso: badLocation })))).toEqual(["samlMetadataXml.SingleSignOnService"]);
    expect(fields(parseIdpMetadata(metadata({ entityId: "has space" }), "samlMetadataUrl"))).toEqual(["samlMetadataUrl.entityID"]);
  });

  it("refuses a certificate that is garbage", () => {
    const garbage = `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>bm90IGEgY2VydGlmaWNhdGU=</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`;
    const result = parseIdpMetadata(metadata({ keys: garbage }));
    expect(fields(result)).toEqual(["samlMetadataXml.KeyDescriptor"]);
    expect(messages(result)).toContain("not an X.509 certificate");
  });
});

describe("certificates", () => {
  it("normalizes PEM and bare base64 to the same PEM and refuses anything else", () => {
    expect(normalizeCertificate(der(certA))).toBe(normalizeCertificate(certA));
    expect(normalizeCertificate("not a certificate")).toBeNull();
    expect(normalizeCertificate("")).toBeNull();
    expect(normalizeCertificate("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----")).toBeNull();
  });
});
