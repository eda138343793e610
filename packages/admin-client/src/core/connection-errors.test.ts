import { readFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { staticToken } from "../auth/provider.js";
import { requestToken } from "../auth/token-endpoint.js";
import { PortaAdmin } from "../client.js";
import { PortaConnectionError } from "./errors.js";

/**
 * A server that cannot be reached gives a PortaConnectionError naming the URL that failed and
 * why: refused, DNS, TLS (a plain HTTP port behind an https:// URL, a self-signed certificate).
 * Real sockets on loopback; the DNS case uses the reserved `.invalid` top-level domain.
 */
const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url));
let plain: Server;
let selfSigned: Server;
let closedPort: number;
const port = (server: Server) => (server.address() as AddressInfo).port;

beforeAll(async () => {
  plain = createHttpServer((_req, res) => res.end("{}"));
  selfSigned = createHttpsServer({ key: fixture("self-signed.key"), cert: fixture("self-signed.crt") }, (_req, res) => res.end("{}"));
  const closed = createHttpServer();
  await Promise.all([plain, selfSigned, closed].map((s) => new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve))));
  closedPort = port(closed);
  await new Promise((resolve) => closed.close(resolve));
});
afterAll(async () => {
  await Promise.all([plain, selfSigned].map((s) => new Promise((resolve) => s.close(resolve))));
});

async function failureOf(baseUrl: string): Promise<PortaConnectionError> {
  const admin = new PortaAdmin({ baseUrl, auth: staticToken("t"), maxRetries: 0 });
  const error = await admin.organizations.list({ q: "secret-query" }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PortaConnectionError);
  return error as PortaConnectionError;
}

describe("an unreachable server", () => {
  it("refused: names the URL (without its query) and says nothing listens there", async () => {
    const error = await failureOf(`http://127.0.0.1:${closedPort}`);
    expect(error).toMatchObject({ status: 0, code: "connection_refused", reason: "refused", systemCode: "ECONNREFUSED", url: `http://127.0.0.1:${closedPort}/api/admin/organizations` });
    expect(error.message).toBe(`Could not reach http://127.0.0.1:${closedPort}/api/admin/organizations: the connection was refused: nothing listens there (is Porta running, and is the port right?) (ECONNREFUSED).`);
  });

  it("DNS: names the host that was not found", async () => {
    const error = await failureOf("https://porta.example.invalid");
    expect(error.reason).toBe("dns");
    expect(error.code).toBe("dns_failed");
    expect(error.message).toMatch(/^Could not reach https:\/\/porta\.example\.invalid\/api\/admin\/organizations: the host name porta\.example\.invalid (was not found|could not be looked up)/);
  });

  it("TLS: an https:// URL on a plain HTTP port", async () => {
    const error = await failureOf(`https://127.0.0.1:${port(plain)}`);
    expect(error).toMatchObject({ code: "tls_failed", reason: "tls" });
    expect(error.message).toContain(`Could not reach https://127.0.0.1:${port(plain)}/api/admin/organizations: the TLS handshake failed: the server does not speak TLS on that port (is the URL http://?)`);
  });

  it("TLS: a certificate no authority signed", async () => {
    const error = await failureOf(`https://localhost:${port(selfSigned)}`);
    expect(error).toMatchObject({ code: "tls_failed", reason: "tls", systemCode: "DEPTH_ZERO_SELF_SIGNED_CERT" });
    expect(error.message).toBe(`Could not reach https://localhost:${port(selfSigned)}/api/admin/organizations: the TLS handshake failed: self-signed certificate; if the root CA is installed locally, try running Node.js with --use-system-ca (DEPTH_ZERO_SELF_SIGNED_CERT).`);
  });

  it("the token endpoint (a refresh) reports the same way", async () => {
    const endpoint = `http://127.0.0.1:${closedPort}/porta-admin/auth/token`;
    const error = await requestToken(endpoint, { grant_type: "refresh_token", refresh_token: "r" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PortaConnectionError);
    expect((error as PortaConnectionError).message).toContain(`Could not reach ${endpoint}: the connection was refused`);
  });
});
