import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_CLIENT_ID, SERVICE_ADMIN_ROLE } from "~/.server/admin/permissions";
import { invalidateUser } from "~/.server/directory/users";
import { createClient, createOrganization, createUser } from "../support/factories";
import { clientConfiguration, codeFlow, CookieJar, followAuthorization, issuerOf, oidcError, pkcePair, verifyWithJwks, type OrgRef } from "../support/oidc";
import { startTestPorta, TEST_ADMIN, type TestPorta } from "../support/porta";

let porta: TestPorta;
let org: OrgRef;
let userId: string;
let config: oidc.Configuration;

const CB = "https://rp.example.com/cb";

beforeAll(async () => {
  porta = await startTestPorta();
  const prisma = porta.services.db.prisma;
  org = await createOrganization(prisma);
  userId = (await createUser(prisma, org.id)).id;
  const { client, secret } = await createClient(prisma, org.id);
  config = await clientConfiguration(porta, org, client, { secret: secret!.value });
});
afterAll(async () => {
  await porta?.stop();
});

const offline = () => codeFlow(porta, org, config, { accountId: userId, scope: "openid email offline_access", redirectUri: CB, params: { prompt: "consent" } });

async function userinfoStatus(accessToken: string) {
  const response = await fetch(`${issuerOf(porta, org)}/me`, { headers: { authorization: `Bearer ${accessToken}` } });
  await response.body?.cancel();
  return response.status;
}

describe("refresh token issuance", () => {
  it("issues a refresh token when offline_access is granted", async () => {
    const tokens = await offline();
    expect(tokens.refresh_token).toBeTruthy();
    expect(tokens.scope?.split(" ")).toContain("offline_access");
    // Opaque, not a JWT.
    expect(tokens.refresh_token!.split(".")).toHaveLength(1);
  });

  it("issues none without offline_access", async () => {
    const tokens = await codeFlow(porta, org, config, { accountId: userId, scope: "openid email", redirectUri: CB, params: { prompt: "consent" } });
    expect(tokens.access_token).toBeTruthy();
    expect(tokens.refresh_token).toBeUndefined();
  });

  it("issues none when offline_access is asked for without prompt=consent (the scope is dropped)", async () => {
    const tokens = await codeFlow(porta, org, config, { accountId: userId, scope: "openid email offline_access", redirectUri: CB });
    expect(tokens.scope?.split(" ") ?? []).not.toContain("offline_access");
    expect(tokens.refresh_token).toBeUndefined();
  });

  it("issues none to a client without the refresh_token grant type, even with offline_access", async () => {
    const prisma = porta.services.db.prisma;
    const { client, secret } = await createClient(prisma, org.id, { grantTypes: ["authorization_code"] });
    const noRefresh = await clientConfiguration(porta, org, client, { secret: secret!.value });
    const tokens = await codeFlow(porta, org, noRefresh, { accountId: userId, scope: "openid offline_access", redirectUri: CB, params: { prompt: "consent" } });
    expect(tokens.refresh_token).toBeUndefined();
  });

  it("always issues one to the shared admin client, on any loopback port, for `openid profile email roles`", async () => {
    const prisma = porta.services.db.prisma;
    const slug = porta.services.config.superAdminSlug;
    const adminOrg = await prisma.organization.findUniqueOrThrow({ where: { slug } });
    const admin = await prisma.user.findFirstOrThrow({ where: { organizationId: adminOrg.id, email: TEST_ADMIN.email } });
    const adminConfig = await clientConfiguration(porta, adminOrg, { id: ADMIN_CLIENT_ID });
    const tokens = await codeFlow(porta, adminOrg, adminConfig, {
      accountId: admin.id,
      scope: "openid profile email roles",
      redirectUri: "http://127.0.0.1:53123/callback",
    });
    expect(tokens.refresh_token).toBeTruthy();
    expect(tokens.scope?.split(" ").sort()).toEqual(["email", "openid", "profile", "roles"]);
    // For the Admin API (decision 017), without asking for that resource.
    const at = await verifyWithJwks(porta, adminOrg, tokens.access_token, { audience: `${porta.baseUrl}/api/admin`, typ: "at+jwt" });
    expect(at.payload).toMatchObject({ iss: issuerOf(porta, adminOrg), sub: admin.id, client_id: ADMIN_CLIENT_ID });
    expect(tokens.claims()?.roles).toContain(SERVICE_ADMIN_ROLE);

    // The admin flow refreshes: a new access token and a rotated refresh token.
    const refreshed = await oidc.refreshTokenGrant(adminConfig, tokens.refresh_token!);
    expect(refreshed.refresh_token).toBeTruthy();
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    const again = await verifyWithJwks(porta, adminOrg, refreshed.access_token, { audience: `${porta.baseUrl}/api/admin` });
    expect(again.payload.sub).toBe(admin.id);
    expect(String(again.payload.scope).split(" ").sort()).toEqual(["email", "openid", "profile", "roles"]);
  });

  it("stores refresh tokens hashed: no database row holds the token value", async () => {
    const tokens = await offline();
    const rows = await porta.services.db.prisma.oidcPayload.findMany({ where: { model: "RefreshToken", organizationId: (await porta.services.oidc.get(org.slug))!.organization.id } });
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.idHash).not.toBe(tokens.refresh_token);
      expect(JSON.stringify(row)).not.toContain(tokens.refresh_token!);
    }
  });
});

