import { generateEncryptionKeyPair } from "~/.server/federation/saml-credentials";

/** A certificate as an IdP would sign with (its key is not needed by the management side). */
export async function idpCertificate(name = "idp.example.com"): Promise<string> {
  return (await generateEncryptionKeyPair(name)).certificatePem;
}

/** The base64 DER of a PEM certificate, as metadata carries it. */
export const derOf = (pem: string) => pem.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, "");

/** An IdP's SAML 2.0 metadata with an HTTP-Redirect SSO endpoint and the given signing certificates. */
export function idpMetadata(options: { entityId: string; ssoUrl: string; certificates: string[] }): string {
  const keys = options.certificates
    .map((pem) => `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${derOf(pem)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`)
    .join("\n");
  return `<?xml version="1.0" encoding="UTF-8"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${options.entityId}">
  <md:IDPSSODescriptor WantAuthnRequestsSigned="false" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    ${keys}
    <md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${options.ssoUrl}"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`;
}
