import { X509Certificate } from "node:crypto";
import { onFirstUse } from "../lazy";

/**
 * The X.509 certificates of a SAML connection (decision 081): the IdP's signing certificates,
 * read from its metadata or pasted by an administrator, and the certificate of the connection's
 * own decryption key, made here. node:crypto parses; @peculiar/x509 only builds (node:crypto
 * cannot issue a certificate).
 */

export interface CertificateInfo {
  subject: string;
  issuer: string;
  notBefore: string;
  notAfter: string;
  /** SHA-256 over the DER, colon-separated hex, as IdP consoles show it. */
  fingerprint: string;
}

const PEM_BLOCK = /^-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----$/;

/**
 * The certificate as PEM, from PEM or from the bare base64 DER that metadata carries; null when
 * it is not one X.509 certificate. Stored as PEM, so every reader hands it to its library as is.
 */
export function normalizeCertificate(text: string): string | null {
  const trimmed = text.trim();
  const block = PEM_BLOCK.exec(trimmed);
  const base64 = (block ? block[1]! : trimmed).replace(/\s+/g, "");
  if (base64.length === 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return null;
  try {
    const der = Buffer.from(base64, "base64");
    const cert = new X509Certificate(der);
    return cert.toString().trim();
  } catch {
    return null;
  }
}

/** What an administrator needs to see of a certificate: whose it is and until when it holds. */
export function certificateInfo(pem: string): CertificateInfo | null {
  try {
    const cert = new X509Certificate(pem);
    return {
      subject: cert.subject.replace(/\n/g, ", "),
      issuer: cert.issuer.replace(/\n/g, ", "),
      notBefore: new Date(cert.validFrom).toISOString(),
      notAfter: new Date(cert.validTo).toISOString(),
      fingerprint: cert.fingerprint256,
    };
  } catch {
    return null;
  }
}

/** The same certificate, whatever its line breaks: compared by their DER. */
export function sameCertificates(a: readonly string[], b: readonly string[]): boolean {
  const der = (pem: string) => {
    try {
      return new X509Certificate(pem).raw.toString("base64");
    } catch {
      return pem;
    }
  };
  const left = a.map(der).sort();
  const right = b.map(der).sort();
  return left.length === right.length && left.every((value, i) => value === right[i]);
}

export const ENCRYPTION_CERTIFICATE_YEARS = 10;

/**
 * @peculiar/x509 loads when a key pair is first made, not at every start (decision 056). It
 * resolves its algorithms through tsyringe, which needs the Reflect metadata API loaded first.
 */
const x509Library = onFirstUse(async () => {
  await import("reflect-metadata");
  return import("@peculiar/x509");
});

const pem = (label: string, der: ArrayBuffer) =>
  `-----BEGIN ${label}-----\n${Buffer.from(der).toString("base64").replace(/.{1,64}/g, "$&\n")}-----END ${label}-----`;

/**
 * A decryption key pair for one connection: RSA-2048 (what IdPs encrypt assertions' keys to with
 * RSA-OAEP) and a self-signed certificate carrying its public key for the SP metadata, valid for
 * ten years (IdPs do not check its chain, only take its key).
 */
export async function generateEncryptionKeyPair(commonName: string, now: Date = new Date()): Promise<{ privateKeyPem: string; certificatePem: string }> {
  const x509 = await x509Library();
  const algorithm = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256", publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 };
  const keys = await globalThis.crypto.subtle.generateKey(algorithm, true, ["sign", "verify"]);
  const notAfter = new Date(now);
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + ENCRYPTION_CERTIFICATE_YEARS);
  const serial = Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(16)));
  // A positive serial number: the high bit clear.
  serial[0] = serial[0]! & 0x7f;
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: serial.toString("hex"),
      name: [{ CN: [commonName.slice(0, 64)] }],
      notBefore: now,
      notAfter,
      signingAlgorithm: algorithm,
      keys,
      extensions: [new x509.BasicConstraintsExtension(false, undefined, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyEncipherment | x509.KeyUsageFlags.digitalSignature, true)],
    },
    globalThis.crypto,
  );
  const privateKey = await globalThis.crypto.subtle.exportKey("pkcs8", keys.privateKey);
  return { privateKeyPem: pem("PRIVATE KEY", privateKey), certificatePem: cert.toString("pem").trim() };
}
