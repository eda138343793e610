import { solveChallenge } from "altcha-lib/v1";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BOT_CHALLENGE_SCRIPT_PATH, BotChallengeSchema, type BotChallenge } from "~/schemas/bot-challenge";
import { DEVICE_CODE_GRANT } from "~/schemas/client";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createClient, createOrganization } from "../support/factories";
import { clientConfiguration, CookieJar, issuerOf, postForm, type OrgRef } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

/**
 * The organization's bot protection on the device-code entry page (RFC 8628; decisions 049 and
 * 091): the page the provider renders carries the proof-of-work challenge when the policy asks
 * for one, and a posted code without a valid, unused solution never reaches the provider.
 */
let porta: TestPorta;
beforeAll(async () => {
  porta = await startTestPorta();
});
afterAll(async () => {
  await porta?.stop();
});

const prisma = () => porta.services.db.prisma;
let addressCount = 0;
const newAddress = () => `203.0.113.${++addressCount}`;

interface DeviceTenant {
  org: OrgRef;
  config: oidc.Configuration;
  clientId: string;
}

async function tenantWith(policy: "off" | "suspicion" | "always"): Promise<DeviceTenant> {
  const org = await createOrganization(prisma(), { name: "Acme Devices" });
  await prisma().organization.update({ where: { id: org.id }, data: { botChallenge: policy, botChallengeCost: 5_000 } });
  const created = await createClient(prisma(), org.id, { confidential: false, grantTypes: [DEVICE_CODE_GRANT], redirectUris: [], scope: "openid" });
  return { org, clientId: created.client.id, config: await clientConfiguration(porta, org, created.client) };
}

const html = async (response: Response) => ({ status: response.status, text: await response.text() });
const attr = (text: string, pattern: RegExp) => pattern.exec(text)?.[1]?.replace(/&amp;/g, "&");

function challengeOf(text: string): BotChallenge | null {
  const match = /<input[^>]*name="altcha"[^>]*data-challenge="([^"]*)"/.exec(text);
  if (!match) return null;
  return BotChallengeSchema.parse(JSON.parse(match[1]!.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&")));
}

async function solve(challenge: BotChallenge): Promise<string> {
  const solution = await solveChallenge(challenge.challenge, challenge.salt, challenge.algorithm, challenge.maxnumber).promise;
  if (!solution) throw new Error("the challenge has no solution");
  return Buffer.from(JSON.stringify({ algorithm: challenge.algorithm, challenge: challenge.challenge, number: solution.number, salt: challenge.salt, signature: challenge.signature, took: solution.took })).toString("base64");
}

/** A person's browser at the code entry page, from one address. */
async function openPage(tenant: DeviceTenant, ip = newAddress(), language = "en") {
  const jar = new CookieJar();
  const headers = { "accept-language": language, "x-forwarded-for": ip };
  const page = await html(await jar.fetch(`${issuerOf(porta, tenant.org)}/device`, { headers }));
  const enter = (userCode: string, altcha?: string) =>
    jar.fetch(attr(page.text, /<form id="op\.deviceInputForm" method="post" action="([^"]+)"/)!, {
      method: "POST",
      headers: { ...headers, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ xsrf: attr(page.text, /name="xsrf" value="([^"]+)"/)!, user_code: userCode, ...(altcha === undefined ? {} : { altcha }) }),
    });
  return { jar, page, enter };
}

async function pollOnce(tenant: DeviceTenant, deviceCode: string) {
  return postForm(tenant.config.serverMetadata().token_endpoint!, { grant_type: DEVICE_CODE_GRANT, device_code: deviceCode, client_id: tenant.clientId });
}

const refusals = (tenant: DeviceTenant) =>
  prisma().auditEntry.findMany({ where: { organizationId: tenant.org.id, eventType: "auth.challenge_failed" }, select: { data: true, ip: true } });

