import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { systemActor } from "~/.server/auth/actors";
import { setTwoFactorPolicy } from "~/.server/auth/two-factor/admin";
import { inTransaction } from "~/.server/context";
import { currentTotpCode } from "~/.server/auth/two-factor/totp";
import { DEFAULT_LIMITS } from "~/.server/rate-limit/limiters";
import { resources } from "~/i18n/config";
import { csrfOf } from "../support/browser";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { startSmtpSink, type SmtpSink } from "../support/smtp-sink";
import {
  auditEntries,
  choose,
  codeIn,
  completeSetup,
  createTenant,
  createUserInState,
  freshTotpCode,
  mainOf,
  openLoginPage,
  openRecovery,
  PASSWORD,
  readStep,
  redeem,
  signInWithPassword,
  submitCode,
  toCallback,
  uniqueEmail,
  waitForMail,
  type Policy,
  type Step,
  type Tenant,
  type TestUser,
} from "./helpers";

/**
 * The two-factor pages as a person uses them: recovery codes in place of the app or the
 * emailed code (and never twice), the choice page, enrollment, wrong codes, a new code by
 * mail, the attempt limit, and a policy changed by an administrator between two logins.
 */
// Argon2id (recovery codes) and a server start per file are slow on a shared, busy machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 240_000 });
let sink: SmtpSink;
let porta: TestPorta;
const tenants = {} as Record<Policy, Tenant>;

beforeAll(async () => {
  sink = await startSmtpSink();
  porta = await startTestPorta({ env: { SMTP_HOST: sink.host, SMTP_PORT: String(sink.port), SMTP_FROM: "Porta <no-reply@porta.test>" } });
  for (const policy of ["optional", "required_email", "required_totp", "required_any"] as const) tenants[policy] = await createTenant(porta, policy);
});
afterAll(async () => {
  await porta?.stop();
  await sink?.close();
});

const prisma = () => porta.services.db.prisma;
const en = resources.en.login.twoFactor;
const escape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#x27;");

/** A password login for `user` at `tenant`: the page and the first two-factor step. */
async function passwordStep(tenant: Tenant, user: { email: string }) {
  const page = await openLoginPage(tenant);
  const step = await signInWithPassword(page, user.email);
  return { page, step };
}

/** Logs in with a recovery code from the step's page; returns the status of the code POST and, on success, the subject of the tokens. */
async function useRecoveryCode(tenant: Tenant, user: TestUser, expectFirst: Step["kind"], code: string) {
  const { page, step } = await passwordStep(tenant, user);
  expect(step.kind).toBe(expectFirst);
  if (step.kind !== "totp" && step.kind !== "email" && step.kind !== "choose") throw new Error(`unexpected ${step.kind}`);
  expect(mainOf(step.html)).toContain(`href="/interaction/${page.uid}/two-factor?method=recovery"`);
  const form = await openRecovery(page.browser, step);
  expect(form.kind).toBe("recovery");
  if (form.kind !== "recovery") throw new Error("no recovery form");
  expect(mainOf(form.html)).toContain(escape(en.recoveryIntro));
  const { res, step: after } = await submitCode(page.browser, form, code);
  if (res.status !== 302) return { status: res.status, html: await res.text(), page, form };
  const tokens = await redeem(page, await toCallback(page.browser, after!));
  return { status: res.status, html: "", page, form, sub: tokens.claims()?.sub };
}

