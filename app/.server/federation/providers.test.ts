import { describe, expect, it } from "vitest";
import { chooseTokenEndpointAuthMethod, emailCountsVerified, emailTrust, generateClientKey } from "./providers";

describe("chooseTokenEndpointAuthMethod (auto, decision 082)", () => {
  const all = ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"];

  it("keeps Basic only where client id and secret read the same form-urlencoded", () => {
    expect(chooseTokenEndpointAuthMethod(all, "client1", "Secret123")).toBe("client_secret_basic");
    // The encoding of RFC 6749 §2.3.1 escapes even - . _ ~; a server that does not decode then refuses.
    expect(chooseTokenEndpointAuthMethod(all, "client1", "s3cr3t-x")).toBe("client_secret_post");
    expect(chooseTokenEndpointAuthMethod(all, "my-client", "Secret123")).toBe("client_secret_post");
    expect(chooseTokenEndpointAuthMethod(all, "client1", "a/b+c:d&e%f")).toBe("client_secret_post");
  });

  it("uses what the upstream offers, and Basic (encoded) when nothing else is left", () => {
    expect(chooseTokenEndpointAuthMethod(["client_secret_post"], "c", "Secret123")).toBe("client_secret_post");
    expect(chooseTokenEndpointAuthMethod(["client_secret_basic"], "c", "a/b")).toBe("client_secret_basic");
    expect(chooseTokenEndpointAuthMethod(["private_key_jwt"], "c", "a/b")).toBe("client_secret_basic");
    // No list in the discovery document: RFC 8414's default, client_secret_basic.
    expect(chooseTokenEndpointAuthMethod(undefined, "c", "a/b")).toBe("client_secret_basic");
    expect(chooseTokenEndpointAuthMethod("client_secret_post", "c", "a/b")).toBe("client_secret_basic");
  });

  it("is a public client without a secret", () => {
    expect(chooseTokenEndpointAuthMethod(all, "c", null)).toBe("none");
  });
});

describe("emailCountsVerified (OpenID and SAML connections)", () => {
  const row = { assumeVerifiedEmails: true, domains: ["corp.example"] };

  it("follows what the upstream asserted, either way", () => {
    expect(emailCountsVerified(row, "a@corp.example", true)).toBe(true);
    expect(emailCountsVerified(row, "a@corp.example", false)).toBe(false);
    expect(emailCountsVerified({ ...row, assumeVerifiedEmails: false }, "a@other.example", true)).toBe(true);
  });

  it("assumes only for the connection's own domains, when it says so", () => {
    expect(emailCountsVerified(row, "a@corp.example", null)).toBe(true);
    expect(emailCountsVerified(row, "a@CORP.example", null)).toBe(true);
    expect(emailCountsVerified(row, "a@other.example", null)).toBe(false);
    expect(emailCountsVerified(row, "a@sub.corp.example", null)).toBe(false);
    expect(emailCountsVerified(row, "a@corp.example.evil", null)).toBe(false);
    expect(emailCountsVerified(row, "no-at-sign", null)).toBe(false);
    expect(emailCountsVerified(row, null, null)).toBe(false);
    expect(emailCountsVerified({ ...row, assumeVerifiedEmails: false }, "a@corp.example", null)).toBe(false);
  });
});

describe("generateClientKey", () => {
  it("makes a P-256 private JWK whose kid is its RFC 7638 thumbprint", () => {
    const key = generateClientKey();
    expect(key).toMatchObject({ kty: "EC", crv: "P-256", d: expect.any(String), kid: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(generateClientKey().kid).not.toBe(key.kid);
  });
});

describe("emailTrust (decision 086: what the organization proved about the email's domain)", () => {
  const row = { id: "conn" };
  const verifiedClaimed = { verified: true, claimedBy: ["conn"] };

  it("an email verified only on the connection's word links only for a domain the organization verified", () => {
    expect(emailTrust(row, { emailVerified: true }, verifiedClaimed)).toEqual({ linkable: true });
    expect(emailTrust(row, { emailVerified: true }, { verified: false, claimedBy: ["conn"] })).toEqual({ linkable: false, why: "domain_not_verified" });
    expect(emailTrust(row, { emailVerified: true, emailAsserted: false }, null)).toEqual({ linkable: false, why: "domain_not_verified" });
  });

  it("an email the upstream asserted links as before, unless another connection claims the verified domain", () => {
    expect(emailTrust(row, { emailVerified: true, emailAsserted: true }, { verified: false, claimedBy: [] })).toEqual({ linkable: true });
    expect(emailTrust(row, { emailVerified: true, emailAsserted: true }, { verified: true, claimedBy: [] })).toEqual({ linkable: true });
    expect(emailTrust(row, { emailVerified: true, emailAsserted: true }, { verified: false, claimedBy: ["other"] })).toEqual({ linkable: true });
    expect(emailTrust(row, { emailVerified: true, emailAsserted: true }, { verified: true, claimedBy: ["other"] })).toEqual({ linkable: false, why: "domain_claimed_by_another_connection" });
  });

  it("an email that does not count as verified never links", () => {
    expect(emailTrust(row, { emailVerified: false, emailAsserted: false }, verifiedClaimed)).toEqual({ linkable: false, why: "email_not_verified" });
  });
});
