import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { csrfOf, startAuthorization, type TestBrowser } from "../support/browser";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, PASSWORD, RP_CALLBACK, unique, userinfoStatus, type Tenant } from "../admin/helpers";
import type { Page } from "~/.server/admin/http/pagination";

/**
 * One grant per sign-in, not per account and client (decision 017).
 * Two devices are two browsers with cookie jars of their own, signing one user in at one
 * client through the real login and consent pages: each sign-in holds its own grant, so ending
 * one (RFC 7009 revocation, RP-initiated logout) leaves the other working, while the consent
 * the person gave the client is remembered across them.
 */
let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
let tenant: Tenant;

beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  tenant = await createTenant(porta);
});
afterAll(async () => {
  await porta?.stop();
});

interface Device {
  accessToken: string;
  refreshToken: string | undefined;
  idToken: string | undefined;
  config: oidc.Configuration;
  browser: TestBrowser;
  /** The scopes the consent page asked for, or null when no consent page was shown. */
  consentAsked: string[] | null;
}

/** One device: a fresh browser signs in through the login page and, when shown, allows the consent page. */
async function signInOnDevice(email: string, scope: string, extra: Record<string, string> = {}): Promise<Device> {
  const start = await startAuthorization({ issuer: tenant.issuer, clientId: tenant.clientId, clientSecret: tenant.secret, redirectUri: RP_CALLBACK, scope, extra });
  const page = await start.browser.get(start.interactionUrl);
  const posted = await start.browser.post(start.interactionUrl, { csrf: csrfOf(await page.text()), email, password: PASSWORD });
  expect([302, 303]).toContain(posted.status);
  let step = await start.browser.follow(posted, start.interactionUrl, (u) => u.startsWith(RP_CALLBACK));
  let consentAsked: string[] | null = null;
  if (!step.url.startsWith(RP_CALLBACK)) {
    expect(step.res.status).toBe(200);
    const uid = new URL(step.url).pathname.split("/").pop()!;
    const interaction = await (await porta.services.oidc.get(tenant.org.slug))!.provider.Interaction.find(uid);
    expect(interaction?.prompt.name).toBe("consent");
    const details = interaction!.prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
    consentAsked = [...new Set([...(details.missingOIDCScope ?? []), ...Object.values(details.missingResourceScopes ?? {}).flat()])].sort();
    const allow = await start.browser.post(`${step.url}/consent`, { csrf: csrfOf(await step.res.text()), decision: "allow" });
    step = await start.browser.follow(allow, `${step.url}/consent`, (u) => u.startsWith(RP_CALLBACK));
  }
  expect(step.url.startsWith(RP_CALLBACK), step.url).toBe(true);
  const tokens = await oidc.authorizationCodeGrant(start.config, new URL(step.url), { pkceCodeVerifier: start.verifier });
  return { accessToken: tokens.access_token, refreshToken: tokens.refresh_token, idToken: tokens.id_token, config: start.config, browser: start.browser, consentAsked };
}

/** Uses the device's refresh token: null when it worked (keeping the rotated one), else the OAuth error. */
async function refreshError(device: Device): Promise<string | null> {
  try {
    const tokens = await oidc.refreshTokenGrant(device.config, device.refreshToken!);
    device.refreshToken = tokens.refresh_token ?? device.refreshToken;
    device.accessToken = tokens.access_token;
    return null;
  } catch (error) {
    if (error instanceof oidc.ResponseBodyError) return error.error;
    throw error;
  }
}

async function newUser() {
  return createUser(porta.services.db.prisma, tenant.org.id, { email: `${unique("device")}@example.com`, password: PASSWORD });
}

/** Two devices of one user, both asking for a refresh token (offline_access needs prompt=consent). */
async function twoDevices() {
  const user = await newUser();
  const a = await signInOnDevice(user.email, "openid email offline_access", { prompt: "consent" });
  const b = await signInOnDevice(user.email, "openid email offline_access", { prompt: "consent" });
  expect(a.refreshToken).toBeTruthy();
  expect(b.refreshToken).toBeTruthy();
  return { user, a, b };
}

const grantsOf = (userId: string) => porta.services.db.prisma.oidcPayload.count({ where: { model: "Grant", accountId: userId } });

