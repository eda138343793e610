import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Language } from "~/i18n/config";
import { interactionOrgKey } from "~/.server/oidc/storage/adapter";
import { TestBrowser } from "../support/browser";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { linkIn, startSmtpPeer, type PeerMail, type SmtpPeer } from "../support/smtp";
import { auditDuring } from "../login/helpers";
import {
  confirmFormOf,
  continueToCallback,
  createTenant,
  drainQueue,
  eventually,
  escapeHtml,
  htmlLang,
  jobRows,
  mailText,
  mainOf,
  openLoginPage,
  pageText,
  redeem,
  requestMagicLinkOn,
  uniqueEmail,
  useMagicLink,
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

/** A user, a login page for the tenant's client, the link requested there and the mail that carries it. */
async function linkFor(options: { tenant?: Tenant; headers?: Record<string, string>; extra?: Record<string, string>; locale?: string } = {}) {
  const t = options.tenant ?? tenant;
  const user = await createUser(prisma(), t.org.id, { email: uniqueEmail("ml"), password: null });
  if (options.locale) await prisma().user.update({ where: { id: user.id }, data: { locale: options.locale } });
  const page = await openLoginPage(t, { ...(options.headers ? { headers: options.headers } : {}), ...(options.extra ? { extra: options.extra } : {}) });
  const requested = await requestMagicLinkOn(page, user.email);
  expect(requested.status).toBe(200);
  const mail = await peer.waitForMail(user.email);
  const link = linkIn(mail, "/magic-link/verify");
  const row = await prisma().magicLinkToken.findFirstOrThrow({ where: { userId: user.id } });
  return { user, page, mail, link, row, tenant: t };
}

const tokenRow = (id: string) => prisma().magicLinkToken.findUniqueOrThrow({ where: { id } });

/** The generic failure page for a link that never existed, to compare every other failure with. */
async function unknownLinkFailure(page: LoginPage, organizationSlug = tenant.org.slug) {
  const bogus = `${porta.baseUrl}/interaction/${page.uid}/magic-link/verify?org=${organizationSlug}&token=${"x".repeat(43)}`;
  const { post } = await useMagicLink(page.browser, bogus);
  return { status: post.status, main: withoutNonces(mainOf(await post.text())) };
}

function expectMailInLanguage(mail: PeerMail, language: Language, t: Tenant, link: string) {
  expect(mail.envelope.from).toBe("no-reply@porta.test");
  expect(mail.parsed.from?.value).toEqual([{ address: "no-reply@porta.test", name: "Porta" }]);
  expect(mail.subject).toBe(mailText(language, (m) => m.magicLink.subject, { organization: t.org.name }));
  expect(mail.text).toContain(mailText(language, (m) => m.magicLink.body, { organization: t.org.name }));
  expect(mail.text).toContain(mailText(language, (m) => m.magicLink.expiry_other, { count: 15 }));
  expect(mail.html).toContain(`href="${escapeHtml(link).replace(/&#x27;/g, "'")}"`);
  expect(mail.html).toMatch(new RegExp(`<html[^>]*lang="${language}"`));
}

describe("the magic-link mail", () => {
  it("is English on an English page, and its link signs in and lands at the relying party with a code", async () => {
    const { user, page, mail, link, row } = await linkFor();
    expect(htmlLang(page.html)).toBe("en");
    expect(mail.envelope.to).toEqual([user.email]);
    expect(mail.to).toEqual([user.email]);
    expect(link).toBe(`${porta.baseUrl}/interaction/${page.uid}/magic-link/verify?org=${tenant.org.slug}&token=${link.split("token=")[1]}`);
    expectMailInLanguage(mail, "en", tenant, link);
    // Only the hash of the link's token is stored.
    expect(row.tokenHash).toBe(porta.services.tokens.hash(new URL(link).searchParams.get("token")!));
    expect(row.tokenHash).not.toContain(new URL(link).searchParams.get("token")!);

    const { get, post } = await useMagicLink(page.browser, link);
    expect(get.status).toBe(200);
    expect([302, 303]).toContain(post.status);
    const { callback } = await continueToCallback(page.browser, post, link);
    expect(callback.searchParams.get("code")).toBeTruthy();
    const tokens = await redeem(page, callback);
    expect(tokens.claims()?.sub).toBe(user.id);
    expect((await tokenRow(row.id)).consumedAt).not.toBeNull();
  });

  it("is German when the browser asks for German (Accept-Language: de), and its link works", async () => {
    const { page, mail, link, user } = await linkFor({ headers: { "accept-language": "de" } });
    expect(htmlLang(page.html)).toBe("de");
    expectMailInLanguage(mail, "de", tenant, link);
    const { post } = await useMagicLink(page.browser, link);
    const { callback } = await continueToCallback(page.browser, post, link);
    expect((await redeem(page, callback)).claims()?.sub).toBe(user.id);
  });

  it("is German when the authorization request asks for ui_locales=de", async () => {
    const { page, mail, link } = await linkFor({ extra: { ui_locales: "de" } });
    expect(htmlLang(page.html)).toBe("de");
    expectMailInLanguage(mail, "de", tenant, link);
  });

  it("follows the user's own locale over the page language", async () => {
    const german = await linkFor({ locale: "de" });
    expect(htmlLang(german.page.html)).toBe("en");
    expectMailInLanguage(german.mail, "de", tenant, german.link);
    const english = await linkFor({ locale: "en", headers: { "accept-language": "de" } });
    expect(htmlLang(english.page.html)).toBe("de");
    expectMailInLanguage(english.mail, "en", tenant, english.link);
  });
});

describe("requesting a link", () => {
  it("answers the same for an existing, an absent and an inactive account; only the existing one gets a mail and a token", async () => {
    const t = await createTenant(porta);
    const existing = await createUser(prisma(), t.org.id, { email: uniqueEmail("present"), password: null });
    const inactive = await createUser(prisma(), t.org.id, { email: uniqueEmail("inactive"), status: "inactive", password: null });
    const absent = uniqueEmail("absent");
    const page = await openLoginPage(t);

    const answers = [];
    for (const email of [existing.email, absent, inactive.email]) {
      const res = await requestMagicLinkOn(page, email);
      const body = await res.text();
      expect(mainOf(body)).toContain(pageText("en", (m) => m.magicLink.sent, { email }));
      answers.push({ status: res.status, body: withoutNonces(body).replaceAll(email, "<email>") });
    }
    expect(answers[0]!.status).toBe(200);
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);

    await drainQueue(porta, "magic-link");
    const jobs = (await jobRows(porta, "magic-link")).filter((j) => [existing.email, absent, inactive.email].includes(String(j.data.email)));
    expect(jobs.map((j) => j.state)).toEqual(["completed", "completed", "completed"]);
    expect(peer.mailsTo(existing.email)).toHaveLength(1);
    expect(peer.mailsTo(absent)).toHaveLength(0);
    expect(peer.mailsTo(inactive.email)).toHaveLength(0);
    const rows = await prisma().magicLinkToken.findMany({ where: { organizationId: t.org.id } });
    expect(rows.map((r) => r.userId)).toEqual([existing.id]);
  });
});

