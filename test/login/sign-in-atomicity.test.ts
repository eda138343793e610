import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { systemActor } from "~/.server/auth/actors";
import { inviteUser } from "~/.server/auth/invitations";
import { inTransaction } from "~/.server/context";
import { csrfOf, TestBrowser } from "../support/browser";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { jobRows } from "../email/helpers";
import {
  auditEntries,
  createTenant,
  createUserInState,
  openLoginPage,
  openRecovery,
  PASSWORD,
  signInWithPassword,
  submitCode,
  type Step,
  type Tenant,
} from "../two-factor/helpers";

/**
 * The login pages' writes commit with their audit entries (and jobs) or not at all: a fault
 * injected between a step's writes and its audit entries (a test-only hook in context.ts) leaves
 * neither, and the same request without the fault then does everything once. Each case arms the
 * fault just before the one request whose transaction it must break.
 */
vi.setConfig({ testTimeout: 120_000, hookTimeout: 240_000 });

let failNext = false;
let porta: TestPorta;
let tenant: Tenant;

beforeAll(async () => {
  porta = await startTestPorta({
    queue: { retrySchedule: [1, 1, 1, 1, 1] },
    faults: {
      beforeAudit: () => {
        if (!failNext) return;
        failNext = false;
        throw new Error("injected fault between the sign-in's writes and its audit entries");
      },
    },
  });
  tenant = await createTenant(porta, "optional");
});
afterAll(async () => {
  await porta?.stop();
});

const prisma = () => porta.services.db.prisma;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const count = (eventType: string, targetId: string) => prisma().auditEntry.count({ where: { eventType, targetId } });
const account = (id: string) => prisma().user.findUniqueOrThrow({ where: { id }, select: { lastLoginAt: true, failedLoginCount: true, passwordHash: true } });

