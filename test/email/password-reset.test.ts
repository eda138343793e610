import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Language } from "~/i18n/config";
import { interactionOrgKey } from "~/.server/oidc/storage/adapter";
import { csrfOf, TestBrowser } from "../support/browser";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { linkIn, startSmtpPeer, type PeerMail, type SmtpPeer } from "../support/smtp";
import {
  continueToCallback,
  createTenant,
  drainQueue,
  eventually,
  htmlLang,
  jobRows,
  mailText,
  mainOf,
  openLoginPage,
  pageText,
  PASSWORD,
  passwordSignIn,
  RP_CALLBACK,
  redeem,
  requestPasswordResetOn,
  submitPassword,
  uniqueEmail,
  withoutNonces,
  type LoginPage,
  type Tenant,
} from "./helpers";

let peer: SmtpPeer;
let porta: TestPorta;
let tenant: Tenant;

beforeAll(async () => {
  peer = await startSmtpPeer();
  porta = await startTestPorta({ env: peer.env });
  tenant = await createTenant(porta);
});
afterAll(async () => {
  await porta?.stop();
  await peer?.close();
});

const prisma = () => porta.services.db.prisma;
const NEW_PASSWORD = "a brand new passphrase 7";

function expectResetMail(mail: PeerMail, language: Language, link: string) {
  expect(mail.envelope.from).toBe("no-reply@porta.test");
  expect(mail.subject).toBe(mailText(language, (m) => m.passwordReset.subject, { organization: tenant.org.name }));
  expect(mail.text).toContain(mailText(language, (m) => m.passwordReset.body, { organization: tenant.org.name }));
  expect(mail.text).toContain(mailText(language, (m) => m.passwordReset.expiry_other, { count: 60 }));
  expect(mail.html).toContain(`href="${link.replace(/&/g, "&amp;")}"`);
  // The footer names the person's account page (decision 038).
  expect(mail.text).toContain(mailText(language, (m) => m.common.account, { url: `${porta.baseUrl}/${tenant.org.slug}/account` }));
  expect(mail.html).toMatch(new RegExp(`<html[^>]*lang="${language}"`));
}

/** Requests a reset on a login page and returns the mail and its link. */
async function resetLinkFor(email: string, page: LoginPage, organization: Tenant = tenant, language: Language = "en") {
  const res = await requestPasswordResetOn(page, email);
  expect(res.status).toBe(200);
  const mail = await peer.waitForMail(email);
  const link = linkIn(mail, "/reset-password?token=");
  // The link names its organization, not the browser's sign-in: it opens anywhere.
  expect(link).toBe(`${porta.baseUrl}/${organization.org.slug}/reset-password?token=${new URL(link).searchParams.get("token")}&lang=${language}`);
  return { mail, link };
}

/** Opens the reset link and submits a new password from its form. */
async function submitNewPassword(browser: TestBrowser, link: string, password: string) {
  const form = await browser.get(link);
  const html = await form.text();
  expect(form.status).toBe(200);
  // The form posts back to the page's own address, as a browser submits it.
  return { formHtml: html, res: await browser.post(link, { csrf: csrfOf(html), token: new URL(link).searchParams.get("token")!, password }) };
}