describe("refresh tokens of first-party clients (skip-consent, decision 073)", () => {
  async function firstParty(input: { grantTypes?: string[]; scope?: string } = {}) {
    const { client, secret } = await createClient(porta.services.db.prisma, org.id, { skipConsent: true, ...input });
    return clientConfiguration(porta, org, client, { secret: secret!.value });
  }

  it("issues a refresh token for offline_access without prompt=consent, and it refreshes", async () => {
    const own = await firstParty();
    const prompts: string[] = [];
    const tokens = await codeFlow(porta, org, own, { accountId: userId, scope: "openid email offline_access", redirectUri: CB, prompts });
    expect(prompts).toEqual(["login"]);
    expect(tokens.scope?.split(" ")).toContain("offline_access");
    expect(tokens.refresh_token).toBeTruthy();
    const refreshed = await oidc.refreshTokenGrant(own, tokens.refresh_token!);
    expect(refreshed.access_token).toBeTruthy();
    expect(refreshed.refresh_token).toBeTruthy();
  });

  it("does so again in a browser that is already signed in (no prompt at all), and through PAR", async () => {
    const own = await firstParty();
    const jar = new CookieJar();
    await codeFlow(porta, org, own, { accountId: userId, scope: "openid", redirectUri: CB, jar });
    const prompts: string[] = [];
    const again = await codeFlow(porta, org, own, { accountId: userId, scope: "openid offline_access", redirectUri: CB, jar, prompts });
    expect(prompts).toEqual([]);
    expect(again.refresh_token).toBeTruthy();

    const { verifier, challenge } = await pkcePair();
    const pushed = await oidc.buildAuthorizationUrlWithPAR(own, { redirect_uri: CB, scope: "openid offline_access", code_challenge: challenge, code_challenge_method: "S256" });
    const callback = await followAuthorization(porta, org, pushed, { accountId: userId, jar });
    const viaPar = await oidc.authorizationCodeGrant(own, callback, { pkceCodeVerifier: verifier });
    expect(viaPar.refresh_token).toBeTruthy();
  });

  it("issues none when the client may not refresh, or may not ask for offline_access", async () => {
    const noGrant = await firstParty({ grantTypes: ["authorization_code"] });
    const withoutGrant = await codeFlow(porta, org, noGrant, { accountId: userId, scope: "openid offline_access", redirectUri: CB });
    expect(withoutGrant.refresh_token).toBeUndefined();
    const noScope = await firstParty({ scope: "openid email" });
    const withoutScope = await codeFlow(porta, org, noScope, { accountId: userId, scope: "openid offline_access", redirectUri: CB });
    expect(withoutScope.refresh_token).toBeUndefined();
    expect(withoutScope.scope?.split(" ") ?? []).not.toContain("offline_access");
  });

  it("keeps the rule for a third-party client: offline_access needs prompt=consent (the consent page)", async () => {
    const prompts: string[] = [];
    const tokens = await codeFlow(porta, org, config, { accountId: userId, scope: "openid offline_access", redirectUri: CB, prompts });
    expect(tokens.refresh_token).toBeUndefined();
    const consented: string[] = [];
    const withConsent = await codeFlow(porta, org, config, { accountId: userId, scope: "openid offline_access", redirectUri: CB, params: { prompt: "consent" }, prompts: consented });
    expect(consented).toContain("consent");
    expect(withConsent.refresh_token).toBeTruthy();
  });
});

