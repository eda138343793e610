import { describe, expect, it } from "vitest";
import { assertPublicHost, isSpecialUseAddress } from "./outbound";

/** The outbound guard's address classes (decision 047): only public unicast addresses pass. */
describe("isSpecialUseAddress", () => {
  it.each([
    "127.0.0.1",
    "127.255.0.9",
    "10.0.0.1",
    "172.16.5.4",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "fe80::1",
    "fd00::1",
    "fc00::5",
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:10.1.2.3",
    "2001:db8::1",
    "not an address",
  ])("refuses %s", (address) => {
    expect(isSpecialUseAddress(address)).toBe(true);
  });

  it.each(["93.184.216.34", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "::ffff:93.184.216.34"])("lets %s through", (address) => {
    expect(isSpecialUseAddress(address)).toBe(false);
  });
});

describe("assertPublicHost", () => {
  it("refuses special-use literals and localhost names unless private networks are allowed", () => {
    for (const url of ["https://127.0.0.1/x", "https://[::1]/x", "https://localhost/x", "https://a.localhost/x", "https://[::ffff:7f00:1]/x"]) {
      expect(() => assertPublicHost(new URL(url), false), url).toThrow(/private or special-use/);
      expect(() => assertPublicHost(new URL(url), true), url).not.toThrow();
    }
    expect(() => assertPublicHost(new URL("https://hooks.example.com/x"), false)).not.toThrow();
    expect(() => assertPublicHost(new URL("https://93.184.216.34/x"), false)).not.toThrow();
  });
});
