import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAuthorization } from "../support/browser";
import { startTestPorta, type TestPorta } from "../support/porta";
import { startSmtpSink, type SmtpSink } from "../support/smtp-sink";
import {
  codeIn,
  createTenant,
  createUserInState,
  openLoginPage,
  redeem,
  RetryingBrowser,
  RP_CALLBACK,
  signInWithPassword,
  submitCode,
  toCallback,
  waitForMail,
  type Step,
  type Tenant,
} from "./helpers";

/**
 * Step-up (decision 044): a relying party that accepts only two factors (`acr_values` of
 * urn:porta:acr:2fa alone) gets them even where the organization's
 * policy asks for none: the password is followed by a second factor (an emailed code for a user
 * who set up nothing), and a session of one factor signs in again instead of answering with 1fa.
 */
const TWO = "urn:porta:acr:2fa";
const ONE = "urn:porta:acr:1fa";
type CodeStep = Extract<Step, { html: string }>;

let porta: TestPorta;
let sink: SmtpSink;
let tenant: Tenant;

beforeAll(async () => {
  sink = await startSmtpSink();
  porta = await startTestPorta({ env: { SMTP_HOST: sink.host, SMTP_PORT: String(sink.port), SMTP_FROM: "Porta <no-reply@porta.test>" } });
  tenant = await createTenant(porta, "optional");
});
afterAll(async () => {
  await porta?.stop();
  await sink?.close();
});

/** The password, then the emailed code the step asks for; returns the ID token's claims. */
async function signInWithTwoFactors(extra: Record<string, string>, browser = new RetryingBrowser()) {
  const user = await createUserInState(porta, tenant, "none");
  const page = await openLoginPage(tenant, browser, extra);
  const step = (await signInWithPassword(page, user.email)) as CodeStep;
  expect(step.kind).toBe("email");
  const mail = await waitForMail(sink, user.email);
  const verified = await submitCode(page.browser, step, codeIn(mail));
  const tokens = await redeem(page, await toCallback(page.browser, verified.step!));
  return { user, browser, claims: tokens.claims()! };
}

describe("step-up to two factors", () => {
  it("acr_values of 2fa alone: a password is followed by an emailed code, and the ID token says 2fa", async () => {
    const { claims } = await signInWithTwoFactors({ acr_values: TWO });
    expect(claims.acr).toBe(TWO);
    expect(claims.amr).toEqual(["pwd", "otp", "mfa"]);
  });

  it("a request that also accepts 1fa asks for nothing more than the policy", async () => {
    const user = await createUserInState(porta, tenant, "none");
    const page = await openLoginPage(tenant, new RetryingBrowser(), { acr_values: `${TWO} ${ONE}` });
    const step = await signInWithPassword(page, user.email);
    expect(["callback", "consent"]).toContain(step.kind);
    expect((await redeem(page, await toCallback(page.browser, step))).claims()!.acr).toBe(ONE);
  });

  it("a session of one factor signs in again when 2fa is asked; prompt=none answers login_required; a 2fa session answers at once", async () => {
    const user = await createUserInState(porta, tenant, "none");
    const browser = new RetryingBrowser();
    const first = await openLoginPage(tenant, browser);
    const one = await signInWithPassword(first, user.email);
    expect((await redeem(first, await toCallback(browser, one))).claims()!.acr).toBe(ONE);

    // The same browser, still signed in: asking for 2fa shows the sign-in page, not the relying party.
    const silent = await startAuthorization({ issuer: tenant.issuer, clientId: tenant.client.id, clientSecret: tenant.secret, redirectUri: RP_CALLBACK, browser, extra: { acr_values: TWO, prompt: "none" } });
    expect(new URL(silent.interactionUrl).searchParams.get("error")).toBe("login_required");
    const again = await startAuthorization({ issuer: tenant.issuer, clientId: tenant.client.id, clientSecret: tenant.secret, redirectUri: RP_CALLBACK, browser, extra: { acr_values: TWO } });
    expect(again.interactionUrl).not.toContain(RP_CALLBACK);
    expect(new URL(again.interactionUrl).pathname).toMatch(/^\/interaction\//);

    // After two factors, the session answers a 2fa request without asking anything.
    const stepped = await signInWithTwoFactors({ acr_values: TWO });
    const reuse = await startAuthorization({ issuer: tenant.issuer, clientId: tenant.client.id, clientSecret: tenant.secret, redirectUri: RP_CALLBACK, browser: stepped.browser, extra: { acr_values: TWO, prompt: "none" } });
    const callback = new URL(reuse.interactionUrl);
    expect(callback.href.startsWith(RP_CALLBACK)).toBe(true);
    expect(callback.searchParams.get("code")).toBeTruthy();
    expect((await redeem(reuse, callback)).claims()!.acr).toBe(TWO);
  });
});