describe("the password-reset mail", () => {
  it("is English on an English page; its link sets a new password that signs in, and the old one no longer does", async () => {
    const user = await createUser(prisma(), tenant.org.id, { email: uniqueEmail("reset-en"), password: PASSWORD });
    const page = await openLoginPage(tenant);
    const { mail, link } = await resetLinkFor(user.email, page);
    expectResetMail(mail, "en", link);

    const { formHtml, res } = await submitNewPassword(page.browser, link, NEW_PASSWORD);
    expect(mainOf(formHtml)).toContain(pageText("en", (m) => m.reset.newPassword));
    // The rules are on the page before the first attempt.
    expect(mainOf(formHtml)).toContain(pageText("en", (m) => m.passwordPolicy.hint, { limit: 8 }));
    // The sign-in that asked is open in this browser: the reset continues it.
    expect(res.status).toBe(303);
    const location = new URL(res.headers.get("location")!, link);
    expect(location.pathname).toBe(`/interaction/${page.uid}`);
    expect(location.searchParams.get("reset")).toBe("done");
    const rows = await prisma().passwordResetToken.findMany({ where: { userId: user.id } });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.consumedAt).not.toBeNull();
    expect(rows[0]!.tokenHash).toBe(porta.services.tokens.hash(new URL(link).searchParams.get("token")!));
    // Used up: the link says so (not "invalid"), on the organization's branded page.
    const again = await page.browser.get(link);
    expect(again.status).toBe(400);
    const againHtml = mainOf(await again.text());
    expect(againHtml).toContain(pageText("en", (m) => m.reset.used));
    expect(againHtml).toContain(tenant.org.name);

    const loginPage = await page.browser.get(location.href);
    const loginHtml = await loginPage.text();
    expect(mainOf(loginHtml)).toContain(pageText("en", (m) => m.signIn.passwordChanged));

    // Same interaction: the old password fails, the new one continues to the relying party.
    const old = await submitPassword({ ...page, html: loginHtml }, user.email, PASSWORD);
    expect(old.status).toBe(401);
    const fresh = await submitPassword({ ...page, html: loginHtml }, user.email, NEW_PASSWORD);
    expect([302, 303]).toContain(fresh.status);
    const { callback } = await continueToCallback(page.browser, fresh, page.interactionUrl);
    expect((await redeem(page, callback)).claims()?.sub).toBe(user.id);

    expect((await passwordSignIn(tenant, user.email, PASSWORD)).status).toBe(401);
    expect((await passwordSignIn(tenant, user.email, NEW_PASSWORD)).tokens?.claims()?.sub).toBe(user.id);

  });

  it("is German for ui_locales=de; a breached password is refused in German, then a good one is saved", async () => {
    const user = await createUser(prisma(), tenant.org.id, { email: uniqueEmail("reset-de"), password: PASSWORD });
    const page = await openLoginPage(tenant, { extra: { ui_locales: "de" } });
    expect(htmlLang(page.html)).toBe("de");
    const { mail, link } = await resetLinkFor(user.email, page, tenant, "de");
    expectResetMail(mail, "de", link);

    const weak = await submitNewPassword(page.browser, link, "password123");
    expect(htmlLang(weak.formHtml)).toBe("de");
    expect(weak.res.status).toBe(422);
    expect(mainOf(await weak.res.text())).toContain(pageText("de", (m) => m.passwordPolicy.breached));
    // The refusal does not use up the link.
    const good = await submitNewPassword(page.browser, link, NEW_PASSWORD);
    expect([302, 303]).toContain(good.res.status);
    expect((await passwordSignIn(tenant, user.email, NEW_PASSWORD)).tokens?.claims()?.sub).toBe(user.id);
  });

  it("follows the user's own locale for the mail; the English page refuses weak and breached passwords in English", async () => {
    const user = await createUser(prisma(), tenant.org.id, { email: uniqueEmail("reset-weak"), password: PASSWORD });
    await prisma().user.update({ where: { id: user.id }, data: { locale: "de" } });
    const page = await openLoginPage(tenant);
    expect(htmlLang(page.html)).toBe("en");
    const { link, mail } = await resetLinkFor(user.email, page);
    expectResetMail(mail, "de", link);
    const breached = await submitNewPassword(page.browser, link, "password123");
    expect(breached.res.status).toBe(422);
    expect(mainOf(await breached.res.text())).toContain(pageText("en", (m) => m.passwordPolicy.breached));
    const short = await submitNewPassword(page.browser, link, "short");
    expect(short.res.status).toBe(422);
    expect(mainOf(await short.res.text())).toContain(pageText("en", (m) => m.passwordPolicy.too_short, { limit: 8 }));
    const ownEmail = await submitNewPassword(page.browser, link, user.email);
    expect(ownEmail.res.status).toBe(422);
    expect(mainOf(await ownEmail.res.text())).toContain(pageText("en", (m) => m.passwordPolicy.contains_email));
    const localPart = await submitNewPassword(page.browser, link, `my ${user.email.split("@")[0]} forever`);
    expect(localPart.res.status).toBe(422);
    expect(mainOf(await localPart.res.text())).toContain(pageText("en", (m) => m.passwordPolicy.contains_email));
    // NIST context-specific words: the organization's name.
    const orgName = await submitNewPassword(page.browser, link, `welcome to ${tenant.org.name} 1`);
    expect(orgName.res.status).toBe(422);
    expect(mainOf(await orgName.res.text())).toContain(pageText("en", (m) => m.passwordPolicy.contains_organization));
    expect((await passwordSignIn(tenant, user.email, PASSWORD)).tokens?.claims()?.sub).toBe(user.id);
  });
});

