import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  PortaAdmin,
  PortaAuthenticationError,
  clientCredentials,
  cliCredentials,
  readCredentialsFile,
  staticToken,
  writeCredentialsFile,
  type StoredCredentials,
} from "../../packages/admin-client/src/index";
import { obtainAdminTokens } from "../support/admin-api";
import { startTestPorta, type TestPorta } from "../support/porta";
import { unique } from "../admin/helpers";

/**
 * The three auth providers against a real Porta: client credentials at both token endpoint
 * shapes with its cache, and the CLI's stored credentials refreshed and written back.
 */
let porta: TestPorta;
let admin: PortaAdmin;
let issuer: string;
let dir: string;

beforeAll(async () => {
  porta = await startTestPorta();
  issuer = `${porta.baseUrl}/${porta.services.config.superAdminSlug}`;
  admin = new PortaAdmin({ baseUrl: porta.url, auth: staticToken((await obtainAdminTokens(porta)).accessToken) });
  dir = mkdtempSync(path.join(tmpdir(), "porta-sdk-"));
});
afterAll(async () => {
  await porta?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Counts the requests that really go to the network. */
function countingFetch() {
  const urls: string[] = [];
  const wrapped: typeof fetch = (input, init) => {
    urls.push(String(input instanceof Request ? input.url : input));
    return fetch(input, init);
  };
  return { urls, fetch: wrapped };
}

describe("clientCredentials", () => {
  let tenantIssuer: string;
  let clientId: string;
  let clientSecret: string;

  beforeAll(async () => {
    const org = (await admin.organizations.create({ name: "Machines", slug: unique("m2m") })).data;
    tenantIssuer = `${porta.baseUrl}/${org.slug}`;
    const client = await admin.clients.create({ organizationId: org.id, name: "Worker", clientType: "confidential", grantTypes: ["client_credentials"] });
    clientId = client.data.id;
    clientSecret = (await admin.clients.generateSecret(clientId, { label: "sdk" })).value;
  });

  it("obtains a token at {issuer}/token and caches it until shortly before expiry", async () => {
    const counter = countingFetch();
    const provider = clientCredentials({ issuer: tenantIssuer, clientId, clientSecret, fetch: counter.fetch });
    const [a, b] = await Promise.all([provider.getToken(), provider.getToken()]);
    const c = await provider.getToken();
    expect(a).toMatch(/\S{20,}/);
    expect(b).toBe(a);
    expect(c).toBe(a);
    expect(counter.urls).toEqual([`${tenantIssuer}/token`]);
    // The token is real: the tenant's introspection endpoint knows it as active.
    const introspection = await fetch(`${tenantIssuer}/token/introspection`, {
      method: "POST",
      headers: { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString("base64")}`, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: a }).toString(),
    });
    expect(await introspection.json()).toMatchObject({ active: true, client_id: clientId });
  });

  it("works at {issuer}/auth/token and fetches again once the token is about to expire", async () => {
    const counter = countingFetch();
    // A skew longer than the token's lifetime means every cached token counts as about to expire.
    const provider = clientCredentials({ tokenEndpoint: `${tenantIssuer}/auth/token`, clientId, clientSecret, refreshSkewSeconds: 24 * 3600, fetch: counter.fetch });
    const first = await provider.getToken();
    const second = await provider.getToken();
    expect(second).not.toBe(first);
    expect(counter.urls).toEqual([`${tenantIssuer}/auth/token`, `${tenantIssuer}/auth/token`]);
  });

  it("reports a wrong secret as PortaAuthenticationError", async () => {
    const provider = clientCredentials({ issuer: tenantIssuer, clientId, clientSecret: "wrong" });
    await expect(provider.getToken()).rejects.toBeInstanceOf(PortaAuthenticationError);
  });

  it("is refused by the Admin API, which admits only service-admin users (after one fresh token)", async () => {
    const counter = countingFetch();
    const client = new PortaAdmin({ baseUrl: porta.url, auth: clientCredentials({ issuer: tenantIssuer, clientId, clientSecret, fetch: counter.fetch }) });
    await expect(client.organizations.list()).rejects.toBeInstanceOf(PortaAuthenticationError);
    expect(counter.urls.filter((u) => u.endsWith("/token"))).toHaveLength(2);
  });
});

describe("cliCredentials", () => {
  async function storedLogin(file: string, tokenEndpoint: string, expiresAt: number) {
    const tokens = await obtainAdminTokens(porta);
    const stored: StoredCredentials = {
      server: porta.url,
      issuer,
      clientId: "porta-admin",
      tokenEndpoint,
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      expiresAt,
    };
    await writeCredentialsFile(file, { version: 1, profiles: { default: stored } });
    return stored;
  }

  it("uses a valid stored token without refreshing", async () => {
    const file = path.join(dir, "valid.json");
    const stored = await storedLogin(file, `${issuer}/auth/token`, Date.now() + 10 * 60_000);
    const counter = countingFetch();
    const client = new PortaAdmin({ baseUrl: porta.url, auth: cliCredentials({ file, fetch: counter.fetch }) });
    expect((await client.organizations.list()).total).toBeGreaterThan(0);
    expect(counter.urls).toEqual([]);
    expect((await readCredentialsFile(file)).profiles.default?.accessToken).toBe(stored.accessToken);
  });

  for (const shape of ["/token", "/auth/token"]) {
    it(`refreshes an expired access token at {issuer}${shape} and writes the rotated tokens back (0600)`, async () => {
      const file = path.join(dir, `expired-${shape.replaceAll("/", "_")}.json`);
      const stored = await storedLogin(file, `${issuer}/auth/token`, Date.now() - 1000);
      const counter = countingFetch();
      const client = new PortaAdmin({ baseUrl: porta.url, auth: cliCredentials({ file, tokenEndpoint: `${issuer}${shape}`, clientId: "porta-admin", fetch: counter.fetch }) });
      expect((await client.organizations.list()).total).toBeGreaterThan(0);
      expect(counter.urls).toEqual([`${issuer}${shape}`]);

      const after = (await readCredentialsFile(file)).profiles.default!;
      expect(after.accessToken).not.toBe(stored.accessToken);
      expect(after.refreshToken).toBeTruthy();
      expect(after.refreshToken).not.toBe(stored.refreshToken);
      expect(after.expiresAt).toBeGreaterThan(Date.now());
      expect(statSync(file).mode & 0o777).toBe(0o600);
      // No temp file is left beside it.
      expect(readFileSync(file, "utf8")).toContain(after.accessToken);

      // A second client reads the new tokens: no refresh needed.
      const again = countingFetch();
      const second = new PortaAdmin({ baseUrl: porta.url, auth: cliCredentials({ file, fetch: again.fetch }) });
      await second.stats.get();
      expect(again.urls).toEqual([]);
    });
  }

  it("asks for a new login when the refresh token is no longer valid", async () => {
    const file = path.join(dir, "revoked.json");
    const stored = await storedLogin(file, `${issuer}/auth/token`, Date.now() - 1000);
    await writeCredentialsFile(file, { version: 1, profiles: { default: { ...stored, refreshToken: "not-a-refresh-token" } } });
    const client = new PortaAdmin({ baseUrl: porta.url, auth: cliCredentials({ file }) });
    await expect(client.organizations.list()).rejects.toBeInstanceOf(PortaAuthenticationError);
  });

  it("names the missing profile", async () => {
    const client = new PortaAdmin({ baseUrl: porta.url, auth: cliCredentials({ file: path.join(dir, "none.json"), profile: "staging" }) });
    await expect(client.organizations.list()).rejects.toMatchObject({ code: "not_logged_in", message: expect.stringContaining("staging") as unknown as string });
  });
});