describe("two sign-ins of one user at one client", () => {
  it("hold a grant each: the Admin API lists two sessions", async () => {
    const { user, a, b } = await twoDevices();
    expect(await grantsOf(user.id)).toBe(2);
    const sessions = await api.get<Page<{ id: string; clientId: string }>>(`/sessions?userId=${user.id}`);
    expect(sessions.body.total).toBe(2);
    expect(sessions.body.data.map((s) => s.clientId)).toEqual([tenant.clientId, tenant.clientId]);
    expect(new Set(sessions.body.data.map((s) => s.id)).size).toBe(2);
    expect(await userinfoStatus(tenant, a.accessToken)).toBe(200);
    expect(await userinfoStatus(tenant, b.accessToken)).toBe(200);
  });

  it("revoking one device's refresh token (RFC 7009) ends that sign-in only", async () => {
    const { a, b } = await twoDevices();
    await oidc.tokenRevocation(a.config, a.refreshToken!, { token_type_hint: "refresh_token" });

    expect(await refreshError(a)).toBe("invalid_grant");
    expect(await userinfoStatus(tenant, a.accessToken)).toBe(401);

    expect(await userinfoStatus(tenant, b.accessToken)).toBe(200);
    expect(await refreshError(b)).toBeNull();
    expect(await userinfoStatus(tenant, b.accessToken)).toBe(200);
  });

  it("revoking one device's access token ends that sign-in's tokens only", async () => {
    const { a, b } = await twoDevices();
    await oidc.tokenRevocation(a.config, a.accessToken, { token_type_hint: "access_token" });
    expect(await userinfoStatus(tenant, a.accessToken)).toBe(401);
    expect(await refreshError(a)).toBe("invalid_grant");
    expect(await userinfoStatus(tenant, b.accessToken)).toBe(200);
    expect(await refreshError(b)).toBeNull();
  });

  it("the Admin API's revoke-all ends both", async () => {
    const { user, a, b } = await twoDevices();
    expect((await api.delete(`/users/${user.id}/sessions`)).status).toBe(204);
    for (const device of [a, b]) {
      expect(await refreshError(device)).toBe("invalid_grant");
      expect(await userinfoStatus(tenant, device.accessToken)).toBe(401);
    }
    expect(await grantsOf(user.id)).toBe(0);
  });

  it("the Admin API revokes one session and leaves the other", async () => {
    const { user, a, b } = await twoDevices();
    const sessions = await api.get<Page<{ id: string }>>(`/sessions?userId=${user.id}`);
    // Newest first: the second device's sign-in.
    expect((await api.delete(`/sessions/${sessions.body.data[0]!.id}`)).status).toBe(204);
    expect(await refreshError(b)).toBe("invalid_grant");
    expect(await refreshError(a)).toBeNull();
    expect(await userinfoStatus(tenant, a.accessToken)).toBe(200);
  });
});

describe("consent", () => {
  it("is asked once per account and client: a second device is not asked again, and only for what is new", async () => {
    const user = await newUser();
    const first = await signInOnDevice(user.email, "openid email");
    expect(first.consentAsked).toEqual(["email", "openid"]);

    const second = await signInOnDevice(user.email, "openid email");
    expect(second.consentAsked).toBeNull();
    expect(await userinfoStatus(tenant, second.accessToken)).toBe(200);

    // A third device asks for more: the page asks for that only.
    const third = await signInOnDevice(user.email, "openid email profile");
    expect(third.consentAsked).toEqual(["profile"]);
    // And what any device was given is remembered for the next one.
    const fourth = await signInOnDevice(user.email, "openid profile");
    expect(fourth.consentAsked).toBeNull();

    // Four sign-ins, four grants: the consent is copied, never shared.
    expect(await grantsOf(user.id)).toBe(4);
  });
});

describe("RP-initiated logout", () => {
  it("signing out in one browser ends that browser's sign-in, not the other device's", async () => {
    // Online sign-ins: their tokens end with the sign-in (offline_access ones outlive a logout).
    const user = await newUser();
    const a = await signInOnDevice(user.email, "openid email");
    const b = await signInOnDevice(user.email, "openid email");
    const page = await a.browser.get(oidc.buildEndSessionUrl(a.config, { id_token_hint: a.idToken! }).href);
    expect(page.status).toBe(200);
    const form = /<form id="op\.logoutForm" method="post" action="([^"]+)">(.*?)<\/form>/s.exec(await page.text())!;
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(form[2]!)![1]!;
    const confirmed = await a.browser.post(form[1]!.replace(/&amp;/g, "&"), { xsrf, logout: "yes" });
    expect(confirmed.status).toBe(303);

    expect(await userinfoStatus(tenant, a.accessToken)).toBe(401);
    expect(await userinfoStatus(tenant, b.accessToken)).toBe(200);
  });
});
