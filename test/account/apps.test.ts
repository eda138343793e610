import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createClient } from "../support/factories";
import { clientConfiguration, followAuthorization, pkcePair } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createAccountTenant, createAccountUser, openAccount, postAccount, shown, signInToAccount, type AccountTenant } from "./helpers";

/**
 * "Apps with access" on the account page: the applications and agents a person allowed, with the
 * scopes and API resources allowed, and taking that access back: the grants and the refresh and
 * access tokens issued under them end at once, the audit records it, and nobody else's access
 * (another person's at the same client, another organization's client) is touched.
 */
describe("account page: apps with access", () => {
  let porta: TestPorta;
  let api: ReturnType<typeof adminApi>;
  let tenant: AccountTenant;
  let ordersId: string;
  const ORDERS = "https://orders.example.com/api";
  const CB = "https://rp.example.com/cb";
  const prisma = () => porta.services.db.prisma;

  beforeAll(async () => {
    porta = await startTestPorta();
    api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
    tenant = await createAccountTenant(porta);
    const created = await api.post<{ id: string }>(`/organizations/${tenant.org.id}/api-resources`, { identifier: ORDERS, name: "Orders API", scopes: ["orders:read", "orders:write"] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    ordersId = created.body.id;
  });
  afterAll(async () => {
    await porta?.stop();
  });

  /** A client of the organization, granted the Orders resource, with a name the page shows. */
  async function appWithResource(name: string, at: AccountTenant = tenant) {
    const { client, secret } = await createClient(prisma(), at.org.id);
    await prisma().client.update({ where: { id: client.id }, data: { name } });
    if (at === tenant) expect((await api.put(`/clients/${client.id}/api-resources/${ordersId}`, { scopes: ["orders:read"] })).status).toBe(200);
    return { client, config: await clientConfiguration(porta, at.org, client, { secret: secret!.value }) };
  }

  /** The person allows the app (consent recorded) and the app gets a refresh token. */
  async function allow(config: oidc.Configuration, accountId: string, at: AccountTenant = tenant, resource: string | null = ORDERS) {
    const { verifier, challenge } = await pkcePair();
    const params: Record<string, string> = { redirect_uri: CB, code_challenge: challenge, code_challenge_method: "S256", scope: `openid offline_access${resource ? " orders:read" : ""}`, prompt: "consent" };
    if (resource) params.resource = resource;
    const callback = await followAuthorization(porta, at.org, oidc.buildAuthorizationUrl(config, params), { accountId });
    expect(callback.searchParams.get("error_description")).toBeNull();
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier }, resource ? { resource } : undefined);
    expect(tokens.refresh_token).toBeTruthy();
    return tokens;
  }

  /** The account page's "Apps with access" section, as text. */
  const appsSection = (html: string) => shown(`<main>${/<section id="apps"[\s\S]*?<\/section>/.exec(html)?.[0] ?? ""}</main>`);

  const refreshFails = async (config: oidc.Configuration, refreshToken: string) => {
    const error = await oidc.refreshTokenGrant(config, refreshToken).then(
      () => null,
      (e: unknown) => e,
    );
    return error instanceof oidc.ResponseBodyError ? error.error : error;
  };

  it("lists the app with its scopes and the API resource by name, and removing it ends its refresh tokens at once", async () => {
    const user = await createAccountUser(porta, tenant);
    const { client, config } = await appWithResource("Ledger Agent");
    const tokens = await allow(config, user.id);

    const page = await signInToAccount(tenant, user.email);
    const text = appsSection(page.html);
    expect(text).toContain("Apps with access");
    expect(text).toContain("Ledger Agent");
    expect(text).toContain("Allowed: offline_access, openid");
    expect(text).toContain("Orders API: orders:read");
    expect(page.html).toContain('aria-label="Remove the access of Ledger Agent"');

    const res = await postAccount(tenant, page, { intent: "app-revoke", client: client.id });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/${tenant.org.slug}/account?done=app_revoked`);
    expect(await refreshFails(config, tokens.refresh_token!)).toBe("invalid_grant");
    const after = appsSection((await openAccount(tenant, page.browser)).html);
    expect(after).toContain("No application has access yet.");
    expect(after).not.toContain("Ledger Agent");
    const entries = await prisma().auditEntry.findMany({ where: { targetId: user.id, eventType: "account.app_access.revoked" } });
    expect(entries.map((e) => e.data)).toEqual([{ clientId: client.id }]);

    // Allowing it again asks for consent again and works: nothing was remembered.
    const prompts: string[] = [];
    const { verifier, challenge } = await pkcePair();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: CB, code_challenge: challenge, code_challenge_method: "S256", scope: "openid" });
    const callback = await followAuthorization(porta, tenant.org, url, { accountId: user.id, prompts });
    expect(prompts).toContain("consent");
    expect((await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier })).access_token).toBeTruthy();
  });

  it("removes only this person's access: another person's at the same app and the person's other apps keep working", async () => {
    const person = await createAccountUser(porta, tenant);
    const colleague = await createAccountUser(porta, tenant);
    const { client, config } = await appWithResource("Shared Agent");
    const other = await appWithResource("Calendar");
    const mine = await allow(config, person.id);
    const theirs = await allow(config, colleague.id);
    const kept = await allow(other.config, person.id, tenant, null);

    const page = await signInToAccount(tenant, person.email);
    expect((await postAccount(tenant, page, { intent: "app-revoke", client: client.id })).status).toBe(303);
    expect(await refreshFails(config, mine.refresh_token!)).toBe("invalid_grant");
    expect((await oidc.refreshTokenGrant(config, theirs.refresh_token!)).access_token).toBeTruthy();
    expect((await oidc.refreshTokenGrant(other.config, kept.refresh_token!)).access_token).toBeTruthy();
    const text = appsSection((await openAccount(tenant, page.browser)).html);
    expect(text).toContain("Calendar");
    // Calendar was allowed the OpenID scopes only: no resource line.
    expect(text).not.toContain("Orders API");
    expect(text).not.toContain("Shared Agent");
  });

  it("refuses what is not the person's to remove (404, nothing deleted) and a form without this browser's CSRF token (403)", async () => {
    const person = await createAccountUser(porta, tenant);
    const colleague = await createAccountUser(porta, tenant);
    const { client, config } = await appWithResource("Colleague's App");
    const theirs = await allow(config, colleague.id);
    const otherTenant = await createAccountTenant(porta);
    const outsider = await createAccountUser(porta, otherTenant);
    const foreign = await appWithResource("Foreign App", otherTenant);
    const foreignTokens = await allow(foreign.config, outsider.id, otherTenant, null);
    const rows = () => prisma().oidcPayload.count({ where: { model: { in: ["Grant", "RefreshToken", "AccessToken"] } } });
    const before = await rows();

    const page = await signInToAccount(tenant, person.email);
    const afterSignIn = await rows();
    // The colleague's app, another organization's client, the account page itself, hostile values.
    for (const value of [client.id, foreign.client.id, "porta-account", "", "x".repeat(300), "a\u0000b", "\ud800"]) {
      const res = await postAccount(tenant, page, { intent: "app-revoke", client: value });
      expect(res.status, value).toBe(404);
      expect(shown(await res.text())).toContain("That application no longer has access.");
    }
    const forged = await page.browser.post(tenant.accountUrl, { csrf: "forged", intent: "app-revoke", client: client.id });
    expect(forged.status).toBe(403);
    await forged.body?.cancel();
    expect(await rows()).toBe(afterSignIn);
    expect(afterSignIn).toBeGreaterThanOrEqual(before);
    expect((await oidc.refreshTokenGrant(config, theirs.refresh_token!)).access_token).toBeTruthy();
    expect((await oidc.refreshTokenGrant(foreign.config, foreignTokens.refresh_token!)).access_token).toBeTruthy();
  });
});
