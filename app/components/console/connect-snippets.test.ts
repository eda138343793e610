import { describe, expect, it } from "vitest";
import { connectSnippet, LIBRARIES, type SnippetValues } from "./connect-snippets";

const issuer = "https://id.example.com/acme";
const web: SnippetValues["client"] = {
  id: "client_abc",
  clientType: "confidential",
  redirectUris: ["https://shop.example.com/callback"],
  scope: "openid profile email offline_access",
  grantTypes: ["authorization_code", "refresh_token"],
  skipConsent: false,
  pkce: "inherit",
};

describe("Connect your app snippets", () => {
  it.each(LIBRARIES.map((l) => l.id))("%s: names the issuer, the client and its redirect URI", (library) => {
    const snippet = connectSnippet(library, { issuer, client: web });
    expect(snippet).toContain("id.example.com/acme");
    expect(snippet).toContain("client_abc");
    // Where the library takes the whole redirect URI, it is this client's; the others build it from its origin or path.
    const redirect = { "express-openid-connect": "https://shop.example.com/callback", authjs: "https://shop.example.com/auth/callback/porta", aspnet: '"/callback"' }[library as string];
    expect(snippet).toContain(redirect ?? "https://shop.example.com/callback");
  });

  it("gives express-openid-connect and Spring the ES256 setting they need, and express-openid-connect the code flow", () => {
    const eoc = connectSnippet("express-openid-connect", { issuer, client: web });
    expect(eoc).toContain(`idTokenSigningAlg: "ES256"`);
    expect(eoc).toContain(`response_type: "code"`);
    expect(connectSnippet("spring", { issuer, client: web })).toContain("SignatureAlgorithm.ES256");
  });

  it("asks for prompt=consent for a refresh token only when the client is not first party", () => {
    expect(connectSnippet("mod_auth_openidc", { issuer, client: web })).toContain("OIDCAuthRequestParams prompt=consent");
    const firstParty = { ...web, skipConsent: true };
    for (const { id } of LIBRARIES) expect(connectSnippet(id, { issuer, client: firstParty }), id).not.toMatch(/prompt[=:"\s]+consent|Prompt = "consent"/);
  });

  it("leaves out offline_access when the client cannot refresh", () => {
    const noRefresh = { ...web, grantTypes: ["authorization_code" as const] };
    for (const { id } of LIBRARIES) expect(connectSnippet(id, { issuer, client: noRefresh }), id).not.toContain("offline_access");
  });

  it("sends PKCE unless a confidential client is exempt, and never prints a secret line for a public client", () => {
    expect(connectSnippet("mod_auth_openidc", { issuer, client: web })).toContain("OIDCPKCEMethod S256");
    expect(connectSnippet("mod_auth_openidc", { issuer, client: { ...web, pkce: "not_required" } })).not.toContain("OIDCPKCEMethod");
    const spa = { ...web, clientType: "public" as const, redirectUris: ["http://localhost:5173/callback"] };
    for (const { id } of LIBRARIES) expect(connectSnippet(id, { issuer, client: spa }), id).not.toContain("CLIENT_SECRET");
  });
});
