import * as oidc from "openid-client";
import { afterAll, beforeAll, expect, it } from "vitest";
import { codeFlow, type OrgRef, relyingPartySetup } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

/**
 * Each SQL statement costs ~1.4 ms of CPU embedded and ~0.55 ms on PostgreSQL (issue 18), more
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

it("a refresh grant of an organization without custom claims reads the token and its grant, consumes it and writes the new tokens: five statements, none for claims", async () => {
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
  expect(statements).toHaveLength(5);
});