describe("recovery codes on the pages", () => {
  it("a recovery code works in place of the TOTP code, and cannot be used again", async () => {
    const user = await createUserInState(porta, tenants.optional, "totp");
    const code = user.recoveryCodes![0]!;
    // Typed in lower case without the dash: the same code.
    const first = await useRecoveryCode(tenants.optional, user, "totp", code.toLowerCase().replace("-", ""));
    expect(first.status).toBe(302);
    expect(first.sub).toBe(user.id);

    const again = await useRecoveryCode(tenants.optional, user, "totp", code);
    expect(again.status).toBe(401);
    expect(mainOf(again.html)).toContain(escape(en.failed));
    expect(mainOf(again.html)).toContain('name="method" value="recovery"');
    // Another of the codes still works on the same page.
    const retry = await submitCode(again.page.browser, { ...again.form, html: again.html }, user.recoveryCodes![1]!);
    expect(retry.res.status).toBe(302);
    expect((await redeem(again.page, await toCallback(again.page.browser, retry.step!))).claims()?.sub).toBe(user.id);

    expect((await auditEntries(porta, { eventType: "auth.2fa.failed", targetId: user.id })).map((e) => e.data)).toEqual([
      { userId: user.id, method: "recovery", reason: "invalid_code" },
    ]);
    expect((await auditEntries(porta, { eventType: "auth.2fa.verified", targetId: user.id })).map((e) => e.data)).toEqual([
      { userId: user.id, method: "recovery" },
      { userId: user.id, method: "recovery" },
    ]);
  });

  it("a recovery code works in place of the emailed code, and cannot be used again", async () => {
    const user = await createUserInState(porta, tenants.required_email, "totp");
    const code = user.recoveryCodes![3]!;
    const first = await useRecoveryCode(tenants.required_email, user, "email", code);
    expect(first.status).toBe(302);
    expect(first.sub).toBe(user.id);
    // The emailed code of that login was mailed all the same, and is left unused.
    await waitForMail(sink, user.email);

    const again = await useRecoveryCode(tenants.required_email, user, "email", code);
    expect(again.status).toBe(401);
    expect(await prisma().recoveryCode.count({ where: { userId: user.id, usedAt: null } })).toBe(9);
    // The person can go back to the emailed code from the recovery form, and finish with it.
    const back = await again.page.browser.get(`${porta.baseUrl}/interaction/${again.page.uid}/two-factor`);
    const emailStep = readStep(`${porta.baseUrl}/interaction/${again.page.uid}/two-factor`, back.status, await back.text());
    expect(emailStep.kind).toBe("email");
    if (emailStep.kind !== "email") throw new Error("no email step");
    const mail = await waitForMail(sink, user.email, 2);
    const done = await submitCode(again.page.browser, emailStep, codeIn(mail));
    expect(done.res.status).toBe(302);
    expect((await redeem(again.page, await toCallback(again.page.browser, done.step!))).claims()?.sub).toBe(user.id);
  });

  it("the recovery form is not offered, and refuses, when every code is used", async () => {
    const user = await createUserInState(porta, tenants.optional, "recovery-used");
    const { page, step } = await passwordStep(tenants.optional, user);
    expect(step.kind).toBe("totp");
    // ?method=recovery shows the TOTP form again: there is nothing to recover with.
    const form = await openRecovery(page.browser, step);
    expect(form.kind).toBe("totp");
    const forced = await page.browser.post(`${porta.baseUrl}/interaction/${page.uid}/two-factor`, {
      csrf: csrfOf((form as Step & { html: string }).html),
      intent: "verify",
      method: "recovery",
      code: user.recoveryCodes![0]!,
    });
    expect(forced.status).toBe(302);
    expect(forced.headers.get("location")).toBe(`/interaction/${page.uid}/two-factor`);
    expect(await auditEntries(porta, { eventType: { startsWith: "auth.2fa." }, targetId: user.id })).toEqual([]);
  });
});

