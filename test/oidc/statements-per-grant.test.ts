import * as oidc from "openid-client";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createClient } from "../support/factories";
import { clientConfiguration, codeFlow, type OrgRef, relyingPartySetup } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

/**
 * Each SQL statement costs ~1.4 ms of CPU embedded and ~0.55 ms on PostgreSQL (decision 026), more
 * than oidc-provider's own work on a grant: what a refresh sends is counted, not timed.
 */

let porta: TestPorta;
let org: OrgRef;
let userId: string;
let config: oidc.Configuration;

beforeAll(async () => {
  porta = await startTestPorta();
  ({ org, userId, config } = await relyingPartySetup(porta));
});
afterAll(async () => {
  await porta?.stop();
});

async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const stop = porta.services.db.onQuery((sql) => seen.push(sql));
  try {
    await work();
  } finally {
    stop();
  }
  return seen;
}

it("a refresh grant of an organization without custom claims reads the token with its grant, consumes it and writes the new tokens: four statements, none for claims", async () => {
  const tokens = await codeFlow(porta, org, config, { accountId: userId, scope: "openid email offline_access", redirectUri: "https://rp.example.com/cb", params: { prompt: "consent" } });
  // The first rotation warms the caches (user, client) as any live deployment has them.
  const warm = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
  let rotated: oidc.TokenEndpointResponse | undefined;
  const statements = await statementsOf(async () => {
    rotated = await oidc.refreshTokenGrant(config, warm.refresh_token!);
  });
  expect(rotated?.refresh_token).toBeTruthy();
  expect(rotated?.id_token).toBeTruthy();
  expect(statements.filter((sql) => /CustomClaim/.test(sql))).toEqual([]);
  // The token and its grant are one statement (a grant read with the token is handed to the Grant lookup that follows).
  expect(statements.filter((sql) => /^\s*SELECT/i.test(sql))).toHaveLength(1);
  expect(statements).toHaveLength(4);
});

/**
 * A JWT presented for introspection is verified first, so what it is is known: a client's own
 * token (client_credentials, never stored) cannot be a stored access token or a refresh token.
 */
it("introspecting a client_credentials token looks up no stored token, and once warm not even whether it was revoked", async () => {
  const { client, secret } = await createClient(porta.services.db.prisma, org.id, { grantTypes: ["client_credentials"] });
  const machine = await clientConfiguration(porta, org, client, { secret: secret!.value });
  const { access_token } = await oidc.clientCredentialsGrant(machine);
  await oidc.tokenIntrospection(machine, access_token);
  let introspected: oidc.IntrospectionResponse | undefined;
  const statements = await statementsOf(async () => {
    introspected = await oidc.tokenIntrospection(machine, access_token);
  });
  expect(introspected?.active).toBe(true);
  expect(statements.filter((sql) => /OidcPayload/.test(sql))).toEqual([]);

  // Nor, once this process's memory of the revocations is loaded, the revocation marker (decision 061).
  const store = porta.services.store;
  const read = store.get;
  let markerReads = 0;
  store.get = (key) => {
    if (key.includes(":ClientCredentials:revoked:")) markerReads += 1;
    return read.call(store, key);
  };
  try {
    let before = -1;
    for (let i = 0; i < 100 && before !== markerReads; i++) {
      before = markerReads;
      expect((await oidc.tokenIntrospection(machine, access_token)).active).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    before = markerReads;
    for (let i = 0; i < 5; i++) await oidc.tokenIntrospection(machine, access_token);
    expect(markerReads).toBe(before);
  } finally {
    store.get = read;
  }

  await oidc.tokenRevocation(machine, access_token);
  expect((await oidc.tokenIntrospection(machine, access_token)).active).toBe(false);
});

it("introspecting a person's access token reads the token with its grant: one statement, no refresh token lookup", async () => {
  const tokens = await codeFlow(porta, org, config, { accountId: userId, scope: "openid email offline_access", redirectUri: "https://rp.example.com/cb", params: { prompt: "consent" } });
  await oidc.tokenIntrospection(config, tokens.access_token);
  let introspected: oidc.IntrospectionResponse | undefined;
  const statements = await statementsOf(async () => {
    introspected = await oidc.tokenIntrospection(config, tokens.access_token);
  });
  expect(introspected).toMatchObject({ active: true, sub: userId });
  expect(statements).toHaveLength(1);
  // The refresh token itself is still found by its own introspection.
  expect((await oidc.tokenIntrospection(config, tokens.refresh_token!)).active).toBe(true);
});
