import type * as oidc from "openid-client";
import { afterAll, beforeAll, expect, it } from "vitest";
import { accountSessionsKey } from "~/.server/oidc/storage/sessions";
import { codeFlow, CookieJar, type OrgRef, relyingPartySetup } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

/**
 * One person signing in on several devices at the same moment: each sign-in saves a session
 * and adds it to the person's set of sessions. On PostgreSQL two such writers deadlocked and one
 * sign-in ended in a 500 (found by the bench's parallel flows, 2026-11-24).
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

it("signs one person in on eight devices at once, again and again: every sign-in gets its tokens, every device its session", async () => {
  // Each device keeps its cookies: a device that signs in again re-saves its own session while
  // the others add theirs to the same record (the order of row locks that deadlocked).
  const devices = Array.from({ length: 8 }, () => new CookieJar());
  const signIn = (jar: CookieJar) =>
    codeFlow(porta, org, config, { accountId: userId, scope: "openid email", redirectUri: "https://rp.example.com/cb", params: { prompt: "consent" }, jar });
  for (let round = 0; round < 4; round++) {
    const results = await Promise.allSettled(devices.map(signIn));
    expect(results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason).slice(0, 300))).toEqual([]);
    for (const result of results) expect((result as PromiseFulfilledResult<oidc.TokenEndpointResponse>).value.id_token).toBeTruthy();
  }
  // Every device's session is recorded as the person's (what "sign out everywhere" ends).
  expect((await porta.services.store.setMembers(accountSessionsKey(org.id, userId))).length).toBeGreaterThanOrEqual(devices.length);
});