describe("requesting a reset", () => {
  it("answers the same for an existing, an absent and an inactive account; only the existing one gets a mail and a token", async () => {
    const t = await createTenant(porta);
    const existing = await createUser(prisma(), t.org.id, { email: uniqueEmail("present"), password: null });
    const inactive = await createUser(prisma(), t.org.id, { email: uniqueEmail("inactive"), status: "inactive", password: null });
    const absent = uniqueEmail("absent");
    const page = await openLoginPage(t);

    const answers = [];
    for (const email of [existing.email, absent, inactive.email]) {
      const res = await requestPasswordResetOn(page, email);
      const body = await res.text();
      expect(mainOf(body)).toContain(pageText("en", (m) => m.forgot.sent, { email }));
      answers.push({ status: res.status, body: withoutNonces(body).replaceAll(email, "<email>") });
    }
    expect(answers[0]!.status).toBe(200);
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);

    await drainQueue(porta, "password-reset");
    const jobs = (await jobRows(porta, "password-reset")).filter((j) => [existing.email, absent, inactive.email].includes(String(j.data.email)));
    expect(jobs.map((j) => j.state)).toEqual(["completed", "completed", "completed"]);
    expect(peer.mailsTo(existing.email)).toHaveLength(1);
    expect(peer.mailsTo(absent)).toHaveLength(0);
    expect(peer.mailsTo(inactive.email)).toHaveLength(0);
    const rows = await prisma().passwordResetToken.findMany({ where: { organizationId: t.org.id } });
    expect(rows.map((r) => r.userId)).toEqual([existing.id]);
  });

  it("looks no account up in the request itself; the worker does later; both steps are audited", async () => {
    const [busy1, busy2, user] = await Promise.all(
      ["busy1", "busy2", "target"].map((label) => createUser(prisma(), tenant.org.id, { email: uniqueEmail(label), password: PASSWORD })),
    );
    const page = await openLoginPage(tenant);
    // Both password-reset workers get stuck delivering other users' mail, so the request's own
    // job cannot start while the request is being answered.
    peer.mode = "hold";
    try {
      for (const busy of [busy1!, busy2!]) expect((await requestPasswordResetOn(await openLoginPage(tenant), busy.email)).status).toBe(200);
      await peer.waitUntil(() => peer.held === 2, 15_000, "two held deliveries");

      const form = await page.browser.get(`${page.interactionUrl}/forgot-password`);
      const csrf = csrfOf(await form.text());
      const statements: string[] = [];
      const stop = porta.services.db.onQuery((sql) => statements.push(sql));
      let status: number;
      try {
        const res = await page.browser.post(`${page.interactionUrl}/forgot-password`, { csrf, email: user!.email });
        status = res.status;
        await res.text();
      } finally {
        stop();
      }
      expect(status).toBe(200);
      expect(statements.length).toBeGreaterThan(0);
      expect(statements.filter((sql) => sql.includes('"User"'))).toEqual([]);
      expect(statements.filter((sql) => sql.includes('"PasswordResetToken"'))).toEqual([]);
      // Its job is waiting: lookup, token and mail are still to come.
      expect(await porta.services.jobs.count("password-reset", "waiting")).toBe(1);
      expect(await prisma().passwordResetToken.count({ where: { userId: user!.id } })).toBe(0);

      const requested = await prisma().auditEntry.findMany({ where: { eventType: "auth.password_reset.requested", organizationId: tenant.org.id } });
      expect(requested.filter((e) => (e.data as { email?: string }).email === user!.email)).toHaveLength(1);
    } finally {
      peer.mode = "accept";
      peer.release("accept");
    }

    const mail = await peer.waitForMail(user!.email);
    expect(await prisma().passwordResetToken.count({ where: { userId: user!.id } })).toBe(1);
    const { res } = await submitNewPassword(page.browser, linkIn(mail, "/reset-password?token="), NEW_PASSWORD);
    expect([302, 303]).toContain(res.status);
    const completed = await prisma().auditEntry.findMany({ where: { eventType: "auth.password_reset.completed", targetId: user!.id } });
    expect(completed).toHaveLength(1);
    expect(completed[0]).toMatchObject({ organizationId: tenant.org.id, actorId: user!.id });
    const data = JSON.stringify(completed[0]!.data);
    expect(data).not.toContain(NEW_PASSWORD);
  });
});

