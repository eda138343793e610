import { exportJWK, generateKeyPair } from "jose";
import { describe, expect, it } from "vitest";
import { jwksBodyFrom, jwksBodyOf, packPublicKeys } from "./well-known";

describe("packed public keys (the directory of documents, decision 062)", () => {
  it("give back exactly the JWKS body of the keys they were packed from", async () => {
    const keys = await Promise.all(
      ["0197a0c2-1111-7000-8000-000000000001", "0197a0c2-2222-7000-8000-000000000002"].map(async (kid) => ({
        ...(await exportJWK((await generateKeyPair("ES256", { extractable: true })).publicKey)),
        kid,
      })),
    );
    const packed = packPublicKeys(keys);
    expect(packed.length).toBeLessThan(jwksBodyOf(keys).length * 0.65);
    expect(jwksBodyFrom(packed)).toBe(jwksBodyOf(keys));
    expect(jwksBodyFrom(packPublicKeys(keys.slice(0, 1)))).toBe(jwksBodyOf(keys.slice(0, 1)));
  });

  it("keep a key they cannot pack as the JWKS body itself", () => {
    const odd = [{ kty: "EC", kid: "with space", crv: "P-256", x: "x", y: "y" }];
    const other = [{ kty: "OKP", kid: "k", crv: "Ed25519", x: "x" }];
    for (const keys of [odd, other, []]) {
      expect(packPublicKeys(keys)).toBe(jwksBodyOf(keys));
      expect(jwksBodyFrom(packPublicKeys(keys))).toBe(jwksBodyOf(keys));
    }
  });
});
