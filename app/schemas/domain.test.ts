import { describe, expect, it } from "vitest";
import { domainRecordOf, emailDomainOf, normalizeDomain, OrganizationDomainCreateSchema } from "./domain";

const ok = (input: string) => {
  const result = normalizeDomain(input);
  if (!result.ok) throw new Error(`${JSON.stringify(input)} refused: ${result.message}`);
  return result.domain;
};
const refused = (input: string) => {
  const result = normalizeDomain(input);
  expect(result.ok, JSON.stringify(input)).toBe(false);
  return result.ok ? "" : result.message;
};

describe("normalizeDomain", () => {
  it("keeps one stored form: trimmed, lower case, IDNA ASCII", () => {
    expect(ok("Example.COM")).toBe("example.com");
    expect(ok("  corp.example  ")).toBe("corp.example");
    expect(ok("bücher.de")).toBe("xn--bcher-kva.de");
    expect(ok("XN--BCHER-KVA.de")).toBe("xn--bcher-kva.de");
    expect(ok("ｅｘａｍｐｌｅ．ｃｏｍ")).toBe("example.com");
    expect(ok("a-b.c-d.example")).toBe("a-b.c-d.example");
  });

  it("refuses IP addresses, in every spelling the URL parser reads as one", () => {
    expect(refused("127.0.0.1")).toMatch(/IP address/);
    expect(refused("0x7f.1")).toMatch(/IP address/);
    expect(refused("[::1]")).toMatch(/domain name/);
    refused("1.2.3.4.5");
    refused("foo.123");
  });

  it("refuses wildcards, trailing dots, empty labels and single labels", () => {
    expect(refused("*.example.com")).toMatch(/wildcard/);
    expect(refused("example.com.")).toMatch(/dot/);
    expect(refused("example.com。")).toMatch(/dot/);
    expect(refused("a..b")).toMatch(/empty labels/);
    expect(refused(".example.com")).toMatch(/empty labels/);
    expect(refused("localhost")).toMatch(/two labels/);
    expect(refused("")).toMatch(/empty/);
    expect(refused("   ")).toMatch(/empty/);
  });

  it("refuses hostile and malformed input: NUL, control characters, URLs, ports, underscores, bad punycode", () => {
    refused("exa\u0000mple.com");
    refused("example.com\u0000.evil");
    refused("exa\nmple.com");
    refused("https://example.com");
    refused("example.com/path");
    refused("example.com:443");
    refused("user@example.com");
    refused("exa%6dple.com");
    refused("exa_mple.com");
    refused("-example.com");
    refused("example-.com");
    refused("xn--a.com");
    refused("xn--.com");
    refused("xn--abc.com");
    refused("ex ample.com");
    refused("\u202eexample.com");
  });

  it("refuses what is too long: a 64-character label, 254 characters in all, 300 characters typed", () => {
    refused(`${"a".repeat(64)}.com`);
    refused(`${"abcdefghi.".repeat(26)}com`);
    expect(ok(`${"abcdefghi.".repeat(25)}com`)).toHaveLength(253);
    expect(refused("a".repeat(300))).toMatch(/at most 253/);
    expect(ok(`${"a".repeat(63)}.com`)).toHaveLength(67);
  });

  it("the Admin API's body schema answers the reason as a field error", () => {
    const parsed = OrganizationDomainCreateSchema.safeParse({ domain: "10.0.0.1" });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]).toMatchObject({ path: ["domain"], message: expect.stringMatching(/IP address/) });
    expect(OrganizationDomainCreateSchema.parse({ domain: "Corp.Example" })).toEqual({ domain: "corp.example" });
    expect(OrganizationDomainCreateSchema.safeParse({ domain: "corp.example", extra: 1 }).success).toBe(false);
  });
});

describe("emailDomainOf and the TXT record", () => {
  it("takes the part after the last @, normalized, or null", () => {
    expect(emailDomainOf("ada@Corp.Example")).toBe("corp.example");
    expect(emailDomainOf("ada@bücher.de")).toBe("xn--bcher-kva.de");
    expect(emailDomainOf("no-at-sign")).toBeNull();
    expect(emailDomainOf("ada@127.0.0.1")).toBeNull();
    expect(emailDomainOf(null)).toBeNull();
  });

  it("names _porta-challenge.<domain> and porta-domain-verification=<token>", () => {
    expect(domainRecordOf("corp.example", "tok")).toEqual({ type: "TXT", name: "_porta-challenge.corp.example", value: "porta-domain-verification=tok" });
  });
});