async function metric(result: string): Promise<number> {
  const body = (await porta.services.metrics.render()).body;
  const line = body.split("\n").find((l) => l.startsWith(`porta_bot_challenges_total{form="device",result="${result}"}`));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

describe("device-code entry with the policy always", () => {
  it("shows the challenge with its solver, and refuses a code posted without a solution (403, the device still pending)", async () => {
    const tenant = await tenantWith("always");
    const started = await oidc.initiateDeviceAuthorization(tenant.config, { scope: "openid" });
    const ip = newAddress();
    const browser = await openPage(tenant, ip);
    expect(browser.page.status).toBe(200);
    expect(challengeOf(browser.page.text)).not.toBeNull();
    expect(browser.page.text).toContain(`<script src="${BOT_CHALLENGE_SCRIPT_PATH}" defer></script>`);
    expect(browser.page.text).toContain("<noscript><p>This page needs JavaScript to check that a person");
    expect(browser.page.text).toContain('data-checking="Checking that a person is using this browser…"');

    const missingBefore = await metric("missing");
    const refused = await html(await browser.enter(started.user_code));
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('<p id="user-code-problem" class="error" role="alert">The form was sent without the browser check.');
    // The code as typed, to send again, and a fresh challenge.
    expect(refused.text).toContain(`value="${started.user_code}"`);
    expect(challengeOf(refused.text)).not.toBeNull();
    expect(challengeOf(refused.text)!.signature).not.toBe(challengeOf(browser.page.text)!.signature);
    expect((await pollOnce(tenant, started.device_code)).body.error).toBe("authorization_pending");
    expect(await refusals(tenant)).toEqual([{ data: { form: "device", reason: "missing" }, ip }]);
    expect(await metric("missing")).toBe(missingBefore + 1);
    // No code-entry point was spent on the refused post.
    expect(await prisma().rateLimiterFlexible.count({ where: { key: { contains: `${tenant.org.id}:${ip}` } } })).toBe(0);
  });

  it("says it in the person's language", async () => {
    const tenant = await tenantWith("always");
    const browser = await openPage(tenant, newAddress(), "de");
    expect(browser.page.text).toContain('<html lang="de"');
    expect(browser.page.text).not.toContain("Checking that a person");
    const refused = await html(await browser.enter("BCDF-GHJK", "bm90IGEgc29sdXRpb24="));
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('<html lang="de"');
    expect((await refusals(tenant)).map((entry) => entry.data)).toEqual([{ form: "device", reason: "invalid" }]);
  });

  it("takes a code with a solution on to the confirmation and the sign-in, and refuses the same solution again", async () => {
    const tenant = await tenantWith("always");
    const started = await oidc.initiateDeviceAuthorization(tenant.config, { scope: "openid" });
    const browser = await openPage(tenant);
    const solution = await solve(challengeOf(browser.page.text)!);
    const confirmation = await html(await browser.enter(started.user_code, solution));
    expect(confirmation.status).toBe(200);
    expect(confirmation.text).toContain("Sign in on this device?");
    expect(challengeOf(confirmation.text)).toBeNull();
    // The confirmation's post is not asked for a proof again: it goes on to the sign-in.
    const action = attr(confirmation.text, /<form id="op\.deviceConfirmForm" method="post" action="([^"]+)"/)!;
    const fields = Object.fromEntries([...confirmation.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/?>/g)].map((m) => [m[1]!, m[2]!.replace(/&amp;/g, "&")]));
    const confirmed = await browser.jar.fetch(action, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields) });
    expect(confirmed.status).toBe(303);
    expect(new URL(confirmed.headers.get("location")!, porta.baseUrl).pathname).toMatch(/^\/interaction\//);

    // Another browser posts the captured solution with another device's code.
    const other = await oidc.initiateDeviceAuthorization(tenant.config, { scope: "openid" });
    const replay = await html(await (await openPage(tenant)).enter(other.user_code, solution));
    expect(replay.status).toBe(403);
    expect(replay.text).toContain("role=\"alert\"");
    expect((await pollOnce(tenant, other.device_code)).body.error).toBe("authorization_pending");
    expect((await refusals(tenant)).map((entry) => entry.data)).toEqual([{ form: "device", reason: "replayed" }]);
  }, 30_000);

  it("says a wrong code that came with a solution is wrong, counts the entry, and shows a fresh challenge", async () => {
    const tenant = await tenantWith("always");
    const ip = newAddress();
    const browser = await openPage(tenant, ip);
    const first = challengeOf(browser.page.text)!;
    const wrong = await html(await browser.enter("BCDF-GHJK", await solve(first)));
    expect(wrong.status).toBe(200);
    expect(wrong.text).toContain("That code is not valid.");
    expect(challengeOf(wrong.text)!.signature).not.toBe(first.signature);
    expect(await prisma().rateLimiterFlexible.count({ where: { key: { contains: `${tenant.org.id}:${ip}` } } })).toBe(1);
    expect(await refusals(tenant)).toEqual([]);
  });

  it("serves the solver as a same-origin script", async () => {
    const script = await fetch(`${porta.baseUrl}${BOT_CHALLENGE_SCRIPT_PATH}`);
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toMatch(/^text\/javascript/);
    const text = await script.text();
    expect(text).toContain("crypto.subtle.digest");
    expect(() => new Function(text)).not.toThrow();
  });
});

describe("device-code entry with the policy suspicion", () => {
  it("asks for a proof once the address has entered 3 codes at the organization, and not before", async () => {
    const tenant = await tenantWith("suspicion");
    const ip = newAddress();
    for (let i = 0; i < 3; i++) {
      const browser = await openPage(tenant, ip);
      expect(challengeOf(browser.page.text)).toBeNull();
      expect((await html(await browser.enter("BCDF-GHJK"))).text).toContain("That code is not valid.");
    }
    const suspected = await openPage(tenant, ip);
    expect(challengeOf(suspected.page.text)).not.toBeNull();
    expect((await html(await suspected.enter("BCDF-GHJK"))).status).toBe(403);
    // Another address is not suspected.
    expect(challengeOf((await openPage(tenant)).page.text)).toBeNull();
  });
});

describe("device-code entry with the policy off", () => {
  it("shows the page without a challenge or a script, and takes the code as before", async () => {
    const tenant = await tenantWith("off");
    const started = await oidc.initiateDeviceAuthorization(tenant.config, { scope: "openid" });
    const browser = await openPage(tenant);
    expect(browser.page.status).toBe(200);
    expect(browser.page.text).not.toContain('name="altcha"');
    expect(browser.page.text).not.toContain("<script");
    expect(browser.page.text).not.toContain("<noscript");
    const confirmation = await html(await browser.enter(started.user_code));
    expect(confirmation.status).toBe(200);
    expect(confirmation.text).toContain("Sign in on this device?");
    expect(await refusals(tenant)).toEqual([]);
  });

  it("carries the challenge once the policy is turned on through the Admin API (the organization's provider is rebuilt)", async () => {
    const tenant = await tenantWith("off");
    expect(challengeOf((await openPage(tenant)).page.text)).toBeNull();
    const api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
    expect((await api.put(`/organizations/${tenant.org.id}`, { botChallenge: "always" })).status).toBe(200);
    expect(challengeOf((await openPage(tenant)).page.text)).not.toBeNull();
  });
});
