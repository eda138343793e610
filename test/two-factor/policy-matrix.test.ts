import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
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
  mailsTo,
  openLoginPage,
  POLICIES,
  redeem,
  signInWithPassword,
  submitCode,
  toCallback,
  USER_STATES,
  waitForMail,
  type LoginPage,
  type Policy,
  type Step,
  type Tenant,
  type TestUser,
  type UserState,
} from "./helpers";

/**
 * Every organization policy × every user state, through the real pages: what the person is
 * asked after the password, and that answering it lands at the relying party with a code that
 * the token endpoint accepts for that person. Emailed codes come from a real SMTP peer.
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

type Prompt = "none" | "email" | "totp" | "setup" | "choose";

/** What the person is asked, and whether "use a recovery code" is offered. */
const EXPECTED: Record<Policy, Record<UserState, { prompt: Prompt; recovery: boolean }>> = {
  optional: {
    none: { prompt: "none", recovery: false },
    email: { prompt: "email", recovery: false },
    totp: { prompt: "totp", recovery: true },
    "recovery-used": { prompt: "totp", recovery: false },
  },
  required_email: {
    none: { prompt: "email", recovery: false },
    email: { prompt: "email", recovery: false },
    totp: { prompt: "email", recovery: true },
    "recovery-used": { prompt: "email", recovery: false },
  },
  required_totp: {
    none: { prompt: "setup", recovery: false },
    email: { prompt: "setup", recovery: false },
    totp: { prompt: "totp", recovery: true },
    "recovery-used": { prompt: "totp", recovery: false },
  },
  required_any: {
    none: { prompt: "email", recovery: false },
    email: { prompt: "email", recovery: false },
    totp: { prompt: "choose", recovery: true },
    "recovery-used": { prompt: "choose", recovery: false },
  },
};

/** Answers a prompt as the person would, and returns the step after it. */
async function answer(page: LoginPage, user: TestUser, step: Step, state: UserState): Promise<{ after: Step; method: "otp" | "totp" | null }> {
  if (step.kind === "email") {
    const mail = await waitForMail(sink, user.email);
    const { res, step: after } = await submitCode(page.browser, step, codeIn(mail));
    expect(res.status).toBe(302);
    return { after: after!, method: "otp" };
  }
  if (step.kind === "totp") {
    const { res, step: after } = await submitCode(page.browser, step, await freshTotpCode(porta, user.id, user.totpSecret!));
    expect(res.status).toBe(302);
    return { after: after!, method: "totp" };
  }
  if (step.kind === "choose") {
    // The enrolled person picks the app; the one whose recovery codes are gone picks email.
    const picked = await choose(page.browser, step, state === "totp" ? "totp" : "email");
    expect(picked.kind).toBe(state === "totp" ? "totp" : "email");
    return answer(page, user, picked, state);
  }
  if (step.kind === "setup") {
    const { recoveryCodes, after } = await completeSetup(page.browser, step);
    expect(recoveryCodes).toHaveLength(10);
    return { after, method: null };
  }
  return { after: step, method: null };
}

describe.each(POLICIES)("policy %s", (policy) => {
  it.each(USER_STATES)("user state %s", async (state) => {
    const tenant = tenants[policy];
    const user = await createUserInState(porta, tenant, state);
    const expected = EXPECTED[policy][state];
    const page = await openLoginPage(tenant);
    const first = await signInWithPassword(page, user.email);

    // What the person is asked.
    if (expected.prompt === "none") {
      expect(["consent", "callback"]).toContain(first.kind);
    } else {
      expect(first.kind).toBe(expected.prompt);
      expect(new URL(first.url).pathname).toBe(expected.prompt === "setup" ? `/interaction/${page.uid}/two-factor/setup` : `/interaction/${page.uid}/two-factor`);
    }
    if (first.kind === "totp" || first.kind === "email") expect(first.recoveryLink).toBe(expected.recovery);
    if (first.kind === "choose") {
      expect(first.methods).toEqual(["totp", "email"]);
      expect(first.html.includes(`href="/interaction/${page.uid}/two-factor?method=recovery"`)).toBe(expected.recovery);
    }
    if (first.kind === "setup") {
      expect(first.secret).toMatch(/^[A-Z2-7]{4}( [A-Z2-7]{4}){7}$/);
      expect(first.html).toMatch(/<img src="data:image\/png;base64,[^"]+"/);
    }
    // An email code is created (and mailed) exactly when the page asks for one.
    const emailCodes = await porta.services.db.prisma.emailOtpCode.count({ where: { userId: user.id } });
    expect(emailCodes).toBe(first.kind === "email" ? 1 : 0);

    // Answering it lands at the relying party with a code for this person.
    const { after, method } = await answer(page, user, first, state);
    const callback = await toCallback(page.browser, after);
    const tokens = await redeem(page, callback);
    expect(tokens.claims()?.sub).toBe(user.id);

    const verified = await auditEntries(porta, { eventType: "auth.2fa.verified", targetId: user.id });
    expect(verified.map((e) => e.data)).toEqual(method ? [{ userId: user.id, method }] : []);
    if (expected.prompt === "setup") {
      const status = await porta.services.db.prisma.totpCredential.findUniqueOrThrow({ where: { userId: user.id } });
      expect(status.status).toBe("enrolled");
      expect(await porta.services.db.prisma.recoveryCode.count({ where: { userId: user.id, usedAt: null } })).toBe(10);
    }
    if (first.kind !== "email" && !(first.kind === "choose" && state !== "totp")) expect(mailsTo(sink, user.email)).toEqual([]);
  });
});
