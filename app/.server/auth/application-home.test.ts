import { describe, expect, it } from "vitest";
import { applicationHome } from "./application-home";

const client = (redirectUris: string[], status = "active") => ({ redirectUris, status });

describe("applicationHome", () => {
  it("is the origin of the first web redirect URI", () => {
    expect(applicationHome(client(["https://app.example.com/auth/callback?x=1", "https://other.example.com/cb"]))).toBe("https://app.example.com/");
    expect(applicationHome(client(["http://localhost:3000/callback"]))).toBe("http://localhost:3000/");
  });

  it("skips native schemes, plain http off loopback and unparsable entries", () => {
    expect(applicationHome(client(["com.example.app:/callback", "http://app.example.com/cb", "not a url", "https://web.example.com/cb"]))).toBe("https://web.example.com/");
    expect(applicationHome(client(["com.example.app:/callback"]))).toBeNull();
  });

  it("has none for an inactive or unknown client", () => {
    expect(applicationHome(client(["https://app.example.com/cb"], "inactive"))).toBeNull();
    expect(applicationHome(null)).toBeNull();
  });
});
