import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemActor } from "~/.server/auth/actors";
import { inviteUser, previewInvitation } from "~/.server/auth/invitations";
import { inTransaction, readContext } from "~/.server/context";
import type { Language } from "~/i18n/config";
import { csrfOf, TestBrowser } from "../support/browser";
import { startTestPorta, type TestPorta } from "../support/porta";
import { linkIn, startSmtpPeer, type SmtpPeer } from "../support/smtp";
import {
  continueToCallback,
  createTenant,
  drainQueue,
  htmlLang,
  mailText,
  mainOf,
  openLoginPage,
  pageText,
  passwordSignIn,
  redeem,
  requestMagicLinkOn,
  uniqueEmail,
  useMagicLink,
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
const CHOSEN_PASSWORD = "my invited passphrase 9";

async function invite(t: Tenant, language: Language, extra: { invitedBy?: string } = {}) {
  const email = uniqueEmail(`invite-${language}`);
  const outcome = await inTransaction(porta.services, systemActor(null), (ctx) => inviteUser(ctx, { organizationId: t.org.id, email, givenName: "Grace", language, ...extra }));
  const mail = await peer.waitForMail(email);
  const link = linkIn(mail, "/invitation?token=");
  expect(link).toBe(`${porta.baseUrl}/${t.org.slug}/invitation?token=${new URL(link).searchParams.get("token")}`);
  return { email, outcome, mail, link };
}

/** Opens the invitation link and submits its form. */
async function accept(browser: TestBrowser, link: string, fields: Record<string, string>) {
  const page = await browser.get(link);
  const html = await page.text();
  // The form posts back to the page's own address, as a browser submits it.
  const res = await browser.post(link, { csrf: csrfOf(html), token: new URL(link).searchParams.get("token")!, ...fields });
  return { page, html, res, body: await res.text() };
}

describe("inviting", () => {
  it("returns the invitation outcome and creates no user", async () => {
    const email = uniqueEmail("outcome");
    const before = Date.now();
    const outcome = await inTransaction(porta.services, systemActor(null), (ctx) => inviteUser(ctx, { organizationId: tenant.org.id, email: email.toUpperCase(), language: "en" }));
    expect(Object.keys(outcome).sort()).toEqual(["email", "expiresAt", "invitationId", "invitationSent"]);
    expect(outcome).toMatchObject({ email, invitationSent: true });
    expect(typeof outcome.invitationId).toBe("string");
    expect(outcome.expiresAt).toBeInstanceOf(Date);
    const sevenDays = 7 * 86_400_000;
    expect(outcome.expiresAt.getTime()).toBeGreaterThanOrEqual(before + sevenDays - 1_000);
    expect(outcome.expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + sevenDays + 1_000);
    await peer.waitForMail(email);
    expect(await prisma().user.count({ where: { organizationId: tenant.org.id, email } })).toBe(0);
    const stored = await prisma().invitation.findUniqueOrThrow({ where: { id: outcome.invitationId } });
    expect(stored.acceptedAt).toBeNull();
  });

  it("previews the mail without sending it or storing an invitation", async () => {
    const email = uniqueEmail("preview");
    const preview = await previewInvitation(readContext(porta.services, systemActor(null)), { organizationId: tenant.org.id, email, language: "de", invitedBy: "Ada" });
    expect(preview.to).toBe(email);
    expect(preview.subject).toBe(mailText("de", (m) => m.invitation.subject, { organization: tenant.org.name }));
    expect(preview.text).toContain(mailText("de", (m) => m.invitation.bodyInvitedBy, { organization: tenant.org.name, invitedBy: "Ada" }));
    expect(preview.html).toContain("<html");
    await drainQueue(porta, "invitation");
    expect(peer.mailsTo(email)).toHaveLength(0);
    expect(await prisma().invitation.count({ where: { email } })).toBe(0);
  });
});

describe("the invitation mail", () => {
  it("is English when invited in English; its link creates the user, who can then sign in; a second acceptance fails", async () => {
    const { email, mail, link } = await invite(tenant, "en");
    expect(mail.envelope.from).toBe("no-reply@porta.test");
    expect(mail.envelope.to).toEqual([email]);
    expect(mail.subject).toBe(mailText("en", (m) => m.invitation.subject, { organization: tenant.org.name }));
    expect(mail.text).toContain(mailText("en", (m) => m.invitation.body, { organization: tenant.org.name }));
    expect(mail.text).toContain(mailText("en", (m) => m.invitation.expiry_other, { count: 7 }));
    expect(mail.html).toMatch(/<html[^>]*lang="en"/);
    expect(mail.html).toContain(`href="${link}"`);

    const browser = new TestBrowser();
    const accepted = await accept(browser, link, { givenName: "Grace", familyName: "Hopper", password: CHOSEN_PASSWORD });
    expect(htmlLang(accepted.html)).toBe("en");
    expect(mainOf(accepted.html)).toContain(pageText("en", (m) => m.invitation.password));
    expect(accepted.res.status).toBe(200);
    expect(mainOf(accepted.body)).toContain(pageText("en", (m) => m.invitation.done));
    expect(mainOf(accepted.body)).toContain(pageText("en", (m) => m.invitation.doneTitle));
    expect(mainOf(accepted.body)).toContain(tenant.org.name);
    // The next step: the organization's account page (an accepted invitation is no dead end).
    const toAccount = `<a class="button" href="/${tenant.org.slug}/account">${pageText("en", (m) => m.invitation.toAccount)}</a>`;
    expect(mainOf(accepted.body)).toContain(toAccount);

    const user = await prisma().user.findFirstOrThrow({ where: { organizationId: tenant.org.id, email } });
    expect(user).toMatchObject({ givenName: "Grace", familyName: "Hopper", emailVerified: true, locale: "en", status: "active" });
    expect(user.passwordHash).toMatch(/^\$argon2id\$/);
    const signedIn = await passwordSignIn(tenant, email, CHOSEN_PASSWORD);
    expect(signedIn.tokens?.claims()?.sub).toBe(user.id);

    // The same link again, with a fresh form: refused, and no second user.
    const again = await browser.get(link);
    expect(again.status).toBe(400);
    const againMain = mainOf(await again.text());
    expect(againMain).toContain(pageText("en", (m) => m.invitation.invalid));
    // Still the organization's page: the address names it (no unbranded dead end).
    expect(againMain).toContain(tenant.org.name);
    expect(againMain).toContain(toAccount);
    // An address that names no organization offers no account page of one.
    const nowhere = new URL(link);
    nowhere.pathname = "/no-such-organization/invitation";
    const unknown = await browser.get(nowhere.href);
    expect(unknown.status).toBe(400);
    expect(mainOf(await unknown.text())).not.toContain("/account");
    const replay = await browser.post(link, {
      csrf: csrfOf(accepted.html),
      token: new URL(link).searchParams.get("token")!,
      givenName: "Eve",
      familyName: "Replay",
      password: CHOSEN_PASSWORD,
    });
    expect(replay.status).toBe(400);
    expect(mainOf(await replay.text())).toContain(pageText("en", (m) => m.invitation.invalid));
    expect(await prisma().user.count({ where: { organizationId: tenant.org.id, email } })).toBe(1);
  });

  it("is German when invited in German; the page is German too, refuses a breached password in German, and the user can sign in", async () => {
    const { email, mail, link } = await invite(tenant, "de", { invitedBy: "Ada Lovelace" });
    expect(mail.subject).toBe(mailText("de", (m) => m.invitation.subject, { organization: tenant.org.name }));
    expect(mail.text).toContain(mailText("de", (m) => m.invitation.bodyInvitedBy, { organization: tenant.org.name, invitedBy: "Ada Lovelace" }));
    expect(mail.text).toContain(mailText("de", (m) => m.invitation.expiry_other, { count: 7 }));
    expect(mail.html).toMatch(/<html[^>]*lang="de"/);

    const browser = new TestBrowser();
    const weak = await accept(browser, link, { givenName: "Grete", familyName: "Hopper", password: "password123" });
    expect(htmlLang(weak.html)).toBe("de");
    expect(weak.res.status).toBe(422);
    expect(mainOf(weak.body)).toContain(pageText("de", (m) => m.passwordPolicy.breached));
    expect(await prisma().user.count({ where: { organizationId: tenant.org.id, email } })).toBe(0);

    const accepted = await accept(browser, link, { givenName: "Grete", familyName: "Hopper", password: CHOSEN_PASSWORD });
    expect(accepted.res.status).toBe(200);
    expect(mainOf(accepted.body)).toContain(pageText("de", (m) => m.invitation.done));
    const user = await prisma().user.findFirstOrThrow({ where: { organizationId: tenant.org.id, email } });
    expect(user.locale).toBe("de");
    expect((await passwordSignIn(tenant, email, CHOSEN_PASSWORD)).tokens?.claims()?.sub).toBe(user.id);
  });

  it("asks for no password in a magic-link-only organization; the user is created without one and signs in by link", async () => {
    const linkOnly = await createTenant(porta, { defaultLoginMethods: ["magic_link"] });
    const { email, link } = await invite(linkOnly, "en");
    const browser = new TestBrowser();
    const accepted = await accept(browser, link, { givenName: "Linus", familyName: "Link", password: "ignored but present 123" });
    expect(mainOf(accepted.html)).not.toMatch(/<input[^>]*name="password"/);
    expect(mainOf(accepted.html)).toContain(pageText("en", (m) => m.invitation.magicLinkOnly));
    expect(accepted.res.status).toBe(200);
    const user = await prisma().user.findFirstOrThrow({ where: { organizationId: linkOnly.org.id, email } });
    expect(user.passwordHash).toBeNull();

    const page = await openLoginPage(linkOnly);
    expect((await requestMagicLinkOn(page, email)).status).toBe(200);
    const signInLink = linkIn(await peer.waitForMail(email, { count: 2 }), "/magic-link/verify");
    const { post } = await useMagicLink(page.browser, signInLink);
    const { callback } = await continueToCallback(page.browser, post, signInLink);
    expect((await redeem(page, callback)).claims()?.sub).toBe(user.id);
  });
});