describe("using a link", () => {
  it("works once: the second use fails with the generic answer", async () => {
    const { page, link, row } = await linkFor();
    const generic = await unknownLinkFailure(page);
    expect(generic.status).toBe(400);
    expect(generic.main).toContain(pageText("en", (m) => m.magicLink.invalid));

    const first = await useMagicLink(page.browser, link);
    expect([302, 303]).toContain(first.post.status);
    const consumedAt = (await tokenRow(row.id)).consumedAt;
    expect(consumedAt).not.toBeNull();

    const second = await useMagicLink(page.browser, link);
    expect({ status: second.post.status, main: withoutNonces(mainOf(await second.post.text())) }).toEqual(generic);
    expect((await tokenRow(row.id)).consumedAt).toEqual(consumedAt);
  });

  it("fails generically once expired, without consuming the link", async () => {
    const { page, link, row } = await linkFor();
    await prisma().magicLinkToken.update({ where: { id: row.id }, data: { expiresAt: new Date(Date.now() - 1_000) } });
    const generic = await unknownLinkFailure(page);
    const { post } = await useMagicLink(page.browser, link);
    expect({ status: post.status, main: withoutNonces(mainOf(await post.text())) }).toEqual(generic);
    expect((await tokenRow(row.id)).consumedAt).toBeNull();
  });

  it("fails generically for another existing organization and stays usable with the right one", async () => {
    const { page, link, row, user } = await linkFor();
    const other = await createTenant(porta);
    const wrongOrg = new URL(link);
    wrongOrg.searchParams.set("org", other.org.slug);
    // The same page as a made-up link at that organization's address (branded as the URL says).
    const generic = await unknownLinkFailure(page, other.org.slug);
    const { post } = await useMagicLink(page.browser, wrongOrg.href);
    expect({ status: post.status, main: withoutNonces(mainOf(await post.text())) }).toEqual(generic);
    expect((await tokenRow(row.id)).consumedAt).toBeNull();

    const right = await useMagicLink(page.browser, link);
    const { callback } = await continueToCallback(page.browser, right.post, link);
    expect((await redeem(page, callback)).claims()?.sub).toBe(user.id);
  });

  it("fails generically at another interaction and stays usable at its own", async () => {
    const { page, link, row, user } = await linkFor();
    const otherPage = await openLoginPage(tenant);
    expect(otherPage.uid).not.toBe(page.uid);
    const token = new URL(link).searchParams.get("token")!;
    // The link's values posted to the other interaction's verify endpoint, with that page's own CSRF token.
    const otherLink = `${porta.baseUrl}/interaction/${otherPage.uid}/magic-link/verify?org=${tenant.org.slug}&token=${token}`;
    const opened = await otherPage.browser.get(otherLink);
    const form = confirmFormOf(await opened.text());
    expect(form).toMatchObject({ token, org: tenant.org.slug });
    const post = await otherPage.browser.post(otherLink, form);
    const generic = await unknownLinkFailure(otherPage);
    expect({ status: post.status, main: withoutNonces(mainOf(await post.text())) }).toEqual(generic);
    expect((await tokenRow(row.id)).consumedAt).toBeNull();

    const right = await useMagicLink(page.browser, link);
    const { callback } = await continueToCallback(page.browser, right.post, link);
    expect((await redeem(page, callback)).claims()?.sub).toBe(user.id);
  });

  it("stays consumed when the sign-in cannot continue (another browser, and the asking sign-in is gone)", async () => {
    const { page, link, row } = await linkFor();
    await porta.services.store.del(interactionOrgKey(page.uid));
    const stranger = new TestBrowser();
    const { get, post } = await useMagicLink(stranger, link);
    expect(get.status).toBe(200);
    expect(post.status).toBe(400);
    const main = mainOf(await post.text());
    expect(main).toContain(pageText("en", (m) => m.expired.title));
    expect(main).toContain(pageText("en", (m) => m.magicLink.continuationLost));
    expect((await tokenRow(row.id)).consumedAt).not.toBeNull();

    const generic = await unknownLinkFailure(page);
    const again = await useMagicLink(page.browser, link);
    expect({ status: again.post.status, main: withoutNonces(mainOf(await again.post.text())) }).toEqual(generic);
  });

  it("says what happened on a used link, branded for its organization, with the way back to the application (en, de)", async () => {
    const { page, link } = await linkFor();
    const first = await useMagicLink(page.browser, link);
    expect([302, 303]).toContain(first.post.status);
    for (const language of ["en", "de"] as const) {
      // Opened again later, on the phone: the link stays used; the page is no dead end.
      const phone = new TestBrowser({ "Accept-Language": language });
      const { post } = await useMagicLink(phone, link);
      expect(post.status).toBe(400);
      const html = await post.text();
      const main = mainOf(html);
      expect(htmlLang(html)).toBe(language);
      expect(main).toContain(`<p class="brand-name">${escapeHtml(tenant.org.name)}</p>`);
      expect(main).toContain(pageText(language, (m) => m.magicLink.invalidTitle));
      expect(main).toContain(pageText(language, (m) => m.magicLink.invalid));
      // The way on is the generic one: a made-up link (any address) can name no application.
      expect(main).toContain(pageText(language, (m) => m.reset.backToApplication));
      expect(main).not.toContain(`<a class="button"`);
    }
    // A made-up token at the same address shows the same page: nothing tells the links apart.
    const stranger = new TestBrowser();
    const bogus = `${porta.baseUrl}/interaction/${page.uid}/magic-link/verify?org=${tenant.org.slug}&token=${"y".repeat(43)}`;
    const used = await useMagicLink(stranger, link);
    const madeUp = await useMagicLink(stranger, bogus);
    expect({ status: madeUp.post.status, main: withoutNonces(mainOf(await madeUp.post.text())) }).toEqual({
      status: used.post.status,
      main: withoutNonces(mainOf(await used.post.text())),
    });
  });

  it("shows one page for a used, an expired and a made-up link, whatever sign-in the address names (en, de)", async () => {
    const used = await linkFor();
    expect([302, 303]).toContain((await useMagicLink(used.page.browser, used.link)).post.status);
    const expired = await linkFor();
    await prisma().magicLinkToken.update({ where: { id: expired.row.id }, data: { expiresAt: new Date(Date.now() - 1_000) } });
    // Made up from nothing but the organization's slug: an interaction that never existed, a random token.
    const forged = `${porta.baseUrl}/interaction/${"f".repeat(21)}/magic-link/verify?org=${tenant.org.slug}&token=${"q".repeat(43)}`;
    for (const language of ["en", "de"] as const) {
      const failure = async (link: string) => {
        const { post } = await useMagicLink(new TestBrowser({ "Accept-Language": language }), link);
        return { status: post.status, main: withoutNonces(mainOf(await post.text())) };
      };
      const madeUp = await failure(forged);
      expect(madeUp.status).toBe(400);
      expect(madeUp.main).toContain(pageText(language, (m) => m.magicLink.invalid));
      expect(madeUp.main).toContain(`<p class="brand-name">${escapeHtml(tenant.org.name)}</p>`);
      expect(await failure(used.link)).toEqual(madeUp);
      expect(await failure(expired.link)).toEqual(madeUp);
    }
  });

  it("offers the way back after a lost continuation too, and names no organization for a link whose address names none", async () => {
    const { page, link } = await linkFor();
    await porta.services.store.del(interactionOrgKey(page.uid));
    const lost = await useMagicLink(new TestBrowser(), link);
    expect(lost.post.status).toBe(400);
    const lostMain = mainOf(await lost.post.text());
    expect(lostMain).toContain(pageText("en", (m) => m.magicLink.continuationLost));
    expect(lostMain).toContain(`<p class="brand-name">${escapeHtml(tenant.org.name)}</p>`);
    // The index is gone, so no client is known: the text says where to go, no button guesses.
    expect(lostMain).not.toContain(`<a class="button"`);
    expect(lostMain).toContain(pageText("en", (m) => m.reset.backToApplication));

    const nowhere = `${porta.baseUrl}/interaction/${page.uid}/magic-link/verify?org=no-such-organization&token=${"z".repeat(43)}`;
    const { post } = await useMagicLink(new TestBrowser(), nowhere);
    expect(post.status).toBe(400);
    const main = mainOf(await post.text());
    expect(main).not.toContain("brand");
    expect(main).toContain(pageText("en", (m) => m.magicLink.invalid));
  });

  it("is never consumed by opening it (GET), however often", async () => {
    const { page, link, row, user } = await linkFor();
    for (let i = 0; i < 3; i++) {
      const res = await page.browser.get(link);
      expect(res.status).toBe(200);
      expect(mainOf(await res.text())).toContain(pageText("en", (m) => m.magicLink.confirmTitle));
      // A mail scanner without the browser's cookies opening it does not consume it either.
      expect((await new TestBrowser().get(link)).status).toBe(200);
    }
    expect((await tokenRow(row.id)).consumedAt).toBeNull();
    const { post } = await useMagicLink(page.browser, link);
    const { callback } = await continueToCallback(page.browser, post, link);
    expect((await redeem(page, callback)).claims()?.sub).toBe(user.id);
  });

  it("goes from the link straight to consent, without a second factor even where the organization requires one", async () => {
    const strict = await createTenant(porta, { twoFactorPolicy: "required_email" });
    const { page, link, user } = await linkFor({ tenant: strict });
    const { post } = await useMagicLink(page.browser, link);
    const { callback, visited, consentShown } = await continueToCallback(page.browser, post, link);
    expect(consentShown).toBe(true);
    expect(visited.filter((url) => url.includes("/interaction/")).every((url) => !/two-factor/.test(url))).toBe(true);
    // Only the provider's resume step and the consent page lie between the link and the relying party.
    const pages = visited.filter((url) => new URL(url).pathname.startsWith("/interaction/"));
    expect(pages).toHaveLength(1);
    expect((await redeem(page, callback)).claims()?.sub).toBe(user.id);
  });

  it("is audited: auth.magic_link.sent when mailed, auth.magic_link.verified when used", async () => {
    const { page, link, user } = await linkFor();
    // Written by the job with the link's token row, just before the mail goes out.
    const sent = await eventually(
      () => prisma().auditEntry.findMany({ where: { eventType: "auth.magic_link.sent", targetId: user.id } }),
      (rows) => rows.length > 0,
    );
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ organizationId: tenant.org.id, data: { email: user.email } });
    expect(sent[0]!.ip).toMatch(/127\.0\.0\.1/);
    expect(JSON.stringify(sent[0]!.data)).not.toContain(new URL(link).searchParams.get("token")!);

    const { post } = await useMagicLink(page.browser, link);
    await continueToCallback(page.browser, post, link);
    const verified = await prisma().auditEntry.findMany({ where: { eventType: "auth.magic_link.verified", targetId: user.id } });
    expect(verified).toHaveLength(1);
    expect(verified[0]).toMatchObject({ organizationId: tenant.org.id, actorId: user.id });
  });
});

