import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ephemeralKey } from "~/.server/oidc/storage/adapter";
import { DEVICE_CODE_GRANT } from "~/schemas/client";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createClient, createOrganization, createUser, giveRole } from "../support/factories";
import { AuthorizationPageError, clientConfiguration, CookieJar, followAuthorization, issuerOf, oidcError, postForm, verifyWithJwks, type OrgRef } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

/**
 * The device authorization grant (RFC 8628, decision 049) with openid-client as the device: it
 * asks for a code, a person enters it on Porta's own page in a browser (here a cookie jar) and
 * signs in, the device polls the token endpoint.
 */
let porta: TestPorta;
let org: OrgRef;
let userId: string;
let clientId: string;
let config: oidc.Configuration;

beforeAll(async () => {
  porta = await startTestPorta();
  const prisma = porta.services.db.prisma;
  org = await createOrganization(prisma, { name: "Acme Devices" });
  userId = (await createUser(prisma, org.id)).id;
  // A command-line tool: public, no redirect URI of its own use, the device grant and refresh tokens.
  const created = await createClient(prisma, org.id, { confidential: false, grantTypes: [DEVICE_CODE_GRANT, "refresh_token"], redirectUris: [], scope: "openid profile email offline_access" });
  clientId = created.client.id;
  config = await clientConfiguration(porta, org, created.client);
});
afterAll(async () => {
  await porta?.stop();
});

const html = async (response: Response) => ({ status: response.status, text: await response.text() });
const attr = (text: string, pattern: RegExp) => pattern.exec(text)?.[1]?.replace(/&amp;/g, "&");

/** The person opens the verification page and enters `userCode`; returns the page Porta answers with. */
async function enterCode(jar: CookieJar, verificationUri: string, userCode: string, language = "en") {
  const page = await html(await jar.fetch(verificationUri, { headers: { "accept-language": language } }));
  expect(page.status).toBe(200);
  const action = attr(page.text, /<form id="op\.deviceInputForm" method="post" action="([^"]+)"/)!;
  const xsrf = attr(page.text, /name="xsrf" value="([^"]+)"/)!;
  return jar.fetch(action, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", "accept-language": language }, body: new URLSearchParams({ xsrf, user_code: userCode }) });
}

/** On the confirmation page, the person continues (or cancels). */
async function answerConfirmation(jar: CookieJar, confirmation: string, choice: "continue" | "cancel") {
  const action = attr(confirmation, /<form id="op\.deviceConfirmForm" method="post" action="([^"]+)"/)!;
  const fields = Object.fromEntries([...confirmation.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/?>/g)].map((m) => [m[1]!, m[2]!.replace(/&amp;/g, "&")]));
  if (choice === "cancel") fields.abort = "yes";
  return jar.fetch(action, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields) });
}

