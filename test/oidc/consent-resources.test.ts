import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { csrfOf, TestBrowser } from "../support/browser";
import { createClient, createOrganization, createUser, giveRoleWithPermissions } from "../support/factories";
import { clientConfiguration, pkcePair } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";
import { mainOf } from "../login/helpers";

/**
 * The consent page for an API resource: each scope the client asks for is named with the
 * resource's name, by the description the organization gave it where there is one, else by the
 * scope itself; the organization's own scopes keep their wording.
 */
let porta: TestPorta;
beforeAll(async () => {
  porta = await startTestPorta();
});
afterAll(async () => {
  await porta?.stop();
});

const PASSWORD = "a long test password 1";
const CB = "https://rp.example.com/cb";
const ORDERS = "https://orders.example.com/api";

describe("consent for an API resource", () => {
  it("names the resource and describes its scopes", async () => {
    const prisma = porta.services.db.prisma;
    const api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
    const org = await createOrganization(prisma, { defaultLoginMethods: ["password"] });
    const user = await createUser(prisma, org.id, { password: PASSWORD });
    await giveRoleWithPermissions(prisma, org.id, user.id, "buyer", ["orders:read", "orders:write"]);
    const created = await api.post<{ id: string }>(`/organizations/${org.id}/api-resources`, {
      identifier: ORDERS,
      name: "Orders API",
      scopes: ["orders:read", "orders:write"],
      scopeDescriptions: { "orders:read": "See your <b>orders</b>" },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { client, secret } = await createClient(prisma, org.id, { redirectUris: [CB] });
    expect((await api.put(`/clients/${client.id}/api-resources/${created.body.id}`, { scopes: ["orders:read", "orders:write"] })).status).toBe(200);

    const config = await clientConfiguration(porta, org, client, { secret: secret!.value });
    const { challenge } = await pkcePair();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: CB, scope: "openid email orders:read orders:write", resource: ORDERS, code_challenge: challenge, code_challenge_method: "S256" });
    const browser = new TestBrowser();
    const start = await browser.get(url.href);
    const interactionUrl = new URL(start.headers.get("location")!, url).href;
    const login = await browser.get(interactionUrl);
    const posted = await browser.post(interactionUrl, { csrf: csrfOf(await login.text()), email: user.email, password: PASSWORD });
    const consent = await browser.follow(posted, interactionUrl);
    expect(consent.res.status).toBe(200);
    const html = mainOf(await consent.res.text());
    const items = [...html.matchAll(/<li>([\s\S]*?)<\/li>/g)].map((m) => m[1]!.replace(/\s+/g, " ").trim());
    expect(items).toEqual(["Confirm who you are", "Your email address", "Orders API: See your &lt;b&gt;orders&lt;/b&gt;", "Orders API: “orders:write”"]);
  });
});