describe("the choice page (required_any)", () => {
  it("offers the app and email codes to an enrolled person, and a recovery code", async () => {
    const user = await createUserInState(porta, tenants.required_any, "totp");
    const { page, step } = await passwordStep(tenants.required_any, user);
    expect(step.kind).toBe("choose");
    if (step.kind !== "choose") throw new Error("no choice");
    const main = mainOf(step.html);
    expect(main).toContain(escape(en.chooseIntro));
    expect(main).toContain(escape(en.useTotp));
    expect(main).toContain(escape(en.useEmail));
    expect(main).toContain(`href="/interaction/${page.uid}/two-factor?method=recovery"`);
    // Nothing is mailed before the person asks for it.
    expect(await prisma().emailOtpCode.count({ where: { userId: user.id } })).toBe(0);

    const emailStep = await choose(page.browser, step, "email");
    expect(emailStep.kind).toBe("email");
    const mail = await waitForMail(sink, user.email);
    expect(mail.parsed.subject).toContain(tenants.required_any.org.name);
    const done = await submitCode(page.browser, emailStep as Step & { html: string }, codeIn(mail));
    expect(done.res.status).toBe(302);
    expect((await redeem(page, await toCallback(page.browser, done.step!))).claims()?.sub).toBe(user.id);

    // Another login: the app this time.
    const second = await passwordStep(tenants.required_any, user);
    const totpStep = await choose(second.page.browser, second.step as Step & { html: string }, "totp");
    expect(totpStep.kind).toBe("totp");
    const viaApp = await submitCode(second.page.browser, totpStep as Step & { html: string }, await freshTotpCode(porta, user.id, user.totpSecret!));
    expect(viaApp.res.status).toBe(302);
    expect((await redeem(second.page, await toCallback(second.page.browser, viaApp.step!))).claims()?.sub).toBe(user.id);

    // And a recovery code straight from the choice page.
    const third = await useRecoveryCode(tenants.required_any, user, "choose", user.recoveryCodes![5]!);
    expect(third.sub).toBe(user.id);
  });

  it("limits 'email me a code' like 'send another code': choosing email again and again does not mail each time", async () => {
    const user = await createUserInState(porta, tenants.required_any, "totp");
    const { page, step } = await passwordStep(tenants.required_any, user);
    if (step.kind !== "choose") throw new Error("no choice");
    const csrf = csrfOf(step.html);
    const statuses: number[] = [];
    for (let i = 0; i < DEFAULT_LIMITS.emailOtpResend.points + 2; i++) {
      const res = await page.browser.post(step.url, { csrf, intent: "choose", method: "email" });
      statuses.push(res.status);
      if (res.status === 429) {
        expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
        expect(mainOf(await res.text())).toContain(escape(en.resendLimited_other.replace("{{count}}", "15")));
      }
    }
    expect(statuses).toEqual([...Array(DEFAULT_LIMITS.emailOtpResend.points).fill(302), 429, 429]);
    expect(await prisma().emailOtpCode.count({ where: { userId: user.id } })).toBe(DEFAULT_LIMITS.emailOtpResend.points);
  });

  it("goes straight to the emailed code for a person without an app", async () => {
    const user = await createUserInState(porta, tenants.required_any, "none");
    const { page, step } = await passwordStep(tenants.required_any, user);
    expect(step.kind).toBe("email");
    // Choosing the app, which the person does not have, changes nothing.
    const refused = await page.browser.post(step.url, { csrf: csrfOf((step as Step & { html: string }).html), intent: "choose", method: "totp" });
    expect(refused.status).toBe(302);
    const still = await page.browser.get(step.url);
    expect(readStep(step.url, still.status, await still.text()).kind).toBe("email");
  });
});

describe("enrollment on the setup page (required_totp)", () => {
  it("shows a QR code and the key, refuses a wrong code, shows ten recovery codes once, and the next login asks for the app", async () => {
    const user = await createUser(prisma(), tenants.required_totp.org.id, { email: uniqueEmail("enroll"), password: PASSWORD });
    const { page, step } = await passwordStep(tenants.required_totp, user);
    expect(step.kind).toBe("setup");
    if (step.kind !== "setup") throw new Error("no setup");
    const main = mainOf(step.html);
    expect(main).toContain(escape(en.setupTitle));
    expect(main).toMatch(/<img src="data:image\/png;base64,[A-Za-z0-9+/=]+"/);
    const secret = step.secret.replace(/ /g, "");
    // The two-factor page sends a person who has not enrolled yet back to the setup.
    const skip = await page.browser.get(`${porta.baseUrl}/interaction/${page.uid}/two-factor`);
    expect(skip.status).toBe(302);
    expect(skip.headers.get("location")).toBe(`/interaction/${page.uid}/two-factor/setup`);
    // Reloading the page shows the same key (the enrollment is resumed, not restarted).
    const reload = await page.browser.get(step.url);
    // A page with the key is never cached.
    expect(reload.headers.get("cache-control")).toBe("no-store");
    const reloaded = readStep(step.url, reload.status, await reload.text());
    expect(reloaded.kind === "setup" && reloaded.secret).toBe(step.secret);

    const wrong = await page.browser.post(step.url, { csrf: csrfOf(step.html), intent: "confirm", code: currentTotpCode(secret, Date.now() + 10 * 60_000) });
    expect(wrong.status).toBe(401);
    expect(mainOf(await wrong.text())).toContain(escape(en.setupFailed));
    expect((await prisma().totpCredential.findUniqueOrThrow({ where: { userId: user.id } })).status).toBe("pending");

    const { recoveryCodes, after } = await completeSetup(page.browser, step);
    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);
    expect((await redeem(page, await toCallback(page.browser, after))).claims()?.sub).toBe(user.id);
    const [enrolled] = await auditEntries(porta, { eventType: "auth.2fa.enrolled", targetId: user.id });
    expect(enrolled?.data).toEqual({ method: "totp" });

    // The next login asks for the app, not the setup; the codes shown at setup are the real ones.
    const next = await passwordStep(tenants.required_totp, user);
    expect(next.step.kind).toBe("totp");
    const viaApp = await submitCode(next.page.browser, next.step as Step & { html: string }, await freshTotpCode(porta, user.id, secret));
    expect(viaApp.res.status).toBe(302);
    expect((await redeem(next.page, await toCallback(next.page.browser, viaApp.step!))).claims()?.sub).toBe(user.id);
    const viaRecovery = await useRecoveryCode(tenants.required_totp, user, "totp", recoveryCodes[9]!);
    expect(viaRecovery.sub).toBe(user.id);
  });

  it("shows the recovery codes only once: reloading after the confirmation shows just the way on", async () => {
    const user = await createUser(prisma(), tenants.required_totp.org.id, { email: uniqueEmail("once"), password: PASSWORD });
    const { page, step } = await passwordStep(tenants.required_totp, user);
    if (step.kind !== "setup") throw new Error("no setup");
    const confirm = await page.browser.post(step.url, { csrf: csrfOf(step.html), intent: "confirm", code: currentTotpCode(step.secret.replace(/ /g, "")) });
    expect(confirm.headers.get("cache-control")).toBe("no-store");
    const shown = mainOf(await confirm.text());
    expect([...shown.matchAll(/<li><code>[A-Z0-9]{4}-[A-Z0-9]{4}<\/code><\/li>/g)]).toHaveLength(10);
    const reload = await page.browser.get(step.url);
    const again = mainOf(await reload.text());
    expect(reload.status).toBe(200);
    // As the codes are shown (the page's CSRF token may contain such a run of characters by chance).
    expect(again).not.toMatch(/<code>[A-Z0-9]{4}-[A-Z0-9]{4}<\/code>/);
    expect(again).not.toMatch(/>[^<]*\b[A-Z0-9]{4}-[A-Z0-9]{4}\b[^<]*</);
    expect(again).toContain(escape(en.continue));
  });
});

