import { solveChallenge } from "altcha-lib/v1";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SUSPICION_FAILURES } from "~/.server/sign-in/bot-challenge";
import { BotChallengeSchema, type BotChallenge } from "~/schemas/bot-challenge";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { csrfOf, TestBrowser } from "../support/browser";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { expect422 } from "../admin/helpers";
import { auditDuring, createTenant, followToCallback, mainOf, message, openLoginPage, PASSWORD, submitPassword, type LoginPage, type Tenant } from "../login/helpers";

/**
 * Bot protection on the sign-in forms (decision 091), over HTTP as a browser meets it: the
 * organization's policy decides whether a form carries a proof-of-work challenge, and a post
 * that needs one and lacks a valid, unused solution is refused before anything else is done.
 */
let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
});
afterAll(async () => {
  await porta?.stop();
});

const WRONG = "a wrong password 9";
const prisma = () => porta.services.db.prisma;
let addressCount = 0;
const newAddress = () => `198.51.100.${++addressCount}`;
const from = (ip: string) => ({ "x-forwarded-for": ip });

async function tenantWith(policy: "off" | "suspicion" | "always"): Promise<Tenant> {
  const tenant = await createTenant(porta);
  await prisma().organization.update({ where: { id: tenant.org.id }, data: { botChallenge: policy, botChallengeCost: 5_000 } });
  return tenant;
}

/** The challenge a form carries, as its hidden field states it; null when there is none. */
function challengeOf(html: string): BotChallenge | null {
  const match = /<input[^>]*name="altcha"[^>]*data-challenge="([^"]*)"/.exec(mainOf(html));
  if (!match) return null;
  const json = match[1]!.replace(/&quot;/g, '"').replace(/&amp;/g, "&").replace(/&#x27;/g, "'");
  return BotChallengeSchema.parse(JSON.parse(json));
}

/** Solves a challenge as a browser does, and returns ALTCHA's payload for the `altcha` field. */
async function solve(challenge: BotChallenge): Promise<string> {
  const solution = await solveChallenge(challenge.challenge, challenge.salt, challenge.algorithm, challenge.maxnumber).promise;
  if (!solution) throw new Error("the challenge has no solution");
  return Buffer.from(JSON.stringify({ algorithm: challenge.algorithm, challenge: challenge.challenge, number: solution.number, salt: challenge.salt, signature: challenge.signature, took: solution.took })).toString("base64");
}

function postPassword(page: LoginPage, email: string, password: string, altcha?: string, headers: Record<string, string> = {}) {
  return page.browser.post(page.interactionUrl, { csrf: csrfOf(page.html), email, password, ...(altcha === undefined ? {} : { altcha }) }, headers);
}

const failuresOf = (tenant: Tenant, email: string) => prisma().auditEntry.count({ where: { organizationId: tenant.org.id, eventType: "auth.login.failure", data: { path: ["email"], equals: email } } });
const counters = (key: string) => prisma().rateLimiterFlexible.count({ where: { key: { contains: key } } });

