import { describe, expect, it } from "vitest";
import { isAllowedDocumentHost, parseMetadataDocumentClientId, readClientMetadataDocument } from "./client-metadata-document";

const URL_ID = "https://agent.example.com/oauth/client.json";
const good = { client_id: URL_ID, client_name: "Agent", redirect_uris: ["http://127.0.0.1:33418/callback"], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"] };
const read = (json: unknown, url = URL_ID) => readClientMetadataDocument(new URL(url), json);

describe("client ID metadata documents", () => {
  it("takes an https URL with a path as a document's client_id, and nothing else", () => {
    expect(parseMetadataDocumentClientId(URL_ID)?.hostname).toBe("agent.example.com");
    for (const id of [
      "my-client",
      "http://agent.example.com/client.json",
      "https://agent.example.com",
      "https://agent.example.com/",
      "https://agent.example.com/client.json#x",
      "https://user:pw@agent.example.com/client.json",
      "https://agent.example.com/a/../client.json",
      "https://agent.example.com/./client.json",
      "https://AGENT.example.com/client.json",
      "https://agent.example.com/client\u0000.json",
      "https://agent.example.com/\ud800",
      `https://agent.example.com/${"a".repeat(2001)}`,
    ]) {
      expect(parseMetadataDocumentClientId(id), id).toBeNull();
    }
  });

  it("reads a public client's document", () => {
    const result = read(good);
    expect(result).toEqual({
      ok: true,
      document: {
        clientId: URL_ID,
        name: "Agent",
        domain: "agent.example.com",
        redirectUris: ["http://127.0.0.1:33418/callback"],
        postLogoutRedirectUris: [],
        grantTypes: ["authorization_code", "refresh_token"],
        tokenEndpointAuthMethod: "none",
        jwksUri: null,
        applicationType: "web",
      },
    });
  });

  it("refuses a document for another URL, with a secret, a secret-based method, or unusable redirect URIs", () => {
    const problem = (json: unknown) => {
      const r = read(json);
      return r.ok ? null : r.problem;
    };
    expect(problem({ ...good, client_id: "https://evil.example.com/oauth/client.json" })).toBe("client_id differs from the document's URL");
    expect(problem({ ...good, client_id: `${URL_ID}?x=1` })).toBe("client_id differs from the document's URL");
    expect(problem({ ...good, client_secret: "s3cret" })).toBe("the document must not carry client_secret");
    expect(problem({ ...good, token_endpoint_auth_method: "client_secret_basic" })).toMatch(/^token_endpoint_auth_method:/);
    expect(problem({ ...good, token_endpoint_auth_method: "private_key_jwt" })).toBe("private_key_jwt needs a jwks_uri");
    expect(problem({ ...good, redirect_uris: [] })).toMatch(/^redirect_uris:/);
    expect(problem({ ...good, redirect_uris: ["http://evil.example.com/cb"] })).toMatch(/^redirectUris\.0: must use https/);
    expect(problem({ ...good, redirect_uris: ["https://app.example.com/cb#frag"] })).toMatch(/^redirect_uris/);
    expect(problem({ ...good, grant_types: ["client_credentials"] })).toMatch(/^grant_types/);
    expect(problem([good])).toBe("the document is not a JSON object");
    expect(problem(null)).toBe("the document is not a JSON object");
    expect(problem({ ...good, client_name: "x".repeat(201) })).toMatch(/^client_name:/);
  });

  it("limits the hosts to the organization's domains when it names some", () => {
    const policy = (allowedDomains: string[]) => ({ enabled: true, allowedDomains });
    expect(isAllowedDocumentHost(policy([]), "anything.example.org")).toBe(true);
    expect(isAllowedDocumentHost(policy(["agent.example.com"]), "agent.example.com")).toBe(true);
    expect(isAllowedDocumentHost(policy(["agent.example.com"]), "evil-agent.example.com")).toBe(false);
    expect(isAllowedDocumentHost(policy(["*.example.com"]), "agent.example.com")).toBe(true);
    expect(isAllowedDocumentHost(policy(["*.example.com"]), "example.com")).toBe(false);
    expect(isAllowedDocumentHost(policy(["*.example.com"]), "agent.badexample.com")).toBe(false);
  });
});