async function until<T>(read: () => Promise<T>, accept: (value: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 150; i++) {
    const value = await read();
    if (accept(value)) return value;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

function postPassword(page: { browser: TestBrowser; interactionUrl: string; html: string }, email: string, password: string) {
  return page.browser.post(page.interactionUrl, { csrf: csrfOf(page.html), email, password });
}

describe("a password sign-in", () => {
  it("writes lastLoginAt, the reset of the failure count and auth.login.success together", async () => {
    const user = await createUserInState(porta, tenant, "none");
    await prisma().user.update({ where: { id: user.id }, data: { failedLoginCount: 2 } });
    const page = await openLoginPage(tenant);

    failNext = true;
    porta.logs.expectError("injected fault between");
    const broken = await postPassword(page, user.email, PASSWORD);
    expect(broken.status).toBe(500);
    expect(await account(user.id)).toMatchObject({ lastLoginAt: null, failedLoginCount: 2 });
    expect(await count("auth.login.success", user.id)).toBe(0);

    const signedIn = await postPassword(page, user.email, PASSWORD);
    expect(signedIn.status).toBe(302);
    expect(await account(user.id)).toMatchObject({ lastLoginAt: expect.any(Date), failedLoginCount: 0 });
    expect(await count("auth.login.success", user.id)).toBe(1);
  });

  it("that fails writes the failure count and auth.login.failure together", async () => {
    const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    const page = await openLoginPage(tenant);
    const failures = () => prisma().auditEntry.count({ where: { eventType: "auth.login.failure", organizationId: tenant.org.id, data: { path: ["email"], equals: user.email } } });

    failNext = true;
    porta.logs.expectError("injected fault between");
    expect((await postPassword(page, user.email, "a wrong password 9")).status).toBe(500);
    expect((await account(user.id)).failedLoginCount).toBe(0);
    expect(await failures()).toBe(0);

    expect((await postPassword(page, user.email, "a wrong password 9")).status).toBe(401);
    expect((await account(user.id)).failedLoginCount).toBe(1);
    expect(await failures()).toBe(1);
  });
});

describe("a second factor", () => {
  it("is used up together with auth.2fa.verified and the sign-in: after a fault the same recovery code still works", async () => {
    const user = await createUserInState(porta, tenant, "totp");
    const page = await openLoginPage(tenant);
    const factor = await signInWithPassword(page, user.email);
    expect(factor.kind).toBe("totp");
    const recovery = (await openRecovery(page.browser, factor)) as Step & { html: string };
    expect(recovery.kind).toBe("recovery");
    const code = user.recoveryCodes![0]!;

    failNext = true;
    porta.logs.expectError("injected fault between");
    const broken = await submitCode(page.browser, recovery, code);
    expect(broken.res.status).toBe(500);
    expect(await prisma().recoveryCode.count({ where: { userId: user.id, usedAt: null } })).toBe(10);
    expect(await count("auth.2fa.verified", user.id)).toBe(0);
    expect(await count("auth.login.success", user.id)).toBe(0);
    expect((await account(user.id)).lastLoginAt).toBeNull();

    const done = await submitCode(page.browser, recovery, code);
    expect(done.res.status).toBe(302);
    expect(await prisma().recoveryCode.count({ where: { userId: user.id, usedAt: null } })).toBe(9);
    expect(await count("auth.2fa.verified", user.id)).toBe(1);
    const [success] = await auditEntries(porta, { eventType: "auth.login.success", targetId: user.id });
    expect(success?.data).toMatchObject({ method: "password", secondFactor: "recovery" });
    expect((await account(user.id)).lastLoginAt).not.toBeNull();
  });
});

describe("a magic link", () => {
  it("is minted with its auth.magic_link.sent entry, once per job, and consumed together with auth.magic_link.verified and the sign-in", async () => {
    const user = await createUser(prisma(), tenant.org.id, { password: null });
    const page = await openLoginPage(tenant);

    // The job's first attempt fails between the token row and its entry: neither stays, and the retry makes both, once.
    // (A job attempt that fails is retried, and logged as a warning, not an error.)
    failNext = true;
    expect((await page.browser.post(`${page.interactionUrl}/magic-link`, { csrf: csrfOf(page.html), email: user.email })).status).toBe(200);
    const row = await until(() => prisma().magicLinkToken.findFirst({ where: { userId: user.id } }), (r) => r !== null, "the magic link's token row");
    const [job] = (await jobRows(porta, "magic-link")).filter((j) => j.id === row!.jobId);
    expect(job!.retry_count).toBeGreaterThanOrEqual(1);
    expect(await prisma().magicLinkToken.count({ where: { userId: user.id } })).toBe(1);
    expect(await count("auth.magic_link.sent", user.id)).toBe(1);

    const link = `${porta.baseUrl}/interaction/${page.uid}/magic-link/verify?org=${tenant.org.slug}&token=${porta.services.tokens.derive("magic-link", row!.jobId)}`;
    const use = async () => {
      const opened = await page.browser.get(link);
      const html = await opened.text();
      const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)![1]!;
      return page.browser.post(link, { csrf: field("csrf"), token: field("token"), org: field("org") });
    };

    failNext = true;
    porta.logs.expectError("injected fault between");
    expect((await use()).status).toBe(500);
    expect((await prisma().magicLinkToken.findUniqueOrThrow({ where: { id: row!.id } })).consumedAt).toBeNull();
    expect(await count("auth.magic_link.verified", user.id)).toBe(0);
    expect(await count("auth.login.success", user.id)).toBe(0);
    expect((await account(user.id)).lastLoginAt).toBeNull();

    expect((await use()).status).toBe(302);
    expect((await prisma().magicLinkToken.findUniqueOrThrow({ where: { id: row!.id } })).consumedAt).not.toBeNull();
    expect(await count("auth.magic_link.verified", user.id)).toBe(1);
    expect(await count("auth.login.success", user.id)).toBe(1);
    expect((await account(user.id)).lastLoginAt).not.toBeNull();
  });
});

describe("a password reset", () => {
  it("is requested with its audit entry and its job together", async () => {
    const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    const page = await openLoginPage(tenant);
    const form = await page.browser.get(`${page.interactionUrl}/forgot-password`);
    const csrf = csrfOf(await form.text());
    const requested = () =>
      prisma().auditEntry.count({ where: { eventType: "auth.password_reset.requested", organizationId: tenant.org.id, data: { path: ["email"], equals: user.email } } });
    const jobsFor = async () => (await jobRows(porta, "password-reset")).filter((j) => j.data.email === user.email).length;

    failNext = true;
    porta.logs.expectError("injected fault between");
    expect((await page.browser.post(`${page.interactionUrl}/forgot-password`, { csrf, email: user.email })).status).toBe(500);
    expect(await requested()).toBe(0);
    expect(await jobsFor()).toBe(0);
    expect(await prisma().jobOutbox.count({ where: { queue: "password-reset", payload: { path: ["email"], equals: user.email } } })).toBe(0);

    expect((await page.browser.post(`${page.interactionUrl}/forgot-password`, { csrf, email: user.email })).status).toBe(200);
    expect(await requested()).toBe(1);
    expect(await jobsFor()).toBe(1);
  });

  it("sets the password, uses the link up and records auth.password_reset.completed together", async () => {
    const user = await createUser(prisma(), tenant.org.id, { password: PASSWORD });
    const before = (await account(user.id)).passwordHash;
    const page = await openLoginPage(tenant);
    const form = await page.browser.get(`${page.interactionUrl}/forgot-password`);
    expect((await page.browser.post(`${page.interactionUrl}/forgot-password`, { csrf: csrfOf(await form.text()), email: user.email })).status).toBe(200);
    const row = await until(() => prisma().passwordResetToken.findFirst({ where: { userId: user.id } }), (r) => r !== null, "the reset token row");
    const link = `${porta.baseUrl}/${tenant.org.slug}/reset-password?token=${porta.services.tokens.derive("password-reset", row!.jobId)}`;
    const opened = await page.browser.get(link);
    expect(opened.status).toBe(200);
    const fields = { csrf: csrfOf(await opened.text()), token: porta.services.tokens.derive("password-reset", row!.jobId), password: "a brand new passphrase 7" };

    failNext = true;
    porta.logs.expectError("injected fault between");
    expect((await page.browser.post(link, fields)).status).toBe(500);
    expect((await prisma().passwordResetToken.findUniqueOrThrow({ where: { id: row!.id } })).consumedAt).toBeNull();
    expect((await account(user.id)).passwordHash).toBe(before);
    expect(await count("auth.password_reset.completed", user.id)).toBe(0);

    const done = await page.browser.post(link, fields);
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe(`/interaction/${page.uid}?reset=done&org=${tenant.org.slug}&lang=en&client=${tenant.client.id}`);
    expect((await prisma().passwordResetToken.findUniqueOrThrow({ where: { id: row!.id } })).consumedAt).not.toBeNull();
    expect((await account(user.id)).passwordHash).not.toBe(before);
    expect(await count("auth.password_reset.completed", user.id)).toBe(1);
  });
});

describe("an invitation", () => {
  it("is accepted, the account created and user.invitation_accepted recorded together", async () => {
    const email = `invited-${Date.now()}@example.com`;
    const { invitationId } = await inTransaction(porta.services, systemActor(null), (ctx) => inviteUser(ctx, { organizationId: tenant.org.id, email }));
    const url = `${porta.baseUrl}/${tenant.org.slug}/invitation?token=${porta.services.tokens.derive("invitation", invitationId)}`;
    const browser = new TestBrowser();
    const opened = await browser.get(url);
    expect(opened.status).toBe(200);
    const fields = {
      csrf: csrfOf(await opened.text()),
      token: porta.services.tokens.derive("invitation", invitationId),
      givenName: "Ada",
      familyName: "Lovelace",
      password: "an invited person's passphrase 3",
    };
    const accepted = () => prisma().auditEntry.findMany({ where: { eventType: "user.invitation_accepted", data: { path: ["invitationId"], equals: invitationId } } });

    failNext = true;
    porta.logs.expectError("injected fault between");
    expect((await browser.post(url, fields)).status).toBe(500);
    expect(await prisma().user.count({ where: { organizationId: tenant.org.id, email } })).toBe(0);
    expect((await prisma().invitation.findUniqueOrThrow({ where: { id: invitationId } })).acceptedAt).toBeNull();
    expect(await accepted()).toEqual([]);

    const done = await browser.post(url, fields);
    expect(done.status).toBe(200);
    const user = await prisma().user.findFirstOrThrow({ where: { organizationId: tenant.org.id, email } });
    const [entry, ...others] = await accepted();
    expect(others).toEqual([]);
    expect(entry).toMatchObject({ actorType: "user", actorId: user.id, targetId: user.id });
  });
});
