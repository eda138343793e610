import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertPublicHost, guardedFetch, isSpecialUseAddress, OutboundRefusedError, outboundFetch } from "./guard";

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

/** Porta's own outbound requests (decision 046): special-use addresses refused unless allowed, sizes and time bounded. */
describe("guardedFetch", () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === "/big") return res.end("x".repeat(10_000));
      if (req.url === "/slow") return void setTimeout(() => res.end("late"), 2_000);
      if (req.url === "/redirect") return res.writeHead(302, { location: "http://169.254.169.254/" }).end();
      res.end("ok");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const strict = guardedFetch({ allowPrivateNetworks: false, timeoutMs: 1_000, maxBytes: 1_000 });
  const open = guardedFetch({ allowPrivateNetworks: true, timeoutMs: 500, maxBytes: 1_000 });

  it("knows the special-use ranges", () => {
    for (const address of ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "::1", "fd00::1", "fe80::1", "::ffff:127.0.0.1"]) {
      expect(isSpecialUseAddress(address), address).toBe(true);
    }
    for (const address of ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111"]) expect(isSpecialUseAddress(address), address).toBe(false);
  });

  it("refuses loopback by address and by a name that resolves to it", async () => {
    await expect(strict(`http://127.0.0.1:${port}/`)).rejects.toBeInstanceOf(OutboundRefusedError);
    await expect(strict(`http://[::1]:${port}/`)).rejects.toBeInstanceOf(OutboundRefusedError);
    await expect(strict(`http://localhost:${port}/`)).rejects.toBeInstanceOf(OutboundRefusedError);
    await expect(strict(`http://localhost.:${port}/`)).rejects.toThrow();
  });

  it("the provider's fetch (a client's jwks_uri) refuses a redirect instead of following it", async () => {
    // Without the provider's own guard as dispatcher the global one connects to loopback here:
    // what is tested is that the redirect is an error in both modes, not where it points.
    for (const allowPrivateNetworks of [false, true]) {
      await expect(outboundFetch(allowPrivateNetworks)(`http://127.0.0.1:${port}/redirect`), String(allowPrivateNetworks)).rejects.toThrow();
      expect(await (await outboundFetch(allowPrivateNetworks)(`http://127.0.0.1:${port}/`)).text()).toBe("ok");
    }
  });

  it("reaches private networks only when an operator allows it, never follows redirects, and bounds size and time", async () => {
    expect(await (await open(`http://127.0.0.1:${port}/`)).text()).toBe("ok");
    expect((await open(`http://127.0.0.1:${port}/redirect`)).status).toBe(302);
    await expect(open(`http://127.0.0.1:${port}/big`)).rejects.toBeInstanceOf(OutboundRefusedError);
    await expect(open(`http://127.0.0.1:${port}/slow`)).rejects.toThrow();
  });
});
