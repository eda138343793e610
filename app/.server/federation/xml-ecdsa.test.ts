import { generateKeyPairSync, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import { addEcdsaVerification, ECDSA_ALGORITHMS, verifyEcdsa, type XmlSignatureAlgorithm } from "./xml-ecdsa";

describe("ECDSA for xml-crypto", () => {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const pem = publicKey.export({ format: "pem", type: "spki" }).toString();
  const material = "<ds:SignedInfo>…</ds:SignedInfo>";
  const raw = sign("sha256", Buffer.from(material), { key: privateKey, dsaEncoding: "ieee-p1363" }).toString("base64");

  it("verifies the r‖s form XML signatures use, and nothing else", () => {
    expect(Buffer.from(raw, "base64")).toHaveLength(64);
    expect(verifyEcdsa("sha256", material, pem, raw)).toBe(true);
    expect(verifyEcdsa("sha256", `${material} `, pem, raw)).toBe(false);
    // The DER form other formats use is not XML's.
    const der = sign("sha256", Buffer.from(material), privateKey).toString("base64");
    expect(verifyEcdsa("sha256", material, pem, der)).toBe(false);
    const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey.export({ format: "pem", type: "spki" }).toString();
    expect(verifyEcdsa("sha256", material, rsa, raw)).toBe(false);
    expect(verifyEcdsa("sha256", material, { not: "a key" }, raw)).toBe(false);
    expect(verifyEcdsa("sha256", material, pem, "%%%")).toBe(false);
  });

  it("answers the ECDSA methods and leaves every other lookup to the library, once however often it is added", () => {
    const asked: string[] = [];
    class FakeSignedXml {
      findSignatureAlgorithm(name: string): XmlSignatureAlgorithm {
        asked.push(name);
        throw new Error(`signature algorithm '${name}' is not supported`);
      }
    }
    addEcdsaVerification(FakeSignedXml);
    addEcdsaVerification(FakeSignedXml);
    const lookup = new FakeSignedXml();
    const uri = Object.keys(ECDSA_ALGORITHMS).find((u) => u.endsWith("ecdsa-sha256"))!;
    const algorithm = lookup.findSignatureAlgorithm(uri);
    expect(algorithm.getAlgorithmName()).toBe(uri);
    expect(algorithm.verifySignature(material, pem, raw)).toBe(true);
    expect(() => algorithm.getSignature(material, privateKey)).toThrow(/does not sign/);
    expect(() => lookup.findSignatureAlgorithm("http://www.w3.org/2001/04/xmldsig-more#rsa-sha256")).toThrow(/not supported/);
    expect(asked).toEqual(["http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"]);
  });
});
