import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { csrfOf, TestBrowser } from "../support/browser";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { startSmtpSink, type SmtpSink } from "../support/smtp-sink";
import { mailsTo, waitForMail } from "../two-factor/helpers";
import type { ReceivedMail } from "../support/smtp-sink";
import { ageSignIns, createAccountTenant, createAccountUser, openAccount, PASSWORD, postAccount, shown, signInToAccount, type AccountTenant, type SignedInPage } from "./helpers";

/**
 * Email with re-verification (decision 042): a person asks for a new address on the account page
 * (after a recent sign-in); the link goes to the new address and a notice to the current one;
 * the address changes, verified, only when the link is used, in any browser; the page never says
 * whether another account has the address.
 */
describe("account page: changing the email address", () => {
  let porta: TestPorta;
  let sink: SmtpSink;
  const userRow = (id: string) => porta.services.db.prisma.user.findUniqueOrThrow({ where: { id } });
  const audit = (userId: string, eventType: string) => porta.services.db.prisma.auditEntry.findMany({ where: { targetId: userId, eventType } });
  const fresh = () => `new-${Math.random().toString(16).slice(2, 10)}@example.org`;
  const linkOf = (mail: ReceivedMail) => {
    const match = /https?:\/\/\S+\/account\/email\?token=[^\s"<>]+/.exec(mail.parsed.text ?? "");
    if (!match) throw new Error(`no confirmation link in: ${mail.parsed.text}`);
    return match[0].replace(/&amp;/g, "&");
  };

  beforeAll(async () => {
    sink = await startSmtpSink();
    porta = await startTestPorta({ env: { SMTP_HOST: sink.host, SMTP_PORT: String(sink.port), SMTP_FROM: "Porta <no-reply@porta.test>" } });
  });
  afterAll(async () => {
    await porta.stop();
    await sink.close();
  });

  async function ask(tenant: AccountTenant, page: SignedInPage, newEmail: string) {
    return postAccount(tenant, page, { intent: "email", newEmail });
  }

  it("mails a link to the new address and a notice to the old one; the link opens in another browser and changes the address, verified", async () => {
    const tenant = await createAccountTenant(porta);
    const user = await createAccountUser(porta, tenant);
    const page = await signInToAccount(tenant, user.email);
    const next = fresh();

    const res = await ask(tenant, page, `  ${next.toUpperCase()} `);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/${tenant.org.slug}/account?done=email_sent`);
    const after = shown(await (await page.browser.get(new URL(res.headers.get("location")!, tenant.accountUrl).href)).text());
    expect(after).toContain("We sent a confirmation link to the new address");
    expect(after).toContain(`A link was sent to ${next}.`);
    // Nothing changes before the link is used.
    expect((await userRow(user.id)).email).toBe(user.email);

    const notice = await waitForMail(sink, user.email);
    expect(notice.parsed.subject).toBe(`Your ${tenant.org.name} email address is about to change`);
    expect(notice.parsed.text).toContain(next);
    expect(notice.parsed.text).not.toContain("/account/email?token=");
    const mail = await waitForMail(sink, next);
    expect(mail.parsed.subject).toBe(`Confirm your new email address for ${tenant.org.name}`);
    const link = linkOf(mail);

    // The phone: no session at all. The GET only asks; a link scanner changes nothing.
    const phone = new TestBrowser();
    const opened = await phone.get(link);
    expect(opened.status).toBe(200);
    const html = await opened.text();
    expect(shown(html)).toContain(`Use ${next} as the email address of your ${tenant.org.name} account?`);
    expect((await userRow(user.id)).email).toBe(user.email);

    const confirmed = await phone.post(link, { csrf: csrfOf(html), token: new URL(link).searchParams.get("token")! });
    expect(confirmed.status).toBe(200);
    expect(shown(await confirmed.text())).toContain(`now uses ${next}`);
    expect(await userRow(user.id)).toMatchObject({ email: next, emailVerified: true });
    const [entry] = await audit(user.id, "account.email_changed");
    expect(entry?.data).toEqual({ previousEmail: user.email, newEmail: next });
    expect(await audit(user.id, "account.email_change_requested")).toHaveLength(1);

    // The link is single-use, and the new address signs in with the same password.
    const again = await phone.get(link);
    expect(again.status).toBe(400);
    expect(shown(await again.text())).toContain("This link was already used");
    await signInToAccount(tenant, next, PASSWORD);
  });

  it("speaks German in the mails and on the confirmation page for a person who chose German", async () => {
    const tenant = await createAccountTenant(porta);
    const user = await createAccountUser(porta, tenant);
    await porta.services.db.prisma.user.update({ where: { id: user.id }, data: { locale: "de" } });
    const page = await signInToAccount(tenant, user.email);
    const next = fresh();
    expect((await ask(tenant, page, next)).status).toBe(303);
    const mail = await waitForMail(sink, next);
    expect(mail.parsed.subject).toBe(`Bestätigen Sie Ihre neue E-Mail-Adresse für ${tenant.org.name}`);
    expect((await waitForMail(sink, user.email)).parsed.subject).toBe(`Ihre E-Mail-Adresse bei ${tenant.org.name} soll geändert werden`);
    const opened = await new TestBrowser().get(linkOf(mail));
    expect(shown(await opened.text())).toContain("Neue E-Mail-Adresse bestätigen");
  });

  it("refuses bad input next to the field (422) and writes nothing", async () => {
    const tenant = await createAccountTenant(porta);
    const user = await createAccountUser(porta, tenant);
    const page = await signInToAccount(tenant, user.email);
    const cases: Array<[string, string]> = [
      ["not an address", "Enter an email address, like name@example.com."],
      [`${"x".repeat(250)}@example.org`, "Enter an email address, like name@example.com."],
      ["ada\u0000@example.org", "This contains characters that cannot be stored."],
      // A lone surrogate cannot travel in UTF-8: it arrives as U+FFFD, which no address holds.
      ["ada\uD800@example.org", "Enter an email address, like name@example.com."],
      [user.email.toUpperCase(), "This is already your email address."],
    ];
    for (const [value, message] of cases) {
      const res = await ask(tenant, page, value);
      expect(res.status, value).toBe(422);
      expect(shown(await res.text())).toContain(message);
    }
    expect(await audit(user.id, "account.email_change_requested")).toHaveLength(0);
    expect(await porta.services.db.prisma.emailChangeToken.count({ where: { userId: user.id } })).toBe(0);
  });

  it("asks for a recent sign-in first (step-up) and refuses another browser's CSRF token", async () => {
    const tenant = await createAccountTenant(porta);
    const user = await createAccountUser(porta, tenant);
    const page = await signInToAccount(tenant, user.email);
    const other = await signInToAccount(tenant, user.email);
    const forged = await postAccount(tenant, { ...page, csrf: other.csrf }, { intent: "email", newEmail: fresh() });
    expect(forged.status).toBe(403);

    await ageSignIns(porta, tenant, user.id, 20 * 60);
    const stale = await openAccount(tenant, page.browser);
    expect(shown(stale.html)).toContain("To change your email address, password or two-factor settings, confirm it is you.");
    const res = await ask(tenant, stale, fresh());
    expect(res.status).toBe(303);
    const location = new URL(res.headers.get("location")!, tenant.accountUrl);
    expect(location.pathname).toBe(`/${tenant.org.slug}/auth/authorize`);
    expect(location.searchParams.get("prompt")).toBe("login");
    expect(await porta.services.db.prisma.emailChangeToken.count({ where: { userId: user.id } })).toBe(0);
  });

  it("answers the same for an address another account has, mails it nothing, and the confirmation re-checks", async () => {
    const tenant = await createAccountTenant(porta);
    const user = await createAccountUser(porta, tenant);
    const taken = await createAccountUser(porta, tenant);
    const page = await signInToAccount(tenant, user.email);
    const res = await ask(tenant, page, taken.email);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/${tenant.org.slug}/account?done=email_sent`);
    await waitForMail(sink, user.email);
    expect(mailsTo(sink, taken.email)).toHaveLength(0);
    const [entry] = await audit(user.id, "account.email_change_requested");
    expect(entry?.data).toEqual({ newEmail: taken.email, addressTaken: true });

    // An address free at the request and taken before the link is used stays with its owner.
    const next = fresh();
    expect((await ask(tenant, page, next)).status).toBe(303);
    const link = linkOf(await waitForMail(sink, next));
    await createUser(porta.services.db.prisma, tenant.org.id, { email: next, password: PASSWORD });
    const browser = new TestBrowser();
    const html = await (await browser.get(link)).text();
    const confirmed = await browser.post(link, { csrf: csrfOf(html), token: new URL(link).searchParams.get("token")! });
    expect(confirmed.status).toBe(409);
    expect(shown(await confirmed.text())).toContain("Another account already uses this address");
    expect((await userRow(user.id)).email).toBe(user.email);
  });

  it("a newer request ends the earlier link; another organization's slug, a made-up token and an expired link say so, branded", async () => {
    const tenant = await createAccountTenant(porta, { name: "Northwind Traders" });
    const elsewhere = await createAccountTenant(porta);
    const user = await createAccountUser(porta, tenant);
    const page = await signInToAccount(tenant, user.email);
    const first = fresh();
    const second = fresh();
    expect((await ask(tenant, page, first)).status).toBe(303);
    const firstLink = linkOf(await waitForMail(sink, first));
    expect((await ask(tenant, page, second)).status).toBe(303);
    const secondLink = linkOf(await waitForMail(sink, second));

    const browser = new TestBrowser();
    const superseded = await browser.get(firstLink);
    expect(superseded.status).toBe(400);
    const supersededText = shown(await superseded.text());
    expect(supersededText).toContain("replaced by a newer one");
    expect(supersededText).toContain("Go to your account page");

    const foreign = await browser.get(secondLink.replace(`/${tenant.org.slug}/`, `/${elsewhere.org.slug}/`));
    expect(foreign.status).toBe(400);
    expect(shown(await foreign.text())).toContain("This link does not work");
    const madeUp = await browser.get(`${porta.baseUrl}/${tenant.org.slug}/account/email?token=${"A".repeat(43)}`);
    expect(madeUp.status).toBe(400);
    const madeUpHtml = await madeUp.text();
    expect(madeUpHtml).toContain("Northwind Traders");
    expect(shown(madeUpHtml)).toContain("This link does not work");

    await porta.services.db.prisma.emailChangeToken.updateMany({ where: { userId: user.id, newEmail: second }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const expired = await browser.get(secondLink);
    expect(expired.status).toBe(400);
    expect(shown(await expired.text())).toContain("This link has expired");
    expect((await userRow(user.id)).email).toBe(user.email);
  });

  it("a confirmation posted without the link's CSRF token changes nothing", async () => {
    const tenant = await createAccountTenant(porta);
    const user = await createAccountUser(porta, tenant);
    const page = await signInToAccount(tenant, user.email);
    const next = fresh();
    expect((await ask(tenant, page, next)).status).toBe(303);
    const link = linkOf(await waitForMail(sink, next));
    const res = await new TestBrowser().post(link, { csrf: "forged", token: new URL(link).searchParams.get("token")! });
    expect(res.status).toBe(400);
    expect((await userRow(user.id)).email).toBe(user.email);
  });
});
