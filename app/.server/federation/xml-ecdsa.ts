import { verify } from "node:crypto";

/**
 * ECDSA signatures in XML (RFC 4051 §3.3.1: the SignatureValue is r and s concatenated, each the
 * curve's size) for xml-crypto 6, which knows RSA and HMAC only. Verification only: Porta signs
 * no SAML message. node-saml builds its own SignedXml for every check, so the algorithms are
 * added where it looks them up, the class's `findSignatureAlgorithm`, once, when node-saml is
 * first loaded (federation/saml-protocol.ts); every other URI goes to xml-crypto's own table.
 * SHA-1 is listed because the pre-check refuses it unless the connection allows SHA-1.
 */
export const ECDSA_ALGORITHMS: Readonly<Record<string, string>> = {
  "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha1": "sha1",
  "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256": "sha256",
  "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384": "sha384",
  "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512": "sha512",
};

type VerifyCallback = (error: Error | null, verified?: boolean) => void;

/** The shape xml-crypto asks of a signature algorithm. */
export interface XmlSignatureAlgorithm {
  getSignature(signedInfo: unknown, privateKey: unknown): string;
  verifySignature(material: string, key: unknown, signatureValue: string, callback?: VerifyCallback): boolean;
  getAlgorithmName(): string;
}

/** Whether `signatureValue` (base64 r‖s) signs `material` under the key or certificate `key`; false for any other key type. */
export function verifyEcdsa(hash: string, material: string, key: unknown, signatureValue: string): boolean {
  if (typeof key !== "string" && !Buffer.isBuffer(key)) return false;
  try {
    return verify(hash, Buffer.from(material, "utf8"), { key, dsaEncoding: "ieee-p1363" }, Buffer.from(signatureValue, "base64"));
  } catch {
    // An RSA certificate under an ECDSA SignatureMethod, or a malformed value.
    return false;
  }
}

function ecdsaAlgorithm(uri: string, hash: string): XmlSignatureAlgorithm {
  return {
    getSignature: () => {
      throw new Error("Porta does not sign XML with ECDSA");
    },
    verifySignature: (material, key, signatureValue, callback) => {
      const verified = verifyEcdsa(hash, material, key, signatureValue);
      callback?.(null, verified);
      return verified;
    },
    getAlgorithmName: () => uri,
  };
}

/** The lookup xml-crypto declares private: the one place its algorithms are found. */
interface AlgorithmLookup {
  findSignatureAlgorithm(name: string): XmlSignatureAlgorithm;
}

const patched = new WeakSet<object>();

/** Teaches xml-crypto's SignedXml the ECDSA SignatureMethods (idempotent). */
export function addEcdsaVerification(SignedXml: { prototype: object }): void {
  if (patched.has(SignedXml)) return;
  patched.add(SignedXml);
  const prototype = SignedXml.prototype as AlgorithmLookup;
  if (typeof prototype.findSignatureAlgorithm !== "function") throw new Error("xml-crypto without findSignatureAlgorithm: ECDSA cannot be added");
  const original = prototype.findSignatureAlgorithm;
  prototype.findSignatureAlgorithm = function findSignatureAlgorithm(this: unknown, name: string) {
    const hash = ECDSA_ALGORITHMS[name];
    return hash ? ecdsaAlgorithm(name, hash) : original.call(this, name);
  };
}
