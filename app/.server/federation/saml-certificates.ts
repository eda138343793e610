/**
 * A certificate as a connection stores it (PEM, or the base64 DER that IdP metadata carries) in
 * the PEM form node-saml and node:crypto read. Whitespace inside the base64 is dropped.
 */
export function certificatePem(text: string): string {
  const body = text
    .replace(/-----BEGIN CERTIFICATE-----/g, "")
    .replace(/-----END CERTIFICATE-----/g, "")
    .replace(/\s+/g, "");
  const lines = body.match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`;
}
