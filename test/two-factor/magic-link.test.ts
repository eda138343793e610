import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadPending } from "~/.server/sign-in/pending";
import { csrfOf } from "../support/browser";
import { startTestPorta, type TestPorta } from "../support/porta";
import { startSmtpSink, type SmtpSink } from "../support/smtp-sink";
import {
  auditEntries,
  createTenant,
  createUserInState,
  magicLinkIn,
  mainOf,
  next,
  openLoginPage,
  POLICIES,
  redeem,
  signInWithPassword,
  toCallback,
  waitForMail,
  type Policy,
  type Tenant,
  type UserState,
} from "./helpers";

/**
 * A magic-link login is never followed by a second factor, whatever the organization's policy
 * and whatever the person has enrolled: the link from the mail, the page it opens, its form,
 * and the relying party.
 */
// Argon2id (recovery codes) and a server start per file are slow on a shared, busy machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 240_000 });
let sink: SmtpSink;
let porta: TestPorta;
const tenants = {} as Record<Policy, Tenant>;

beforeAll(async () => {
  sink = await startSmtpSink();
  porta = await startTestPorta({ env: { SMTP_HOST: sink.host, SMTP_PORT: String(sink.port), SMTP_FROM: "Porta <no-reply@porta.test>" } });
  for (const policy of POLICIES) tenants[policy] = await createTenant(porta, policy);
});
afterAll(async () => {
  await porta?.stop();
  await sink?.close();
});

const unescapeHtml = (text: string) => text.replace(/&quot;/g, '"').replace(/&#x27;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

/** Requests a link on the login page, opens it from the mail and submits the page's form, as a person does. */
async function magicLinkLogin(tenant: Tenant, user: { id: string; email: string }, mailCount = 1) {
  const page = await openLoginPage(tenant);
  const requested = await page.browser.post(`${page.interactionUrl}/magic-link`, { csrf: csrfOf(page.html), email: user.email });
  expect(requested.status).toBe(200);
  const link = magicLinkIn(await waitForMail(sink, user.email, mailCount));
  expect(new URL(link).pathname).toBe(`/interaction/${page.uid}/magic-link/verify`);
  const confirm = await page.browser.get(link);
  expect(confirm.status).toBe(200);
  const html = mainOf(await confirm.text());
  const form = /<form[^>]*action="([^"]*)"[^>]*>((?:(?!<\/form>).)*)<\/form>/s.exec(html);
  if (!form) throw new Error(`no form on the link page: ${html.slice(0, 500)}`);
  const fields = Object.fromEntries([...form[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, unescapeHtml(m[2]!)]));
  const action = new URL(unescapeHtml(form[1]!), link).href;
  const posted = await page.browser.post(action, fields);
  expect(posted.status).toBe(302);
  const step = await next(page.browser, posted, action);
  return { page, step };
}

describe("a magic-link login", () => {
  const cases: Array<[Policy, UserState]> = [
    ["required_totp", "none"],
    ["required_totp", "totp"],
    ["required_email", "none"],
    ["required_any", "totp"],
    ["optional", "totp"],
    ["optional", "email"],
  ];

  it.each(cases)("under %s (user state %s) lands at the relying party without a second factor", async (policy, state) => {
    const tenant = tenants[policy];
    const user = await createUserInState(porta, tenant, state);
    const { page, step } = await magicLinkLogin(tenant, user);
    expect(["consent", "callback"]).toContain(step.kind);
    const tokens = await redeem(page, await toCallback(page.browser, step));
    expect(tokens.claims()?.sub).toBe(user.id);

    // No second factor was started: no code mailed or stored, nothing pending, no 2FA audit, no enrollment.
    expect(await porta.services.db.prisma.emailOtpCode.count({ where: { userId: user.id } })).toBe(0);
    expect(await loadPending(porta.services.store, page.uid)).toBeNull();
    expect(await auditEntries(porta, { eventType: { startsWith: "auth.2fa." }, targetId: user.id })).toEqual([]);
    const totp = await porta.services.db.prisma.totpCredential.findUnique({ where: { userId: user.id } });
    expect(totp?.status ?? "none").toBe(state === "totp" ? "enrolled" : "none");
    const [success] = await auditEntries(porta, { eventType: "auth.login.success", targetId: user.id });
    expect(success?.data).toMatchObject({ method: "magic_link" });
  });

  it("is not prompted even after a password login of the same person was left at the second factor", async () => {
    const tenant = tenants.required_totp;
    const user = await createUserInState(porta, tenant, "totp");
    // A password login elsewhere stops at the TOTP page...
    const pwd = await signInWithPassword(await openLoginPage(tenant), user.email);
    expect(pwd.kind).toBe("totp");
    // ...while the link signs the person in at once.
    const { page, step } = await magicLinkLogin(tenant, user);
    expect(["consent", "callback"]).toContain(step.kind);
    expect((await redeem(page, await toCallback(page.browser, step))).claims()?.sub).toBe(user.id);
  });
});
