import { randomBytes, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createOtpMint, EMAIL_OTP_TTL_MINUTES, MAX_ACTIVE_EMAIL_OTPS } from "./email-otp";

const KEY = Buffer.alloc(32, 7);
const IDS = Array.from({ length: 20 }, (_, i) => `0190f3c2-7a1b-7c3d-8e4f-${String(i).padStart(12, "0")}`);

describe("email code limits", () => {
  it("are the spec's: ten minutes, three active codes", () => {
    expect(EMAIL_OTP_TTL_MINUTES).toBe(10);
    expect(MAX_ACTIVE_EMAIL_OTPS).toBe(3);
  });
});

describe("codeFor", () => {
  const mint = createOtpMint(KEY);

  it("gives six digits", () => {
    for (const id of [...IDS, ...Array.from({ length: 200 }, () => randomUUID())]) expect(mint.codeFor(id)).toMatch(/^\d{6}$/);
  });

  it("is deterministic per id under one key (a retried mail carries the same code)", () => {
    const again = createOtpMint(Buffer.from(KEY));
    for (const id of IDS) {
      expect(mint.codeFor(id)).toBe(mint.codeFor(id));
      expect(again.codeFor(id)).toBe(mint.codeFor(id));
    }
  });

  it("differs across ids", () => {
    const codes = IDS.map((id) => mint.codeFor(id));
    expect(new Set(codes).size).toBe(IDS.length);
  });

  it("differs across keys for the same id", () => {
    const other = createOtpMint(Buffer.alloc(32, 8));
    const differing = IDS.filter((id) => other.codeFor(id) !== mint.codeFor(id));
    expect(differing).toEqual(IDS);
  });

  it("spreads over the whole range, leading zeros included", () => {
    const random = createOtpMint(randomBytes(32));
    const codes = Array.from({ length: 2000 }, () => random.codeFor(randomUUID()));
    const firstDigits = new Set(codes.map((c) => c[0]));
    expect(firstDigits.size).toBe(10);
    expect(firstDigits).toContain("0");
  });
});

describe("hash and matches", () => {
  const mint = createOtpMint(KEY);

  it("stores no code in clear: the hash is a 256-bit hex HMAC that differs from the code", () => {
    const code = mint.codeFor(IDS[0]!);
    const hash = mint.hash(code);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).not.toContain(code);
    expect(mint.hash(code)).toBe(hash);
  });

  it("a hash matches its own code only", () => {
    const code = mint.codeFor(IDS[0]!);
    const hash = mint.hash(code);
    expect(mint.matches(code, hash)).toBe(true);
    for (const id of IDS.slice(1)) expect(mint.matches(mint.codeFor(id), hash)).toBe(false);
    const neighbour = String((Number(code) + 1) % 1_000_000).padStart(6, "0");
    expect(mint.matches(neighbour, hash)).toBe(false);
    expect(mint.matches("", hash)).toBe(false);
    expect(mint.matches(` ${code}`, hash)).toBe(false);
  });

  it("a hash made under another key does not match", () => {
    const code = mint.codeFor(IDS[0]!);
    const other = createOtpMint(Buffer.alloc(32, 8));
    expect(mint.matches(code, other.hash(code))).toBe(false);
  });

  it("a malformed stored hash matches nothing (and does not throw)", () => {
    const code = mint.codeFor(IDS[0]!);
    for (const stored of ["", "zz", mint.hash(code).slice(0, 62), `${mint.hash(code)}00`]) expect(mint.matches(code, stored)).toBe(false);
  });
});