describe("refresh token rotation", () => {
  it("rotates the refresh token at each use and issues working access and ID tokens", async () => {
    const first = await offline();
    const second = await oidc.refreshTokenGrant(config, first.refresh_token!);
    expect(second.refresh_token).toBeTruthy();
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.claims()?.sub).toBe(userId);
    expect(await userinfoStatus(second.access_token)).toBe(200);
    const third = await oidc.refreshTokenGrant(config, second.refresh_token!);
    expect(third.refresh_token).not.toBe(second.refresh_token);
  });

  it("detects reuse: a rotated refresh token fails, and then the newest one of that grant fails too", async () => {
    const first = await offline();
    const second = await oidc.refreshTokenGrant(config, first.refresh_token!);
    const third = await oidc.refreshTokenGrant(config, second.refresh_token!);
    expect(await userinfoStatus(third.access_token)).toBe(200);

    expect(await oidcError(oidc.refreshTokenGrant(config, first.refresh_token!))).toMatchObject({ error: "invalid_grant", status: 400 });
    // The whole grant is revoked: the newest refresh token and the access tokens with it.
    expect(await oidcError(oidc.refreshTokenGrant(config, third.refresh_token!))).toMatchObject({ error: "invalid_grant" });
    expect(await userinfoStatus(third.access_token)).toBe(401);
  });

  it("revokes only the grant of the reused token: other users and other clients keep working", async () => {
    const prisma = porta.services.db.prisma;
    const victim = await offline();
    const otherUser = await createUser(prisma, org.id);
    const bystander = await codeFlow(porta, org, config, { accountId: otherUser.id, scope: "openid offline_access", redirectUri: CB, params: { prompt: "consent" } });
    const { client, secret } = await createClient(prisma, org.id);
    const otherClient = await clientConfiguration(porta, org, client, { secret: secret!.value });
    const sameUserElsewhere = await codeFlow(porta, org, otherClient, { accountId: userId, scope: "openid offline_access", redirectUri: CB, params: { prompt: "consent" } });

    await oidc.refreshTokenGrant(config, victim.refresh_token!);
    expect(await oidcError(oidc.refreshTokenGrant(config, victim.refresh_token!))).toMatchObject({ error: "invalid_grant" });

    expect((await oidc.refreshTokenGrant(config, bystander.refresh_token!)).access_token).toBeTruthy();
    expect((await oidc.refreshTokenGrant(otherClient, sameUserElsewhere.refresh_token!)).access_token).toBeTruthy();
    expect(await userinfoStatus(sameUserElsewhere.access_token)).toBe(200);
  });

  it("refuses a refresh token presented by another client", async () => {
    const tokens = await offline();
    const prisma = porta.services.db.prisma;
    const { client, secret } = await createClient(prisma, org.id);
    const other = await clientConfiguration(porta, org, client, { secret: secret!.value });
    expect(await oidcError(oidc.refreshTokenGrant(other, tokens.refresh_token!))).toMatchObject({ error: "invalid_grant" });
    // The rightful client can still use it.
    expect((await oidc.refreshTokenGrant(config, tokens.refresh_token!)).access_token).toBeTruthy();
  });

  it("refuses a refresh token once the user is deactivated", async () => {
    const prisma = porta.services.db.prisma;
    const user = await createUser(prisma, org.id);
    const tokens = await codeFlow(porta, org, config, { accountId: user.id, scope: "openid offline_access", redirectUri: CB, params: { prompt: "consent" } });
    await prisma.user.update({ where: { id: user.id }, data: { status: "inactive" } });
    await invalidateUser(porta.services.cache, user.id);
    expect(await oidcError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).toMatchObject({ error: "invalid_grant" });
  });
});
