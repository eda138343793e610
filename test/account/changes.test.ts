import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { currentTotpCode } from "~/.server/auth/two-factor/totp";
import { TestBrowser } from "../support/browser";
import { startTestPorta, type TestPorta } from "../support/porta";
import { startSmtpSink, type SmtpSink } from "../support/smtp-sink";
import { codeIn, enrollTotp, freshTotpCode, waitForMail } from "../two-factor/helpers";
import { ageSignIns, completeSignIn, createAccountTenant, createAccountUser, openAccount, PASSWORD, postAccount, shown, signInToAccount, signInWithSecondFactor } from "./helpers";

/**
 * The account page (decision 038): what a person changes on the account page, and what is refused: a foreign or
 * missing CSRF token, bad input, a wrong current password, what the organization's policy
 * forbids, a sign-in too old for a sensitive change (step-up), another person's session.
 */
describe("account page: changes and refusals", () => {
  let porta: TestPorta;
  let sink: SmtpSink;
  const audit = (userId: string, eventType: string) => porta.services.db.prisma.auditEntry.findMany({ where: { targetId: userId, eventType } });
  const userRow = (id: string) => porta.services.db.prisma.user.findUniqueOrThrow({ where: { id } });

  beforeAll(async () => {
    sink = await startSmtpSink();
    porta = await startTestPorta({ env: { SMTP_HOST: sink.host, SMTP_PORT: String(sink.port), SMTP_FROM: "Porta <no-reply@porta.test>" } });
  });
  afterAll(async () => {
    await porta.stop();
    await sink.close();
  });

  describe("profile", () => {
    it("saves name and language, audited with the fields that changed, and the page speaks the chosen language", async () => {
      const tenant = await createAccountTenant(porta);
      const user = await createAccountUser(porta, tenant);
      const page = await signInToAccount(tenant, user.email);
      const res = await postAccount(tenant, page, { intent: "profile", givenName: "  Grace ", familyName: "Hopper", locale: "de" });
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe(`/${tenant.org.slug}/account?done=profile`);
      expect(await userRow(user.id)).toMatchObject({ givenName: "Grace", familyName: "Hopper", locale: "de" });
      const [entry] = await audit(user.id, "account.profile_updated");
      expect(entry?.data).toEqual({ fields: ["givenName", "familyName", "locale"] });
      const after = await openAccount(tenant, page.browser);
      expect(after.html).toContain('lang="de"');
      expect(shown(after.html)).toContain("Ihr Konto");
    });

    it("refuses a form without this browser's CSRF token (403) and changes nothing", async () => {
      const tenant = await createAccountTenant(porta);
      const user = await createAccountUser(porta, tenant);
      const page = await signInToAccount(tenant, user.email);
      const other = await signInToAccount(tenant, user.email);
      // The token of the same person's other browser is not this browser's.
      const res = await postAccount(tenant, { ...page, csrf: other.csrf }, { intent: "profile", givenName: "Mallory", familyName: "", locale: "" });
      expect(res.status).toBe(403);
      expect(shown(await res.text())).toContain("This form expired");
      expect((await userRow(user.id)).givenName).toBe("Ada");
    });

    it("refuses unstorable and over-long text next to the field (422), writing nothing", async () => {
      const tenant = await createAccountTenant(porta);
      const user = await createAccountUser(porta, tenant);
      const page = await signInToAccount(tenant, user.email);
      const res = await postAccount(tenant, page, { intent: "profile", givenName: "Ada\u0000", familyName: "x".repeat(201), locale: "fr" });
      expect(res.status).toBe(422);
      const text = shown(await res.text());
      expect(text).toContain("This contains characters that cannot be stored.");
      expect(text).toContain("Use at most 200 characters.");
      expect(text).toContain("Choose one of the listed values.");
      expect(await userRow(user.id)).toMatchObject({ givenName: "Ada", familyName: "Lovelace", locale: null });
      expect(await audit(user.id, "account.profile_updated")).toHaveLength(0);
    });
  });

  describe("password", () => {
    it("needs the current password, applies the password rules, and ends the other sessions when asked", async () => {
      const tenant = await createAccountTenant(porta, { name: "Contoso Pharmaceuticals" });
      const user = await createAccountUser(porta, tenant, `grace.hopper-${Date.now()}@example.com`);
      const page = await signInToAccount(tenant, user.email);
      const phone = await signInToAccount(tenant, user.email);

      const wrong = await postAccount(tenant, page, { intent: "password", currentPassword: "not it at all", newPassword: "a brand new passphrase 9", endOtherSessions: "on" });
      expect(wrong.status).toBe(422);
      expect(shown(await wrong.text())).toContain("The current password is not right.");

      const weak = await postAccount(tenant, page, { intent: "password", currentPassword: PASSWORD, newPassword: "contoso pharmaceuticals rocks", endOtherSessions: "on" });
      expect(weak.status).toBe(422);

      const ok = await postAccount(tenant, page, { intent: "password", currentPassword: PASSWORD, newPassword: "a brand new passphrase 9", endOtherSessions: "on" });
      expect(ok.status).toBe(303);
      expect(await audit(user.id, "account.password_changed")).toHaveLength(1);
      // This browser stays signed in; the other one is sent to sign in again.
      expect((await page.browser.get(tenant.accountUrl)).status).toBe(200);
      expect((await phone.browser.get(tenant.accountUrl)).status).toBe(302);
      // The new password signs in, the old one no longer does.
      await expect(signInToAccount(tenant, user.email, PASSWORD)).rejects.toThrow();
      await signInToAccount(tenant, user.email, "a brand new passphrase 9");
    });

    it("lets an account without a password set one, after a recent sign-in only", async () => {
      const tenant = await createAccountTenant(porta);
      const user = await createAccountUser(porta, tenant);
      const page = await signInToAccount(tenant, user.email);
      await porta.services.db.prisma.user.update({ where: { id: user.id }, data: { passwordHash: null } });
      const form = await openAccount(tenant, page.browser);
      expect(shown(form.html)).toContain("Your account has no password");
      await ageSignIns(porta, tenant, user.id, 20 * 60);
      const stale = await postAccount(tenant, form, { intent: "set-password", newPassword: "a first passphrase 77" });
      expect(stale.status).toBe(303);
      const location = new URL(stale.headers.get("location")!);
      expect(location.searchParams.get("prompt")).toBe("login");
      expect(location.searchParams.get("max_age")).toBe("0");
      expect((await userRow(user.id)).passwordHash).toBeNull();
    });
  });

  describe("two-factor, within the organization's policy", () => {
    it("under optional: set up an authenticator app (recovery codes shown once), then remove it", async () => {
      const tenant = await createAccountTenant(porta);
      const user = await createAccountUser(porta, tenant);
      const page = await signInToAccount(tenant, user.email);
      const setupUrl = `${tenant.accountUrl}/two-factor`;
      const setup = await page.browser.get(setupUrl);
      expect(`${setup.status} ${setup.headers.get("location")}`).toBe("200 null");
      const html = await setup.text();
      const secret = /data-testid="totp-secret">([^<]+)</.exec(html)![1]!.replace(/\s+/g, "");
      const wrong = await page.browser.post(setupUrl, { csrf: page.csrf, code: "000000" });
      expect(wrong.status).toBe(422);
      const done = await page.browser.post(setupUrl, { csrf: page.csrf, code: currentTotpCode(secret) });
      expect(`${done.status} ${done.headers.get("location")}`).toBe("200 null");
      expect((shown(await done.text()).match(/\b[A-Z0-9]{4}-[A-Z0-9]{4}\b/g) ?? []).length).toBe(10);
      expect(await audit(user.id, "auth.2fa.enrolled")).toHaveLength(1);

      const after = await openAccount(tenant, page.browser);
      expect(shown(after.html)).toContain("On: signing in with your password also asks for a second factor.");
      // The spec's rule a person with a second factor may not expect: a magic link does not ask for it.
      expect(shown(after.html)).toContain("such a link signs you in without asking for the second factor");
      const removed = await postAccount(tenant, after, { intent: "totp-remove" });
      expect(removed.status).toBe(303);
      expect(await porta.services.db.prisma.totpCredential.count({ where: { userId: user.id } })).toBe(0);
      // Nothing asks for a second factor any more, so the recovery codes went too.
      expect(await porta.services.db.prisma.recoveryCode.count({ where: { userId: user.id } })).toBe(0);
      expect(await audit(user.id, "account.2fa.removed")).toHaveLength(1);
    });

    it("under required_totp the last authenticator app cannot be removed (403), and under required_email email codes cannot be turned off", async () => {
      const totpOrg = await createAccountTenant(porta, { twoFactorPolicy: "required_totp" });
      const user = await createAccountUser(porta, totpOrg);
      const { secret } = await enrollTotp(porta, user.id);
      const page = await signInWithSecondFactor(totpOrg, user.email, () => freshTotpCode(porta, user.id, secret));
      expect(shown(page.html)).toContain("Required by your organization: it cannot be removed.");
      expect(page.html).not.toContain('value="totp-remove"');
      const refused = await postAccount(totpOrg, page, { intent: "totp-remove" });
      expect(refused.status).toBe(403);
      expect(await porta.services.db.prisma.totpCredential.count({ where: { userId: user.id, status: "enrolled" } })).toBe(1);

      const emailOrg = await createAccountTenant(porta, { twoFactorPolicy: "required_email" });
      const emailUser = await createAccountUser(porta, emailOrg);
      const signedIn = await signInWithSecondFactor(emailOrg, emailUser.email, async () => codeIn(await waitForMail(sink, emailUser.email)));
      expect(shown(signedIn.html)).toContain("Always on: required by your organization.");
      expect(signedIn.html).not.toContain('value="email-codes"');
      const off = await postAccount(emailOrg, signedIn, { intent: "email-codes", value: "off" });
      expect(off.status).toBe(403);
      // Under required_email an authenticator app is not offered: sign-ins ask for email codes whatever else is set up.
      expect((await signedIn.browser.get(`${emailOrg.accountUrl}/two-factor`)).status).toBe(302);
    });

    it("a sensitive change after an old sign-in goes through the sign-in again (step-up), then works", async () => {
      const tenant = await createAccountTenant(porta);
      const user = await createAccountUser(porta, tenant);
      const page = await signInToAccount(tenant, user.email);
      await ageSignIns(porta, tenant, user.id, 20 * 60);
      const stale = await openAccount(tenant, page.browser);
      expect(shown(stale.html)).toContain("confirm it is you");
      const refused = await postAccount(tenant, stale, { intent: "email-codes", value: "on" });
      expect(refused.status).toBe(303);
      expect((await userRow(user.id)).emailOtpEnabled).toBe(false);
      const again = new URL(refused.headers.get("location")!);
      expect(again.searchParams.get("login_hint")).toBe(user.email);
      const fresh = await completeSignIn(page.browser, tenant, await page.browser.get(again.href), again.href, user.email);
      const on = await postAccount(tenant, fresh, { intent: "email-codes", value: "on" });
      expect(on.status).toBe(303);
      expect((await userRow(user.id)).emailOtpEnabled).toBe(true);
      expect(await audit(user.id, "account.2fa.email_enabled")).toHaveLength(1);
    });

    it("regenerates recovery codes once a second factor is on, showing them once", async () => {
      const tenant = await createAccountTenant(porta);
      const user = await createAccountUser(porta, tenant);
      const page = await signInToAccount(tenant, user.email);
      expect((await postAccount(tenant, page, { intent: "recovery-codes" })).status).toBe(403);
      await postAccount(tenant, page, { intent: "email-codes", value: "on" });
      const res = await postAccount(tenant, page, { intent: "recovery-codes" });
      expect(res.status).toBe(200);
      expect((shown(await res.text()).match(/\b[A-Z0-9]{4}-[A-Z0-9]{4}\b/g) ?? []).length).toBe(10);
      expect(await porta.services.db.prisma.recoveryCode.count({ where: { userId: user.id, usedAt: null } })).toBe(10);
      expect(await audit(user.id, "account.2fa.recovery_codes_regenerated")).toHaveLength(1);
    });
  });

  describe("sessions", () => {
    it("lists this browser and the others with device and IP, ends one, then all the others", async () => {
      const tenant = await createAccountTenant(porta);
      const user = await createAccountUser(porta, tenant);
      const laptop = await signInToAccount(tenant, user.email);
      const phone = await signInToAccount(tenant, user.email, PASSWORD, new TestBrowser({ "user-agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Version/17.0 Mobile Safari/604.1" }));
      const tablet = await signInToAccount(tenant, user.email, PASSWORD, new TestBrowser({ "user-agent": "Mozilla/5.0 (Linux; Android 14) Firefox/128.0" }));
      const page = await openAccount(tenant, laptop.browser);
      const text = shown(page.html);
      expect(text).toContain("Chrome · Linux This browser");
      expect(text).toContain("Safari · iOS");
      expect(text).toContain("Firefox · Android");
      expect(text).toMatch(/IP address (127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)/);
      const handles = [...page.html.matchAll(/name="session" value="([^"]+)"/g)].map((m) => m[1]!);
      expect(handles).toHaveLength(2);

      // A made-up handle, or one of another person's sessions, ends nothing.
      expect((await postAccount(tenant, page, { intent: "end-session", session: "not-a-session" })).status).toBe(404);
      const stranger = await createAccountUser(porta, tenant);
      const strangerPage = await signInToAccount(tenant, stranger.email);
      expect((await postAccount(tenant, strangerPage, { intent: "end-session", session: handles[0]! })).status).toBe(404);

      expect((await postAccount(tenant, page, { intent: "end-session", session: handles[0]! })).status).toBe(303);
      // One of the two other browsers is signed out, the other is not.
      const statuses = await Promise.all([phone, tablet].map(async (p) => (await p.browser.get(tenant.accountUrl)).status));
      expect(statuses.sort()).toEqual([200, 302]);
      expect(await audit(user.id, "account.session_ended")).toHaveLength(1);

      const all = await postAccount(tenant, page, { intent: "end-other-sessions" });
      expect(all.headers.get("location")).toBe(`/${tenant.org.slug}/account?done=others_ended&count=1`);
      expect((await tablet.browser.get(tenant.accountUrl)).status).toBe(302);
      expect((await phone.browser.get(tenant.accountUrl)).status).toBe(302);
      expect((await laptop.browser.get(tenant.accountUrl)).status).toBe(200);
      expect((await strangerPage.browser.get(tenant.accountUrl)).status).toBe(200);
    });

    it("one organization's session cookie is nobody at another organization's account page", async () => {
      const a = await createAccountTenant(porta);
      const b = await createAccountTenant(porta);
      const user = await createAccountUser(porta, a);
      const page = await signInToAccount(a, user.email);
      const forged = new TestBrowser();
      for (const name of ["_session", "_session.sig"]) forged.setCookie(name, page.browser.cookie(name)!, `/${b.org.slug}`);
      expect((await forged.get(b.accountUrl)).status).toBe(302);
    });
  });

  it("shows recent security events: sign-ins with their method and changes", async () => {
    const tenant = await createAccountTenant(porta);
    const user = await createAccountUser(porta, tenant);
    const page = await signInToAccount(tenant, user.email);
    await postAccount(tenant, page, { intent: "email-codes", value: "on" });
    const text = shown((await openAccount(tenant, page.browser)).html);
    expect(text).toContain("Email codes turned on");
    expect(text).toContain("Signed in (password)");
  });

});