/** Enters the code, confirms, signs in and consents; returns the final page. */
async function approve(verificationUri: string, userCode: string) {
  const jar = new CookieJar();
  const confirmation = await html(await enterCode(jar, verificationUri, userCode));
  expect(confirmation.status).toBe(200);
  expect(confirmation.text).toContain("Sign in on this device?");
  expect(confirmation.text).toContain(userCode);
  const confirmed = await answerConfirmation(jar, confirmation.text, "continue");
  expect(confirmed.status).toBe(303);
  const interaction = new URL(confirmed.headers.get("location")!, porta.baseUrl);
  expect(interaction.pathname).toMatch(/^\/interaction\//);
  try {
    await followAuthorization(porta, org, interaction, { accountId: userId, jar });
  } catch (error) {
    // The device flow ends on Porta's page, not at a redirect URI.
    if (error instanceof AuthorizationPageError) return error;
    throw error;
  }
  throw new Error("the device flow ended in a redirect");
}

describe("device authorization grant", () => {
  it("discovery names the device authorization endpoint", async () => {
    const discovery = (await (await fetch(`${issuerOf(porta, org)}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(discovery.device_authorization_endpoint).toBe(`${issuerOf(porta, org)}/device/auth`);
    expect(discovery.grant_types_supported).toContain(DEVICE_CODE_GRANT);
  });

  it("signs the device in once the person entered the code and signed in", async () => {
    const started = await oidc.initiateDeviceAuthorization(config, { scope: "openid email offline_access" });
    expect(started.verification_uri).toBe(`${issuerOf(porta, org)}/device`);
    expect(started.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(started.interval).toBe(5);
    const polling = oidc.pollDeviceAuthorizationGrant(config, started);
    const done = await approve(started.verification_uri, started.user_code);
    expect(done.status).toBe(200);
    expect(done.body).toContain("Your device is signed in");
    const tokens = await polling;
    const { payload } = await verifyWithJwks(porta, org, tokens.id_token!, { audience: clientId });
    expect(payload.sub).toBe(userId);
    expect(tokens.refresh_token).toBeTruthy();
  }, 40_000);

  it("gives the device a token for an API resource with the scopes the person's roles grant (decision 077)", async () => {
    const prisma = porta.services.db.prisma;
    const api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
    const RESOURCE = "https://devices.example.com/api";
    const resource = await api.post<{ id: string }>(`/organizations/${org.id}/api-resources`, { identifier: RESOURCE, name: "Devices", scopes: ["dev:read", "dev:write"] });
    expect(resource.status, JSON.stringify(resource.body)).toBe(201);
    expect((await api.put(`/clients/${clientId}/api-resources/${resource.body.id}`, { scopes: ["dev:read", "dev:write"] })).status).toBe(200);
    // The person's role holds dev:read only.
    const role = await giveRole(prisma, org.id, userId, "device-reader");
    const permission = await prisma.permission.create({ data: { organizationId: org.id, name: "dev:read" } });
    await prisma.rolePermission.create({ data: { roleId: role.id, permissionId: permission.id } });

    const started = await oidc.initiateDeviceAuthorization(config, { scope: "openid dev:read dev:write", resource: RESOURCE });
    const polling = oidc.pollDeviceAuthorizationGrant(config, started);
    expect((await approve(started.verification_uri, started.user_code)).status).toBe(200);
    const tokens = await polling;
    const { payload } = await verifyWithJwks(porta, org, tokens.access_token, { audience: RESOURCE });
    expect(payload).toMatchObject({ sub: userId, aud: RESOURCE, scope: "dev:read" });
  }, 40_000);

  it("shows a wrong code again with the reason, in the person's language", async () => {
    await oidc.initiateDeviceAuthorization(config, { scope: "openid" });
    const english = await html(await enterCode(new CookieJar(), `${issuerOf(porta, org)}/device`, "BCDF-GHJK"));
    expect(english.text).toContain("That code is not valid.");
    expect(english.text).toMatch(/<label for="user_code">Code<\/label>/);
    const german = await html(await enterCode(new CookieJar(), `${issuerOf(porta, org)}/device`, "BCDF-GHJK", "de"));
    expect(german.text).toContain("Dieser Code ist ungültig.");
    expect(german.text).toContain('<html lang="de"');
  });

  it("tells the device when the person cancels (access_denied)", async () => {
    const started = await oidc.initiateDeviceAuthorization(config, { scope: "openid" });
    const jar = new CookieJar();
    const confirmation = await html(await enterCode(jar, started.verification_uri, started.user_code));
    const cancelled = await html(await answerConfirmation(jar, confirmation.text, "cancel"));
    expect(cancelled.text).toContain("The sign-in on the device was cancelled.");
    expect((await oidcError(oidc.pollDeviceAuthorizationGrant(config, { ...started, interval: 1 }))).error).toBe("access_denied");
  });

  it("refuses an expired code, on the page and to the device (expired_token)", async () => {
    const started = await oidc.initiateDeviceAuthorization(config, { scope: "openid" });
    // The code's ten minutes pass: its stored expiry is moved into the past.
    const key = ephemeralKey(org.id, "DeviceCode", started.device_code);
    const stored = JSON.parse((await porta.services.store.get(key))!) as { exp: number };
    await porta.services.store.replace(key, JSON.stringify({ ...stored, exp: Math.floor(Date.now() / 1000) - 1 }));
    const page = await html(await enterCode(new CookieJar(), started.verification_uri, started.user_code));
    expect(page.text).toContain("That code has expired.");
    const tokenEndpoint = config.serverMetadata().token_endpoint!;
    const polled = await postForm(tokenEndpoint, { grant_type: DEVICE_CODE_GRANT, device_code: started.device_code, client_id: clientId });
    expect(polled.status).toBe(400);
    expect(polled.body.error).toBe("expired_token");
  });

  it("answers slow_down to a device that polls within the interval", async () => {
    const started = await oidc.initiateDeviceAuthorization(config, { scope: "openid" });
    const tokenEndpoint = config.serverMetadata().token_endpoint!;
    const poll = () => postForm(tokenEndpoint, { grant_type: DEVICE_CODE_GRANT, device_code: started.device_code, client_id: clientId });
    const first = await poll();
    expect(first.body.error).toBe("authorization_pending");
    const second = await poll();
    expect(second.status).toBe(400);
    expect(second.body.error).toBe("slow_down");
  });

  it("answers slow_down at the token endpoint's other spelling, /{slug}/token, too", async () => {
    const started = await oidc.initiateDeviceAuthorization(config, { scope: "openid" });
    const alias = `${issuerOf(porta, org)}/token`;
    const poll = () => postForm(alias, { grant_type: DEVICE_CODE_GRANT, device_code: started.device_code, client_id: clientId });
    expect((await poll()).body.error).toBe("authorization_pending");
    const second = await poll();
    expect(second.status).toBe(400);
    expect(second.body.error).toBe("slow_down");
  });

  it("a client without the grant type cannot start it", async () => {
    const other = await createClient(porta.services.db.prisma, org.id, { confidential: false });
    const otherConfig = await clientConfiguration(porta, org, other.client);
    expect((await oidcError(oidc.initiateDeviceAuthorization(otherConfig, { scope: "openid" }))).error).toBe("unauthorized_client");
  });

  it("limits the codes one address may enter", async () => {
    const admin = await obtainAdminTokens(porta);
    expect((await adminApi(porta, admin.accessToken).put("/config/rateLimits.deviceCodeEntry.perIp", { value: { points: 2, windowMinutes: 15 } })).status).toBe(200);
    // Another organization: this address's entries above counted against this one's.
    const fresh = await createOrganization(porta.services.db.prisma);
    const uri = `${issuerOf(porta, fresh)}/device`;
    for (let i = 0; i < 2; i++) expect((await html(await enterCode(new CookieJar(), uri, "BCDF-GHJK"))).text).toContain("That code is not valid.");
    const refused = await enterCode(new CookieJar(), uri, "BCDF-GHJK");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(await refused.text()).toContain("Too many codes were entered.");
  });
});
