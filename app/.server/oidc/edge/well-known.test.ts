import type { IncomingMessage, ServerResponse } from "node:http";
import { exportJWK, generateKeyPair } from "jose";
import { describe, expect, it } from "vitest";
import type { Organization } from "~/generated/prisma/client";
import type { DescribedOrganization, TenantProvider } from "../provider/registry";
import { createDocumentTemplates, jwksBodyFrom, jwksBodyOf, packPublicKeys } from "./well-known";

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

describe("document templates", () => {
  it("keep a template and its build together: whatever `of` answers, `ready` has until it is pushed out", async () => {
    // A provider stand-in that answers discovery with its issuer and an empty key set.
    const buildDetached = (organization: Organization, issuer: string) =>
      Promise.resolve({
        organization,
        issuer,
        callback: (_req: IncomingMessage, res: ServerResponse) => {
          res.setHeader("content-type", "application/json");
          res.end(JSON.stringify({ issuer, keys: [] }));
        },
      } as unknown as TenantProvider);
    const templates = createDocumentTemplates({ buildDetached }, "https://id.example.test");
    const described = (claim: number): DescribedOrganization => ({
      organization: { id: `o${claim}`, slug: `o${claim}`, registrationPolicy: {} } as Organization,
      issuer: "",
      customClaims: [{ id: `c${claim}`, claimName: `claim${claim}`, scope: "profile" }],
      publicJwks: [],
      keysChangeAt: Infinity,
    });
    // As many templates as are kept; the first is asked for again (as rendering does), then one more comes.
    const first = await templates.of(described(0));
    for (let claim = 1; claim < 64; claim++) {
      const template = await templates.of(described(claim));
      expect(templates.ready(template.id)).toBe(template);
    }
    expect(templates.ready(first.id)).toBe(first);
    await templates.of(described(64));
    // The one pushed out is the one asked for least recently: asked for, it is built again and ready.
    for (const claim of [0, 1, 2, 64]) {
      const template = await templates.of(described(claim));
      expect(templates.ready(template.id)).toBe(template);
    }
  });
});
