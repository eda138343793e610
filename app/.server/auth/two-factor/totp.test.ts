import { Secret, TOTP } from "otpauth";
import { describe, expect, it } from "vitest";
import { currentTotpCode, generateTotpSecret, matchTotpStep, totpUri, TOTP_DIGITS, TOTP_PERIOD_SECONDS, TOTP_WINDOW } from "./totp";

/**
 * RFC 6238 Appendix B, SHA-1, shared secret "12345678901234567890" (ASCII). The RFC prints
 * 8-digit values; a 6-digit TOTP is the same truncated value modulo 10^6, i.e. its last six digits.
 */
const RFC_SECRET = Secret.fromUTF8("12345678901234567890").base32;
const RFC_VECTORS: Array<{ time: number; rfc: string }> = [
  { time: 59, rfc: "94287082" },
  { time: 1111111109, rfc: "07081804" },
  { time: 1111111111, rfc: "14050471" },
  { time: 1234567890, rfc: "89005924" },
  { time: 2000000000, rfc: "69279037" },
  { time: 20000000000, rfc: "65353130" },
];
const ms = (seconds: number) => seconds * 1000;
const stepOf = (seconds: number) => Math.floor(seconds / TOTP_PERIOD_SECONDS);

describe("TOTP parameters", () => {
  it("are RFC 6238 defaults: 6 digits, 30-second steps, one step of tolerance", () => {
    expect(TOTP_DIGITS).toBe(6);
    expect(TOTP_PERIOD_SECONDS).toBe(30);
    expect(TOTP_WINDOW).toBe(1);
  });
});

describe("RFC 6238 Appendix B test vectors (SHA-1)", () => {
  it.each(RFC_VECTORS)("at T=$time the code is the last six digits of $rfc", ({ time, rfc }) => {
    const expected = rfc.slice(-6);
    expect(currentTotpCode(RFC_SECRET, ms(time))).toBe(expected);
    expect(matchTotpStep(RFC_SECRET, expected, ms(time))).toBe(stepOf(time));
  });

  it("agrees with otpauth's own 8-digit generator on the full RFC values", () => {
    for (const { time, rfc } of RFC_VECTORS) {
      const eight = new TOTP({ algorithm: "SHA1", digits: 8, period: 30, secret: Secret.fromUTF8("12345678901234567890") });
      expect(eight.generate({ timestamp: ms(time) })).toBe(rfc);
    }
  });
});

describe("matchTotpStep", () => {
  const time = 1111111109;
  const codeAt = (seconds: number) => currentTotpCode(RFC_SECRET, ms(seconds));

  it("accepts the code of the previous and of the next step and names that step", () => {
    expect(matchTotpStep(RFC_SECRET, codeAt(time - 30), ms(time))).toBe(stepOf(time) - 1);
    expect(matchTotpStep(RFC_SECRET, codeAt(time + 30), ms(time))).toBe(stepOf(time) + 1);
  });

  it("refuses codes two steps or more away", () => {
    for (const offset of [-90, -60, 60, 90]) {
      const code = codeAt(time + offset);
      // Guard against a chance collision with an accepted step making the assertion vacuous.
      expect([-30, 0, 30].map((o) => codeAt(time + o))).not.toContain(code);
      expect(matchTotpStep(RFC_SECRET, code, ms(time))).toBeNull();
    }
  });

  it("ignores spaces a person types inside the code", () => {
    const code = codeAt(time);
    expect(matchTotpStep(RFC_SECRET, `${code.slice(0, 3)} ${code.slice(3)}`, ms(time))).toBe(stepOf(time));
    expect(matchTotpStep(RFC_SECRET, ` ${code} `, ms(time))).toBe(stepOf(time));
  });

  it("refuses malformed codes", () => {
    const code = codeAt(time);
    const malformed = ["", "     ", code.slice(0, 5), `${code}0`, "07081804", "abcdef", `${code.slice(0, 5)}x`, "-81804", "08180.", "٠٨١٨٠٤", "1e5000"];
    for (const input of malformed) expect(matchTotpStep(RFC_SECRET, input, ms(time)), JSON.stringify(input)).toBeNull();
  });

  it("refuses a code made with another secret", () => {
    const other = generateTotpSecret();
    const code = currentTotpCode(other, ms(time));
    const accepted = [-30, 0, 30].map((o) => codeAt(time + o));
    if (!accepted.includes(code)) expect(matchTotpStep(RFC_SECRET, code, ms(time))).toBeNull();
  });

  it("uses the current time by default", () => {
    const secret = generateTotpSecret();
    const now = Date.now();
    expect(matchTotpStep(secret, currentTotpCode(secret))).toBeGreaterThanOrEqual(stepOf(now / 1000) - 1);
  });
});

describe("secrets and URIs", () => {
  it("generates 160-bit base32 secrets, different every time", () => {
    const secrets = new Set(Array.from({ length: 20 }, () => generateTotpSecret()));
    expect(secrets.size).toBe(20);
    for (const secret of secrets) {
      expect(secret).toMatch(/^[A-Z2-7]{32}$/);
      expect(Secret.fromBase32(secret).bytes.length).toBe(20);
    }
  });

  it("builds an otpauth:// URI with issuer, label and the parameters an app needs", () => {
    const uri = new URL(totpUri(RFC_SECRET, "Acme Corp", "ada@example.com"));
    expect(uri.protocol).toBe("otpauth:");
    expect(uri.host).toBe("totp");
    expect(decodeURIComponent(uri.pathname)).toBe("/Acme Corp:ada@example.com");
    expect(uri.searchParams.get("secret")).toBe(RFC_SECRET);
    expect(uri.searchParams.get("issuer")).toBe("Acme Corp");
    expect(uri.searchParams.get("algorithm")).toBe("SHA1");
    expect(uri.searchParams.get("digits")).toBe("6");
    expect(uri.searchParams.get("period")).toBe("30");
  });
});
