import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, createUserInState, freshTotpCode, openLoginPage, openRecovery, redeem, signInWithPassword, submitCode, toCallback, type Step } from "./helpers";

/**
 * The ID token says how the user signed in (`amr`, RFC 8176), and when (`auth_time`): a relying
 * party that needs a second factor can check it.
 */
let porta: TestPorta;

beforeAll(async () => {
  porta = await startTestPorta();
});
afterAll(async () => {
  await porta?.stop();
});

type CodeStep = Extract<Step, { html: string }>;

it("carries amr and auth_time: pwd for a password, pwd+otp+mfa with TOTP, pwd+kba+mfa with a recovery code; the login counts once complete", async () => {
  const tenant = await createTenant(porta, "optional");

  const plain = await createUserInState(porta, tenant, "none");
  const page = await openLoginPage(tenant);
  const tokens = await redeem(page, await toCallback(page.browser, await signInWithPassword(page, plain.email)));
  const claims = tokens.claims()!;
  expect(claims.amr).toEqual(["pwd"]);
  expect(Math.abs(Number(claims.auth_time) - Date.now() / 1000)).toBeLessThan(120);

  const enrolled = await createUserInState(porta, tenant, "totp");
  const totpPage = await openLoginPage(tenant);
  const totpStep = (await signInWithPassword(totpPage, enrolled.email)) as CodeStep;
  expect(totpStep.kind).toBe("totp");
  // The password alone is not a login yet: statistics and lastLoginAt wait for the second factor.
  const audit = (eventType: string) => porta.services.db.prisma.auditEntry.findMany({ where: { eventType, targetId: enrolled.id } });
  const lastLogin = async () => (await porta.services.db.prisma.user.findUniqueOrThrow({ where: { id: enrolled.id } })).lastLoginAt;
  expect(await audit("auth.login.success")).toEqual([]);
  expect(await audit("auth.password.verified")).toHaveLength(1);
  expect(await lastLogin()).toBeNull();
  const verified = await submitCode(totpPage.browser, totpStep, await freshTotpCode(porta, enrolled.id, enrolled.totpSecret!));
  const [success] = await audit("auth.login.success");
  expect(success?.data).toMatchObject({ method: "password", secondFactor: "totp", clientId: tenant.client.id });
  expect(await lastLogin()).not.toBeNull();
  expect((await redeem(totpPage, await toCallback(totpPage.browser, verified.step!))).claims()!.amr).toEqual(["pwd", "otp", "mfa"]);

  const recoveryPage = await openLoginPage(tenant);
  const recovery = (await openRecovery(recoveryPage.browser, await signInWithPassword(recoveryPage, enrolled.email))) as CodeStep;
  const used = await submitCode(recoveryPage.browser, recovery, enrolled.recoveryCodes![0]!);
  expect((await redeem(recoveryPage, await toCallback(recoveryPage.browser, used.step!))).claims()!.amr).toEqual(["pwd", "kba", "mfa"]);
});