describe("a link opened on another device while the asking sign-in is open (decision 033)", () => {
  const numberOn = (html: string) => /<p class="pairing-code"[^>]*>(\d{2})<\/p>/.exec(html)?.[1];

  /** The asking page's number, and the link's pairing page in another browser. */
  async function pairing() {
    const { user, page, link, row } = await linkFor();
    const asked = await requestMagicLinkOn(page, user.email);
    const code = numberOn(mainOf(await asked.text()));
    expect(code).toMatch(/^\d{2}$/);
    const phone = new TestBrowser();
    const { post } = await useMagicLink(phone, link);
    expect(post.status).toBe(200);
    const html = await post.text();
    expect(mainOf(html)).toContain(pageText("en", (m) => m.magicLink.pairTitle));
    expect(mainOf(html)).toContain(tenant.org.name);
    // Nothing is used up by opening it there.
    expect((await tokenRow(row.id)).consumedAt).toBeNull();
    const submit = (typed: string) => phone.post(link, { ...confirmFormOf(html), code: typed });
    return { user, page, link, row, code: code!, phone, submit };
  }

  const status = async (browser: TestBrowser, uid: string) => {
    const res = await browser.get(`${porta.baseUrl}/interaction/${uid}/magic-link/status`);
    return { status: res.status, body: (await res.json()) as unknown };
  };

  it("signs the asking browser in once the number it shows is typed on the phone", async () => {
    const { user, page, row, code, phone, submit } = await pairing();
    expect(await status(page.browser, page.uid)).toEqual({ status: 200, body: { confirmed: false } });
    // The phone cannot ask about the sign-in: only the browser that holds it can.
    expect((await status(phone, page.uid)).status).toBe(400);

    const { entries } = await auditDuring(porta, { eventType: "auth.magic_link.verified", organizationId: tenant.org.id }, async () => {
      const res = await submit(code);
      expect(res.status).toBe(200);
      expect(mainOf(await res.text())).toContain(pageText("en", (m) => m.magicLink.paired));
    });
    expect(entries.map((e) => e.targetId)).toEqual([user.id]);
    expect((await tokenRow(row.id)).consumedAt).not.toBeNull();
    // The phone signed nobody in on itself.
    expect(await prisma().user.findUniqueOrThrow({ where: { id: user.id } }).then((u) => u.lastLoginAt)).toBeNull();

    expect(await status(page.browser, page.uid)).toEqual({ status: 200, body: { confirmed: true } });
    const wait = await page.browser.get(`${page.interactionUrl}/magic-link/wait`);
    expect(wait.status).toBe(303);
    const { callback } = await continueToCallback(page.browser, wait, `${page.interactionUrl}/magic-link/wait`);
    expect((await redeem(page, callback)).claims()?.sub).toBe(user.id);
    const logins = await prisma().auditEntry.findMany({ where: { eventType: "auth.login.success", targetId: user.id } });
    expect(logins.map((e) => (e.data as { method?: string }).method)).toEqual(["magic_link"]);
  });

  it("refuses a wrong number without using the link up; the third wrong number burns it and signs nobody in", async () => {
    const { page, row, code, submit, link } = await pairing();
    const wrong = code === "10" ? "11" : "10";
    for (let i = 0; i < 2; i++) {
      const res = await submit(wrong);
      expect(res.status).toBe(422);
      expect(mainOf(await res.text())).toContain(pageText("en", (m) => m.magicLink.pairWrong));
      expect((await tokenRow(row.id)).consumedAt).toBeNull();
    }
    const third = await submit(wrong);
    expect(third.status).toBe(400);
    expect(mainOf(await third.text())).toContain(pageText("en", (m) => m.magicLink.pairExhausted));
    expect((await tokenRow(row.id)).consumedAt).not.toBeNull();
    // The right number is too late now, and the asking browser is not signed in.
    expect((await submit(code)).status).toBe(400);
    expect(await status(page.browser, page.uid)).toEqual({ status: 200, body: { confirmed: false } });
    const wait = await page.browser.get(`${page.interactionUrl}/magic-link/wait`);
    expect(wait.status).toBe(200);
    expect(mainOf(await wait.text())).toContain(pageText("en", (m) => m.magicLink.notYet));
    // In the asking browser itself the burnt link fails like any used one.
    const again = await useMagicLink(page.browser, link);
    expect(again.post.status).toBe(400);
  });

  it("still signs in directly when opened in the asking browser, with the number shown", async () => {
    const { user, page, link } = await linkFor();
    const { post } = await useMagicLink(page.browser, link);
    const { callback } = await continueToCallback(page.browser, post, link);
    expect((await redeem(page, callback)).claims()?.sub).toBe(user.id);
  });
});