async function metric(form: string, result: string): Promise<number> {
  const body = (await porta.services.metrics.render()).body;
  const line = body.split("\n").find((l) => l.startsWith(`porta_bot_challenges_total{form="${form}",result="${result}"}`));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

describe("policy off", () => {
  it("shows the forms without a challenge field and signs in as before", async () => {
    const tenant = await tenantWith("off");
    const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    const page = await openLoginPage(tenant);
    expect(page.res.status).toBe(200);
    expect(mainOf(page.html)).not.toContain('name="altcha"');
    expect(mainOf(page.html)).not.toContain(message("en", (m) => m.botChallenge.noScript));
    expect(page.html).not.toContain('<script src="/bot-challenge.js"');
    const posted = await submitPassword(page, user.email, PASSWORD);
    expect([302, 303]).toContain(posted.status);
    const forgot = await page.browser.get(`${new URL(page.interactionUrl).origin}/interaction/${page.uid}/forgot-password`);
    expect(mainOf(await forgot.text())).not.toContain('name="altcha"');
  });
});

describe("policy always", () => {
  it("puts a challenge on the form and says what to do without JavaScript", async () => {
    const tenant = await tenantWith("always");
    const page = await openLoginPage(tenant);
    expect(challengeOf(page.html)).not.toBeNull();
    expect(mainOf(page.html)).toContain(`<noscript>`);
    expect(page.html).toContain(message("en", (m) => m.botChallenge.noScript));
    // The solver is read with the form, before the page's bundle: a form sent before the page
    // hydrates is held until the answer is found, not sent without it.
    const main = mainOf(page.html);
    expect(main).toMatch(/<script src="\/bot-challenge\.js"><\/script>/);
    expect(main.indexOf('<script src="/bot-challenge.js">')).toBeGreaterThan(main.indexOf('name="altcha"'));
  });

  it("refuses a post without a solution before the password is looked at: 403, the message, audited, nothing counted", async () => {
    const tenant = await tenantWith("always");
    const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    const ip = newAddress();
    const before = await metric("password", "missing");
    for (const password of [WRONG, PASSWORD]) {
      const page = await openLoginPage(tenant, { headers: from(ip) });
      const { result: res, entries } = await auditDuring(porta, { organizationId: tenant.org.id, eventType: "auth.challenge_failed" }, () => postPassword(page, user.email, password, undefined, from(ip)));
      expect(res.status).toBe(403);
      const html = await res.text();
      expect(mainOf(html)).toContain(message("en", (m) => m.botChallenge.refused.missing));
      // The form comes back with a fresh challenge.
      expect(challengeOf(html)).not.toBeNull();
      expect(entries).toHaveLength(1);
      expect(entries[0]!.data).toEqual({ form: "password", reason: "missing" });
      expect(entries[0]!.ip).toBe(ip);
      expect(entries[0]!.requestId).toBeTruthy();
    }
    // Neither the wrong password nor the right one was tried: no failure, no sign-in, no counter.
    expect(await failuresOf(tenant, user.email)).toBe(0);
    expect(await prisma().auditEntry.count({ where: { organizationId: tenant.org.id, eventType: "auth.login.success" } })).toBe(0);
    expect(await counters(ip)).toBe(0);
    expect(await metric("password", "missing")).toBe(before + 2);
  });

  it("signs in with a solved challenge, and refuses the same solution a second time", async () => {
    const tenant = await tenantWith("always");
    const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    const page = await openLoginPage(tenant);
    const solution = await solve(challengeOf(page.html)!);
    const posted = await postPassword(page, user.email, PASSWORD, solution);
    expect([302, 303], await posted.clone().text().then(mainOf).catch(() => "")).toContain(posted.status);
    await followToCallback(page.browser, posted, page.interactionUrl, tenant.redirectUri);
    expect(await prisma().auditEntry.count({ where: { organizationId: tenant.org.id, eventType: "auth.login.success", targetId: user.id } })).toBe(1);

    const again = await openLoginPage(tenant, { extra: { prompt: "login" } });
    const { result: replayed, entries } = await auditDuring(porta, { organizationId: tenant.org.id, eventType: "auth.challenge_failed" }, () => postPassword(again, user.email, PASSWORD, solution));
    expect(replayed.status).toBe(403);
    expect(mainOf(await replayed.text())).toContain(message("en", (m) => m.botChallenge.refused.replayed));
    expect(entries.map((e) => e.data)).toEqual([{ form: "password", reason: "replayed" }]);
  });

  it("counts a wrong password that came with a solution, and shows the form again with a fresh challenge", async () => {
    const tenant = await tenantWith("always");
    const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    const page = await openLoginPage(tenant);
    const first = challengeOf(page.html)!;
    const failed = await postPassword(page, user.email, WRONG, await solve(first));
    expect(failed.status).toBe(401);
    const html = await failed.text();
    expect(mainOf(html)).toContain(message("en", (m) => m.signIn.failed));
    const next = challengeOf(html);
    expect(next).not.toBeNull();
    expect(next!.signature).not.toBe(first.signature);
    expect(await failuresOf(tenant, user.email)).toBe(1);
    const posted = await page.browser.post(page.interactionUrl, { csrf: csrfOf(html), email: user.email, password: PASSWORD, altcha: await solve(next!) });
    expect([302, 303]).toContain(posted.status);
  });

  it("refuses a tampered solution and hostile field values with the form shown again", async () => {
    const tenant = await tenantWith("always");
    const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    const page = await openLoginPage(tenant);
    const challenge = challengeOf(page.html)!;
    const good = JSON.parse(Buffer.from(await solve(challenge), "base64").toString()) as Record<string, unknown>;
    const tampered = Buffer.from(JSON.stringify({ ...good, number: ((good.number as number) + 1) % challenge.maxnumber })).toString("base64");
    for (const altcha of [tampered, "%%%", "A".repeat(100_000), Buffer.from("{}\u0000").toString("base64"), Buffer.from("[]").toString("base64")]) {
      const res = await postPassword(page, user.email, PASSWORD, altcha);
      // A 100 kB field is the edge guard's or the form reader's to refuse; anything that reaches the check is a 403.
      expect([400, 403, 413]).toContain(res.status);
      if (res.status === 403) expect(mainOf(await res.text())).toContain(message("en", (m) => m.botChallenge.refused.invalid));
    }
    expect(await failuresOf(tenant, user.email)).toBe(0);
  });

  it("guards the magic-link request: no mail without a solution, sent with one", async () => {
    const tenant = await tenantWith("always");
    const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    const page = await openLoginPage(tenant);
    const url = `${page.interactionUrl}/magic-link`;
    const sent = () => prisma().auditEntry.count({ where: { organizationId: tenant.org.id, eventType: "auth.magic_link.sent" } });
    const refused = await page.browser.post(url, { csrf: csrfOf(page.html), email: user.email });
    expect(refused.status).toBe(403);
    const html = await refused.text();
    expect(mainOf(html)).toContain(message("en", (m) => m.botChallenge.refused.missing));
    expect(await sent()).toBe(0);
    const ok = await page.browser.post(url, { csrf: csrfOf(html), email: user.email, altcha: await solve(challengeOf(html)!) });
    expect(ok.status).toBe(200);
    expect(mainOf(await ok.text())).toContain(message("en", (m) => m.magicLink.sent, { email: user.email }));
    await expect.poll(sent, { timeout: 20_000 }).toBe(1);
  });

  it("guards the password-reset request the same way", async () => {
    const tenant = await tenantWith("always");
    const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    const page = await openLoginPage(tenant);
    const url = `${page.interactionUrl}/forgot-password`;
    const form = await page.browser.get(url);
    const formHtml = await form.text();
    const challenge = challengeOf(formHtml);
    expect(challenge).not.toBeNull();
    const requested = () => prisma().auditEntry.count({ where: { organizationId: tenant.org.id, eventType: "auth.password_reset.requested" } });
    const refused = await page.browser.post(url, { csrf: csrfOf(formHtml), email: user.email });
    expect(refused.status).toBe(403);
    expect(mainOf(await refused.text())).toContain(message("en", (m) => m.botChallenge.refused.missing));
    expect(await requested()).toBe(0);
    const ok = await page.browser.post(url, { csrf: csrfOf(formHtml), email: user.email, altcha: await solve(challenge!) });
    expect(ok.status).toBe(200);
    await expect.poll(requested, { timeout: 20_000 }).toBe(1);
  });
});

describe("policy suspicion", () => {
  it(`asks for a proof once an address has ${SUSPICION_FAILURES} wrong passwords, and not before`, async () => {
    const tenant = await tenantWith("suspicion");
    const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    const ip = newAddress();
    const browser = new TestBrowser(from(ip));
    for (let i = 0; i < SUSPICION_FAILURES; i++) {
      const page = await openLoginPage(tenant, { browser, extra: { prompt: "login" } });
      expect(challengeOf(page.html), `attempt ${i + 1}`).toBeNull();
      expect((await postPassword(page, `nobody-${i}@example.com`, WRONG, undefined, from(ip))).status).toBe(401);
    }
    const page = await openLoginPage(tenant, { browser, extra: { prompt: "login" } });
    expect(challengeOf(page.html)).not.toBeNull();
    expect((await postPassword(page, user.email, PASSWORD, undefined, from(ip))).status).toBe(403);
    // Another address is not suspected.
    const other = await openLoginPage(tenant, { headers: from(newAddress()) });
    expect(challengeOf(other.html)).toBeNull();
  });

  it("asks for a proof for an account that had the failures, from any address", async () => {
    const tenant = await tenantWith("suspicion");
    const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    for (let i = 0; i < SUSPICION_FAILURES; i++) {
      const ip = newAddress();
      const page = await openLoginPage(tenant, { headers: from(ip) });
      expect((await postPassword(page, user.email, WRONG, undefined, from(ip))).status).toBe(401);
    }
    const ip = newAddress();
    const page = await openLoginPage(tenant, { headers: from(ip) });
    // The page cannot know the account yet: the post is refused and comes back with a challenge.
    expect(challengeOf(page.html)).toBeNull();
    const refused = await postPassword(page, user.email, PASSWORD, undefined, from(ip));
    expect(refused.status).toBe(403);
    const html = await refused.text();
    const posted = await page.browser.post(page.interactionUrl, { csrf: csrfOf(html), email: user.email, password: PASSWORD, altcha: await solve(challengeOf(html)!) }, from(ip));
    expect([302, 303]).toContain(posted.status);
  });
});

describe("Admin API", () => {
  it("reads and updates the policy, and answers 422 with the field for bad values", async () => {
    const tenant = await createTenant(porta);
    const read = await api.get<{ botChallenge: string; botChallengeCost: number }>(`/organizations/${tenant.org.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ botChallenge: "off", botChallengeCost: 50_000 });
    const updated = await api.put<{ botChallenge: string; botChallengeCost: number }>(`/organizations/${tenant.org.id}`, { botChallenge: "suspicion", botChallengeCost: 100_000 });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ botChallenge: "suspicion", botChallengeCost: 100_000 });
    expect422(await api.put(`/organizations/${tenant.org.id}`, { botChallenge: "sometimes" }), "botChallenge");
    for (const cost of [999, 1_000_001, 1.5, "50000", null]) expect422(await api.put(`/organizations/${tenant.org.id}`, { botChallengeCost: cost }), "botChallengeCost", String(cost));
    // Nothing written by the refused ones.
    expect((await api.get<{ botChallenge: string; botChallengeCost: number }>(`/organizations/${tenant.org.id}`)).body).toMatchObject({ botChallenge: "suspicion", botChallengeCost: 100_000 });
  });
});
