import { describe, expect, it } from "vitest";
import { checkTxtRecord, txtMatches, type DnsResolver } from "./dns";

const resolver = (answer: string[][] | Error): DnsResolver => ({ resolveTxt: async () => (answer instanceof Error ? Promise.reject(answer) : answer) });
const dnsError = (code: string) => Object.assign(new Error(code), { code });

describe("txtMatches", () => {
  it("joins a record split into strings and compares the whole value", () => {
    expect(txtMatches([["porta-domain-verification=", "abc", "def"]], "abcdef")).toBe(true);
    expect(txtMatches([["v=spf1 -all"], ["porta-domain-verification=abcdef"]], "abcdef")).toBe(true);
    expect(txtMatches([["  porta-domain-verification=abcdef "]], "abcdef")).toBe(true);
  });

  it("refuses another token, a prefix of it, a longer value, another prefix, and case changes", () => {
    expect(txtMatches([["porta-domain-verification=abcdeg"]], "abcdef")).toBe(false);
    expect(txtMatches([["porta-domain-verification=abc"]], "abcdef")).toBe(false);
    expect(txtMatches([["porta-domain-verification=abcdefX"]], "abcdef")).toBe(false);
    expect(txtMatches([["other-verification=abcdef"]], "abcdef")).toBe(false);
    expect(txtMatches([["PORTA-DOMAIN-VERIFICATION=ABCDEF"]], "abcdef")).toBe(false);
    // Strings of two records are never joined into one.
    expect(txtMatches([["porta-domain-verification="], ["abcdef"]], "abcdef")).toBe(false);
    expect(txtMatches([], "abcdef")).toBe(false);
  });
});

describe("checkTxtRecord", () => {
  it("says why a look-up proves nothing, and never throws", async () => {
    expect(await checkTxtRecord(resolver([["porta-domain-verification=t"]]), "_porta-challenge.a.example", "t")).toEqual({ ok: true });
    expect(await checkTxtRecord(resolver(dnsError("ENOTFOUND")), "_porta-challenge.a.example", "t")).toEqual({ ok: false, error: "no TXT record at _porta-challenge.a.example" });
    expect(await checkTxtRecord(resolver(dnsError("ENODATA")), "n", "t")).toMatchObject({ ok: false, error: "no TXT record at n" });
    expect(await checkTxtRecord(resolver(dnsError("ETIMEOUT")), "n", "t")).toMatchObject({ ok: false, error: "DNS look-up of n timed out" });
    expect(await checkTxtRecord(resolver(dnsError("ESERVFAIL")), "n", "t")).toMatchObject({ ok: false, error: "DNS look-up of n failed (ESERVFAIL)" });
    expect(await checkTxtRecord(resolver(new Error("boom")), "n", "t")).toMatchObject({ ok: false, error: "DNS look-up of n failed" });
    expect(await checkTxtRecord(resolver([["porta-domain-verification=old"]]), "n", "t")).toMatchObject({ ok: false, error: "the TXT record at n has another token" });
    expect(await checkTxtRecord(resolver([["v=spf1 -all"]]), "n", "t")).toMatchObject({ ok: false, error: expect.stringMatching(/^no TXT record at n starts with/) });
  });
});