describe("codes on the pages", () => {
  it("a wrong TOTP code is refused with a message, and the right one then works", async () => {
    const user = await createUserInState(porta, tenants.optional, "totp");
    const { page, step } = await passwordStep(tenants.optional, user);
    expect(step.kind).toBe("totp");
    const right = await freshTotpCode(porta, user.id, user.totpSecret!);
    const wrongCode = right === "000000" ? "000001" : "000000";
    const wrong = await submitCode(page.browser, step as Step & { html: string }, wrongCode);
    expect(wrong.res.status).toBe(401);
    const html = await wrong.res.text();
    expect(mainOf(html)).toContain(escape(en.failed));
    const ok = await submitCode(page.browser, { ...(step as Step & { html: string }), html }, right);
    expect(ok.res.status).toBe(302);
    const tokens = await redeem(page, await toCallback(page.browser, ok.step!));
    expect(tokens.claims()?.sub).toBe(user.id);
  });

  it("refuses a sixth new code within 15 minutes with Retry-After, and makes no code for it", async () => {
    const user = await createUserInState(porta, tenants.required_email, "none");
    const { page, step } = await passwordStep(tenants.required_email, user);
    if (step.kind !== "email") throw new Error("no email step");
    const codes = () => porta.services.db.prisma.emailOtpCode.count({ where: { userId: user.id } });
    expect(await codes()).toBe(1);
    for (let i = 0; i < 5; i++) {
      const resend = await page.browser.post(step.url, { csrf: csrfOf(step.html), intent: "resend" });
      expect(resend.status, `resend ${i + 1}`).toBe(200);
      await resend.arrayBuffer();
    }
    const refused = await page.browser.post(step.url, { csrf: csrfOf(step.html), intent: "resend" });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(mainOf(await refused.text())).toContain(escape(en.resendLimited_other.replace("{{count}}", "15")));
    expect(await codes()).toBe(6);
  });

  it("an emailed code works once; a new code can be sent, and the earlier one stays valid", async () => {
    const user = await createUserInState(porta, tenants.required_email, "none");
    const { page, step } = await passwordStep(tenants.required_email, user);
    expect(step.kind).toBe("email");
    if (step.kind !== "email") throw new Error("no email step");
    expect(mainOf(step.html)).toContain(escape(en.emailIntro_other.replace("{{count}}", "10")));
    const firstMail = await waitForMail(sink, user.email);
    expect(firstMail.envelope.from).toBe("no-reply@porta.test");

    const resend = await page.browser.post(step.url, { csrf: csrfOf(step.html), intent: "resend" });
    expect(resend.status).toBe(200);
    expect(mainOf(await resend.text())).toContain(escape(en.resent));
    const secondMail = await waitForMail(sink, user.email, 2);
    expect(codeIn(secondMail)).not.toBe(codeIn(firstMail));

    const done = await submitCode(page.browser, step, codeIn(firstMail));
    expect(done.res.status).toBe(302);
    expect((await redeem(page, await toCallback(page.browser, done.step!))).claims()?.sub).toBe(user.id);

    // The used code is refused in the next login; the other mailed one still works there.
    const next = await passwordStep(tenants.required_email, user);
    if (next.step.kind !== "email") throw new Error("no email step");
    const reused = await submitCode(next.page.browser, next.step, codeIn(firstMail));
    expect(reused.res.status).toBe(401);
    const other = await submitCode(next.page.browser, { ...next.step, html: await reused.res.text() }, codeIn(secondMail));
    expect(other.res.status).toBe(302);
    expect((await redeem(next.page, await toCallback(next.page.browser, other.step!))).claims()?.sub).toBe(user.id);
  });

  it(`after ${DEFAULT_LIMITS.twoFactor.points} attempts the page refuses with 429 and Retry-After, even the right code`, async () => {
    const user = await createUserInState(porta, tenants.optional, "totp");
    const { page, step } = await passwordStep(tenants.optional, user);
    const form = step as Step & { html: string };
    for (let i = 0; i < DEFAULT_LIMITS.twoFactor.points; i++) {
      const wrong = await submitCode(page.browser, form, "000000");
      expect(wrong.res.status, `attempt ${i + 1}`).toBe(401);
    }
    const limited = await submitCode(page.browser, form, await freshTotpCode(porta, user.id, user.totpSecret!));
    expect(limited.res.status).toBe(429);
    expect(limited.res.headers.get("cache-control")).toBe("no-store");
    expect(Number(limited.res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(mainOf(await limited.res.text())).toContain(escape(en.rateLimited_other.split("{{")[0]!));
  });

  it("a method outside the plan is not accepted (TOTP posted where the policy asks for an emailed code)", async () => {
    const user = await createUserInState(porta, tenants.required_email, "totp");
    const { page, step } = await passwordStep(tenants.required_email, user);
    expect(step.kind).toBe("email");
    const res = await page.browser.post(step.url, {
      csrf: csrfOf((step as Step & { html: string }).html),
      intent: "verify",
      method: "totp",
      code: await freshTotpCode(porta, user.id, user.totpSecret!),
    });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(`/interaction/${page.uid}/two-factor`);
    expect(await auditEntries(porta, { eventType: "auth.2fa.verified", targetId: user.id })).toEqual([]);
  });

  it("a wrong CSRF token is refused before any code is checked", async () => {
    const user = await createUserInState(porta, tenants.optional, "totp");
    const { page, step } = await passwordStep(tenants.optional, user);
    const res = await page.browser.post(step.url, { csrf: "forged", intent: "verify", method: "totp", code: await freshTotpCode(porta, user.id, user.totpSecret!) });
    expect(res.status).toBe(403);
    expect(await auditEntries(porta, { eventType: { startsWith: "auth.2fa." }, targetId: user.id })).toEqual([]);
  });

  it("the two-factor pages without a password step send the person back to the login page", async () => {
    const page = await openLoginPage(tenants.required_totp);
    for (const path of ["two-factor", "two-factor/setup"]) {
      const res = await page.browser.get(`${page.interactionUrl}/${path}`);
      expect(res.status, path).toBe(302);
      expect(res.headers.get("location")).toBe(`/interaction/${page.uid}`);
    }
  });
});

describe("a policy changed by an administrator", () => {
  it("applies at the next login", async () => {
    const tenant = await createTenant(porta, "optional");
    const user = await createUserInState(porta, tenant, "none");
    const before = await passwordStep(tenant, user);
    expect(["consent", "callback"]).toContain(before.step.kind);
    await toCallback(before.page.browser, before.step);

    const { version } = await prisma().organization.findUniqueOrThrow({ where: { id: tenant.org.id } });
    await inTransaction(porta.services, systemActor(null), (ctx) => setTwoFactorPolicy(ctx, { organizationId: tenant.org.id, policy: "required_email", expectedVersion: version }));
    const after = await passwordStep(tenant, user);
    expect(after.step.kind).toBe("email");

    await inTransaction(porta.services, systemActor(null), (ctx) => setTwoFactorPolicy(ctx, { organizationId: tenant.org.id, policy: "required_totp" }));
    const enroll = await passwordStep(tenant, user);
    expect(enroll.step.kind).toBe("setup");
    const { after: done } = await completeSetup(enroll.page.browser, enroll.step as Step & { kind: "setup" });
    expect((await redeem(enroll.page, await toCallback(enroll.page.browser, done))).claims()?.sub).toBe(user.id);
  });
});
