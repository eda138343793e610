import { describe, expect, it } from "vitest";
import { staticSecurityHeaders } from "./security-headers";

describe("staticSecurityHeaders", () => {
  it("holds helmet's headers with a CSP that names no nonce", () => {
    const headers = new Map(staticSecurityHeaders("http://id.example.test", "production"));
    expect(headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(headers.get("Referrer-Policy")).toBe("same-origin");
    expect(headers.get("X-Frame-Options")).toBe("SAMEORIGIN");
    expect(headers.get("Content-Security-Policy")).toContain("script-src 'self';");
    expect(headers.get("Content-Security-Policy")).not.toContain("nonce");
    expect(headers.has("Strict-Transport-Security")).toBe(false);
  });

  it("adds HSTS and upgrade-insecure-requests under an https BASE_URL, and no CSP in development", () => {
    const https = new Map(staticSecurityHeaders("https://id.example.test", "production"));
    expect(https.get("Strict-Transport-Security")).toMatch(/^max-age=\d+/);
    expect(https.get("Content-Security-Policy")).toContain("upgrade-insecure-requests");
    expect(new Map(staticSecurityHeaders("http://localhost:3000", "development")).has("Content-Security-Policy")).toBe(false);
  });
});