describe("completing a reset", () => {
  it("ends the user's sessions: a refresh token issued before stops working, and the browser must sign in again", async () => {
    const user = await createUser(prisma(), tenant.org.id, { email: uniqueEmail("sessions"), password: PASSWORD });
    const signedIn = await passwordSignIn(tenant, user.email, PASSWORD, { scope: "openid email offline_access", extra: { prompt: "consent" } });
    const tokens = signedIn.tokens!;
    expect(tokens.refresh_token).toBeTruthy();
    const refreshed = await oidc.refreshTokenGrant(signedIn.page.config, tokens.refresh_token!);
    const refreshToken = refreshed.refresh_token ?? tokens.refresh_token!;

    // With the session alive, a new authorization in the same browser goes straight back.
    const authorize = () =>
      signedIn.page.browser.get(
        oidc.buildAuthorizationUrl(signedIn.page.config, {
          redirect_uri: RP_CALLBACK,
          scope: "openid email",
          code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
          code_challenge_method: "S256",
        }).href,
      );
    const before = await signedIn.page.browser.follow(await authorize(), signedIn.page.config.serverMetadata().authorization_endpoint!, (url) =>
      url.startsWith(RP_CALLBACK),
    );
    expect(before.url.startsWith(RP_CALLBACK)).toBe(true);

    // The reset happens elsewhere (another browser, another interaction).
    const page = await openLoginPage(tenant);
    const { link } = await resetLinkFor(user.email, page);
    const { res } = await submitNewPassword(page.browser, link, NEW_PASSWORD);
    expect([302, 303]).toContain(res.status);

    await expect(oidc.refreshTokenGrant(signedIn.page.config, refreshToken)).rejects.toMatchObject({ error: "invalid_grant" });
    const after = await signedIn.page.browser.follow(await authorize(), signedIn.page.config.serverMetadata().authorization_endpoint!, (url) =>
      url.startsWith(RP_CALLBACK),
    );
    expect(after.url.startsWith(RP_CALLBACK)).toBe(false);
    expect(new URL(after.url).pathname).toMatch(/^\/interaction\/[^/]+$/);
    expect(mainOf(await after.res.text())).toMatch(/<input[^>]*name="password"/);
    // The stored grant and tokens are gone too.
    const remaining = await eventually(
      () => prisma().oidcPayload.count({ where: { organizationId: tenant.org.id, accountId: user.id } }),
      (n) => n === 0,
    );
    expect(remaining).toBe(0);
  });
});

