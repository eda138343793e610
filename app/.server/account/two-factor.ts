import { TWO_FACTOR_POLICIES, type TwoFactorPolicy } from "~/schemas/two-factor-policy";
import type { RequestMeta } from "../auth/actors";
import { requireTwoFactorStatus, type TwoFactorStatus } from "../auth/two-factor/admin";
import { beginTotpEnrollment, enrollTotp, newRecoveryCodes, storeRecoveryCodes, type EnrollmentOutcome } from "../auth/two-factor/service";
import type { Context, StagedContext } from "../context";
import { invalidateUser } from "../directory/users";
import { maySubmitSensitive, type SignedIn } from "./session";

/**
 * A person's own second factors on the account page, within the organization's policy. The
 * rules are one pure function (`twoFactorChoices`) that the page shows and every action checks,
 * so the page never offers what the server would refuse.
 */
export interface TwoFactorChoices {
  policy: TwoFactorPolicy;
  status: TwoFactorStatus;
  /** Whether a sign-in with a password asks for a second factor. */
  active: boolean;
  mayAddTotp: boolean;
  mayRemoveTotp: boolean;
  /** Email codes: the person's choice under `optional`; always on under the policies that use them. */
  emailCodes: "on" | "off" | "required" | "unused";
  mayToggleEmail: boolean;
  mayRegenerateCodes: boolean;
}

export function twoFactorChoices(policy: TwoFactorPolicy, status: TwoFactorStatus): TwoFactorChoices {
  const totp = status.totp.enrolled;
  // Under required_totp and required_passkey, sign-ins ask for that factor only: email codes are not used.
  const emailCodes = policy === "optional" ? (status.emailOtp.enabled ? "on" : "off") : policy === "required_totp" || policy === "required_passkey" ? "unused" : "required";
  const active = policy !== "optional" || totp || status.emailOtp.enabled;
  return {
    policy,
    status,
    active,
    // Under required_email sign-ins ask for an email code whatever else is set up (the spec's rule).
    mayAddTotp: !totp && policy !== "required_email" && policy !== "required_passkey",
    // The policy that requires an authenticator keeps the last one.
    mayRemoveTotp: totp && policy !== "required_totp",
    emailCodes,
    mayToggleEmail: policy === "optional",
    mayRegenerateCodes: active,
  };
}

export async function readTwoFactorChoices(ctx: Context, access: SignedIn): Promise<TwoFactorChoices> {
  const stored = access.organization.twoFactorPolicy;
  const policy = TWO_FACTOR_POLICIES.find((p) => p === stored) ?? "optional";
  const status = await requireTwoFactorStatus(ctx, access.user.id);
  return twoFactorChoices(policy, status);
}

/** `step_up`: the sign-in is too old for a sensitive change; the person proves who they are again first. */
export type TwoFactorRefusal = { ok: false; reason: "not_allowed" | "step_up" };

async function allowed(ctx: Context, access: SignedIn, rule: (choices: TwoFactorChoices) => boolean): Promise<TwoFactorChoices | TwoFactorRefusal> {
  if (!maySubmitSensitive(access)) return { ok: false, reason: "step_up" };
  const choices = await readTwoFactorChoices(ctx, access);
  return rule(choices) ? choices : { ok: false, reason: "not_allowed" };
}

const refused = (value: TwoFactorChoices | TwoFactorRefusal): value is TwoFactorRefusal => "ok" in value;

/**
 * Starts (or resumes) setting up an authenticator app: the secret to show, or a refusal. The
 * enrollment itself is auth/two-factor's, shared with the sign-in step that requires it.
 */
export async function startTotpSetup(ctx: Context<"encrypter">, access: SignedIn): Promise<{ ok: true; secret: string } | TwoFactorRefusal> {
  const choices = await allowed(ctx, access, (c) => c.mayAddTotp);
  if (refused(choices)) return choices;
  return { ok: true, secret: await beginTotpEnrollment(ctx, access.user.id) };
}

export async function finishTotpSetup(
  staged: StagedContext<"limits" | "encrypter" | "passwords">,
  access: SignedIn,
  code: string,
  meta: RequestMeta,
): Promise<EnrollmentOutcome | TwoFactorRefusal> {
  const choices = await allowed(staged, access, (c) => c.mayAddTotp);
  if (refused(choices)) return choices;
  return enrollTotp(staged, { userId: access.user.id, organizationId: access.organization.id, code, meta });
}

/**
 * Removes the authenticator app. When nothing else asks for a second factor afterwards (email
 * codes off under `optional`), the recovery codes go too: they would protect nothing.
 */
export async function removeTotp(staged: StagedContext, access: SignedIn): Promise<{ ok: true } | TwoFactorRefusal> {
  const choices = await allowed(staged, access, (c) => c.mayRemoveTotp);
  if (refused(choices)) return choices;
  const userId = access.user.id;
  await staged.transaction(async (ctx) => {
    await ctx.db.totpCredential.deleteMany({ where: { userId } });
    if (!twoFactorChoices(choices.policy, { ...choices.status, totp: { enrolled: false, pending: false, enrolledAt: null } }).active) {
      await ctx.db.recoveryCode.deleteMany({ where: { userId } });
    }
    ctx.audit({ eventType: "account.2fa.removed", organizationId: access.organization.id, targetType: "user", targetId: userId, data: { method: "totp" } });
  });
  return { ok: true };
}

/** Turns email codes on or off (only the person's choice under `optional`). */
export async function setEmailCodes(staged: StagedContext<"cache">, access: SignedIn, enabled: boolean): Promise<{ ok: true } | TwoFactorRefusal> {
  const choices = await allowed(staged, access, (c) => c.mayToggleEmail);
  if (refused(choices)) return choices;
  const userId = access.user.id;
  await staged.transaction(async (ctx) => {
    await ctx.db.user.update({ where: { id: userId }, data: { emailOtpEnabled: enabled, version: { increment: 1 } } });
    if (!enabled && !choices.status.totp.enrolled) await ctx.db.recoveryCode.deleteMany({ where: { userId } });
    ctx.afterCommit(() => invalidateUser(ctx.cache, userId));
    ctx.audit({
      eventType: enabled ? "account.2fa.email_enabled" : "account.2fa.email_disabled",
      organizationId: access.organization.id,
      targetType: "user",
      targetId: userId,
      data: {},
    });
  });
  return { ok: true };
}

/** Ten new recovery codes replacing the old ones, shown once. */
export async function regenerateRecoveryCodes(staged: StagedContext<"passwords">, access: SignedIn): Promise<{ ok: true; codes: string[] } | TwoFactorRefusal> {
  const choices = await allowed(staged, access, (c) => c.mayRegenerateCodes);
  if (refused(choices)) return choices;
  const userId = access.user.id;
  // Hashed (Argon2id, slow) before the transaction, which only swaps the rows.
  const { codes, hashes } = await newRecoveryCodes(staged.passwords);
  await staged.transaction(async (ctx) => {
    await storeRecoveryCodes(ctx.db, userId, hashes);
    ctx.audit({ eventType: "account.2fa.recovery_codes_regenerated", organizationId: access.organization.id, targetType: "user", targetId: userId, data: {} });
  });
  return { ok: true, codes };
}
