import { createHash } from "node:crypto";
import * as oidc from "openid-client";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeFlow, issuerOf, type OrgRef, relyingPartySetup } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

/**
 * Decision 044: the ID token says how the person signed in (`acr`: one factor or two, from the
 * factors' `amr`) and carries `at_hash` for the access token issued with it (OpenID Connect
 * Core §3.1.3.6), at the code exchange and at every refresh.
 */
const CB = "https://rp.example.com/cb";
const atHash = (accessToken: string) => createHash("sha256").update(accessToken).digest().subarray(0, 16).toString("base64url");

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

describe("acr and at_hash", () => {
  it("discovery lists the acr values Porta issues", async () => {
    const discovery = (await (await fetch(`${issuerOf(porta, org)}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(discovery.acr_values_supported).toEqual(["urn:porta:acr:1fa", "urn:porta:acr:2fa"]);
    expect(discovery.claims_supported).toContain("acr");
  });

  it("a password sign-in is one factor; with a second factor it is two", async () => {
    const one = await codeFlow(porta, org, config, { accountId: userId, scope: "openid", redirectUri: CB, amr: ["pwd"] });
    expect(one.claims()).toMatchObject({ acr: "urn:porta:acr:1fa", amr: ["pwd"] });
    const two = await codeFlow(porta, org, config, { accountId: userId, scope: "openid", redirectUri: CB, amr: ["pwd", "otp", "mfa"], params: { acr_values: "urn:porta:acr:2fa" } });
    expect(two.claims()).toMatchObject({ acr: "urn:porta:acr:2fa", amr: ["pwd", "otp", "mfa"] });
    const link = await codeFlow(porta, org, config, { accountId: userId, scope: "openid", redirectUri: CB, amr: ["email"] });
    expect(link.claims()?.acr).toBe("urn:porta:acr:1fa");
  });

  it("carries at_hash of the access token issued with the ID token, at the code exchange and at a refresh", async () => {
    const tokens = await codeFlow(porta, org, config, { accountId: userId, scope: "openid offline_access", redirectUri: CB, params: { prompt: "consent" } });
    expect(decodeJwt(tokens.id_token!).at_hash).toBe(atHash(tokens.access_token));
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(decodeJwt(refreshed.id_token!).at_hash).toBe(atHash(refreshed.access_token));
  });
});