describe("a reset link opens in any browser (decision 032)", () => {
  const clientName = async (t: Tenant) => (await prisma().client.findUniqueOrThrow({ where: { id: t.client.id } })).name;

  it("opened on another device while the sign-in is open: sets the password there, ends on 'password changed' with the way back; the asking browser signs in with it", async () => {
    const user = await createUser(prisma(), tenant.org.id, { email: uniqueEmail("other-device"), password: PASSWORD });
    const page = await openLoginPage(tenant, { extra: { ui_locales: "de" } });
    const { link } = await resetLinkFor(user.email, page, tenant, "de");

    // The phone: a browser with no cookie of this sign-in and no language of its own: the link's is used.
    const phone = new TestBrowser();
    const { formHtml, res } = await submitNewPassword(phone, link, NEW_PASSWORD);
    expect(htmlLang(formHtml)).toBe("de");
    expect(mainOf(formHtml)).toContain(tenant.org.name);
    expect(res.status).toBe(303);
    const next = await phone.follow(res, link);
    expect(new URL(next.url).pathname).toBe(`/${tenant.org.slug}/password-changed`);
    const changed = await next.res.text();
    expect(next.res.status).toBe(200);
    expect(htmlLang(changed)).toBe("de");
    expect(mainOf(changed)).toContain(pageText("de", (m) => m.reset.changedTitle));
    expect(mainOf(changed)).toContain(tenant.org.name);
    // The way back is the application's own address, from its registered redirect URI.
    expect(mainOf(changed)).toContain(`href="${new URL(RP_CALLBACK).origin}/"`);
    expect(mainOf(changed)).toContain(pageText("de", (m) => m.reset.signInTo, { client: await clientName(tenant) }));

    // The laptop's sign-in is still open and goes on with the new password.
    const loginPage = await page.browser.get(page.interactionUrl);
    const loginHtml = await loginPage.text();
    expect((await submitPassword({ ...page, html: loginHtml }, user.email, PASSWORD)).status).toBe(401);
    const fresh = await submitPassword({ ...page, html: loginHtml }, user.email, NEW_PASSWORD);
    const { callback } = await continueToCallback(page.browser, fresh, page.interactionUrl);
    expect((await redeem(page, callback)).claims()?.sub).toBe(user.id);
  });

  it("opened after the sign-in that asked has ended: still sets the password, then says so on the reset page itself", async () => {
    const user = await createUser(prisma(), tenant.org.id, { email: uniqueEmail("sign-in-gone"), password: PASSWORD });
    const page = await openLoginPage(tenant);
    const { link } = await resetLinkFor(user.email, page);
    // The sign-in lapses (its lifetime is an hour at most; the link's is 60 minutes from the mail).
    await porta.services.store.del(interactionOrgKey(page.uid));

    const { res } = await submitNewPassword(new TestBrowser(), link, NEW_PASSWORD);
    expect(res.status).toBe(200);
    const html = mainOf(await res.text());
    expect(html).toContain(pageText("en", (m) => m.reset.changedTitle));
    expect(html).toContain(`href="${new URL(RP_CALLBACK).origin}/"`);
    expect((await passwordSignIn(tenant, user.email, NEW_PASSWORD)).tokens?.claims()?.sub).toBe(user.id);
  });

  it("says which: a used link, an expired link and a made-up or other organization's link, each with the next step; none is consumed by looking", async () => {
    const user = await createUser(prisma(), tenant.org.id, { email: uniqueEmail("link-states"), password: PASSWORD });
    const other = await createTenant(porta, { name: "Other Org" });
    const page = await openLoginPage(tenant);
    const { link } = await resetLinkFor(user.email, page);
    const token = new URL(link).searchParams.get("token")!;
    const browser = new TestBrowser();

    // Another organization's address for this token: unknown, unbranded, and the link still works.
    const foreign = await browser.get(`${porta.baseUrl}/${other.org.slug}/reset-password?token=${token}`);
    expect(foreign.status).toBe(400);
    const foreignHtml = mainOf(await foreign.text());
    expect(foreignHtml).toContain(pageText("en", (m) => m.reset.invalid));
    expect(foreignHtml).not.toContain(tenant.org.name);
    const madeUp = await browser.get(`${porta.baseUrl}/${tenant.org.slug}/reset-password?token=${"x".repeat(43)}`);
    expect(madeUp.status).toBe(400);
    expect(mainOf(await madeUp.text())).toContain(pageText("en", (m) => m.reset.invalid));

    await prisma().passwordResetToken.updateMany({ where: { userId: user.id }, data: { expiresAt: new Date(Date.now() - 1_000) } });
    const expired = await browser.get(link);
    expect(expired.status).toBe(400);
    const expiredHtml = mainOf(await expired.text());
    expect(expiredHtml).toContain(pageText("en", (m) => m.reset.expired));
    expect(expiredHtml).toContain(tenant.org.name);
    expect(expiredHtml).toContain(`href="${new URL(RP_CALLBACK).origin}/"`);
    const row = await prisma().passwordResetToken.findFirstOrThrow({ where: { userId: user.id } });
    expect(row.consumedAt).toBeNull();
    expect((await passwordSignIn(tenant, user.email, PASSWORD)).tokens?.claims()?.sub).toBe(user.id);
  });

  it("refuses a stale or foreign CSRF token with 403 and changes nothing; a deactivated account's link no longer works", async () => {
    const user = await createUser(prisma(), tenant.org.id, { email: uniqueEmail("reset-csrf"), password: PASSWORD });
    const page = await openLoginPage(tenant);
    const { link } = await resetLinkFor(user.email, page);
    const token = new URL(link).searchParams.get("token")!;
    const browser = new TestBrowser();
    for (const csrf of ["", "not-a-token", csrfOf(page.html)]) {
      const res = await browser.post(link, { csrf, token, password: NEW_PASSWORD });
      expect(res.status).toBe(403);
      expect(mainOf(await res.text())).toContain(pageText("en", (m) => m.csrf.invalid));
    }
    expect((await prisma().passwordResetToken.findFirstOrThrow({ where: { userId: user.id } })).consumedAt).toBeNull();
    expect(await prisma().auditEntry.count({ where: { eventType: "auth.password_reset.completed", targetId: user.id } })).toBe(0);

    const form = await browser.get(link);
    const csrf = csrfOf(await form.text());
    await prisma().user.update({ where: { id: user.id }, data: { status: "inactive" } });
    const res = await browser.post(link, { csrf, token, password: NEW_PASSWORD });
    expect(res.status).toBe(400);
    expect((await prisma().passwordResetToken.findFirstOrThrow({ where: { userId: user.id } })).consumedAt).toBeNull();
  });

  it("forwards a link in the earlier format (/interaction/:uid/reset-password) to its organization's page", async () => {
    const user = await createUser(prisma(), tenant.org.id, { email: uniqueEmail("legacy-link"), password: PASSWORD });
    const page = await openLoginPage(tenant);
    const { link } = await resetLinkFor(user.email, page);
    const token = new URL(link).searchParams.get("token")!;
    const browser = new TestBrowser();
    const legacy = await browser.get(`${porta.baseUrl}/interaction/${page.uid}/reset-password?token=${token}`);
    expect(legacy.status).toBe(303);
    expect(legacy.headers.get("location")).toBe(`/${tenant.org.slug}/reset-password?token=${token}`);
    const unknown = await browser.get(`${porta.baseUrl}/interaction/${page.uid}/reset-password?token=${"y".repeat(43)}`);
    expect(unknown.status).toBe(400);
    expect(mainOf(await unknown.text())).toContain(pageText("en", (m) => m.reset.invalid));
  });
});
