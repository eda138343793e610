import type { AuthenticationResponseJSON, PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import { userActor, type RequestMeta } from "../../auth/actors";
import { consumeEach, refundEach } from "../../rate-limit/limiters";
import {
  AuthenticationResponseSchema,
  beginRegistration,
  checkAssertion,
  completeRegistration,
  countPasskeys,
  parseCredential,
  passkeyKind,
  RegistrationResponseSchema,
  startAssertion,
  type AssertionClaim,
  type ChallengeBinding,
} from "../../passkeys/service";
import { secondFactorLimits } from "../code-factor";
import type { InteractionContext } from "../interaction";
import type { MethodContext, SecondFactor, SignInContext } from "../method";
import type { PendingSecondFactor } from "../pending";

/**
 * A passkey as the second factor after a first one (audited `auth.2fa.verified`/`failed` with
 * method passkey), and its registration at the step: under `required_passkey` a person without a
 * passkey registers one right after a right password, as TOTP is enrolled at the step under
 * `required_totp`; the new passkey is then the second factor of this sign-in (audited
 * `account.passkey.added` and `auth.2fa.enrolled`).
 */
export const passkeySecondFactor: SecondFactor = { kind: "second", factor: "passkey" };

export type PasskeyFactorStep = { kind: "signed_in"; redirectTo: string } | { kind: "failed" } | { kind: "rate_limited"; retryAfterSeconds: number } | { kind: "not_offered" };

const secondFactorBinding = (ic: InteractionContext): ChallengeBinding => ({ purpose: "second-factor", subject: ic.uid });
const enrollBinding = (ic: InteractionContext): ChallengeBinding => ({ purpose: "register", subject: `sign-in:${ic.uid}` });

/** Options for the user's own passkeys at the second-factor step, or null when the step does not offer a passkey. */
export async function passkeySecondFactorOptions(ctx: SignInContext<"config" | "store">, ic: InteractionContext, pending: PendingSecondFactor): Promise<PublicKeyCredentialRequestOptionsJSON | null> {
  if (!pending.plan.methods.includes("passkey")) return null;
  return startAssertion(ctx, secondFactorBinding(ic), pending.userId);
}

/** The signed credential checked against the user's own passkeys; a right one proves the second factor. */
export async function verifyPasskeySecondFactor(
  ctx: MethodContext<"config" | "store" | "limits">,
  ic: InteractionContext,
  pending: PendingSecondFactor,
  input: { credential: unknown; meta: RequestMeta },
): Promise<PasskeyFactorStep> {
  if (!pending.plan.methods.includes("passkey")) return { kind: "not_offered" };
  const limits = secondFactorLimits(input.meta.ip, pending.userId);
  const limit = await consumeEach(ctx.limits, limits);
  if (!limit.allowed) return { kind: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  const response = parseCredential(AuthenticationResponseSchema, input.credential);
  const claim: AssertionClaim = response
    ? await checkAssertion(ctx, {
        organizationId: ic.organization.id,
        binding: secondFactorBinding(ic),
        response: response as unknown as AuthenticationResponseJSON,
        userId: pending.userId,
      })
    : { ok: false, reason: "invalid_signature" };
  const kind = claim.ok ? claim.kind : "hwk";
  const { value: proved, redirectTo } = await ctx.prove(userActor(pending.userId, input.meta), async (tx) => {
    const reason = !claim.ok ? claim.reason : (await claim.take(tx.db)) ? null : "replayed";
    tx.audit({
      eventType: reason ? "auth.2fa.failed" : "auth.2fa.verified",
      organizationId: ic.organization.id,
      targetType: "user",
      targetId: pending.userId,
      data: reason ? { userId: pending.userId, method: "passkey", reason } : { userId: pending.userId, method: "passkey" },
    });
    if (reason) return { value: false, proof: null };
    return { value: true, proof: { userId: pending.userId, passkey: kind } };
  });
  if (!redirectTo || !proved) return { kind: "failed" };
  await refundEach(ctx.limits, limits);
  return { kind: "signed_in", redirectTo };
}

/** Whether the step asks this person to register a passkey first (the plan wants one and they have none). */
export async function passkeyEnrollmentDue(ctx: SignInContext, pending: PendingSecondFactor): Promise<boolean> {
  return pending.plan.methods.includes("passkey") && (await countPasskeys(ctx.db, pending.userId)) === 0;
}

async function ownerAtStep(ctx: SignInContext, ic: InteractionContext, pending: PendingSecondFactor) {
  const user = await ctx.db.user.findUniqueOrThrow({ where: { id: pending.userId }, select: { id: true, email: true, givenName: true, familyName: true } });
  return { organization: ic.organization, user };
}

export async function passkeyEnrollmentOptions(ctx: SignInContext<"config" | "store">, ic: InteractionContext, pending: PendingSecondFactor): Promise<PublicKeyCredentialCreationOptionsJSON | null> {
  if (!(await passkeyEnrollmentDue(ctx, pending))) return null;
  const started = await beginRegistration(ctx, await ownerAtStep(ctx, ic, pending), enrollBinding(ic));
  return started.ok ? started.options : null;
}

/** The registered passkey is the second factor: `auth.2fa.enrolled` and the sign-in commit together. */
export async function enrollPasskeyAtSignIn(
  ctx: MethodContext<"config" | "store" | "limits">,
  ic: InteractionContext,
  pending: PendingSecondFactor,
  input: { credential: unknown; name: string; meta: RequestMeta },
): Promise<PasskeyFactorStep> {
  if (!(await passkeyEnrollmentDue(ctx, pending))) return { kind: "not_offered" };
  const limits = secondFactorLimits(input.meta.ip, pending.userId);
  const limit = await consumeEach(ctx.limits, limits);
  if (!limit.allowed) return { kind: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  const response = parseCredential(RegistrationResponseSchema, input.credential);
  if (!response) return { kind: "failed" };
  const registered = await completeRegistration(ctx, await ownerAtStep(ctx, ic, pending), enrollBinding(ic), {
    response: response as unknown as RegistrationResponseJSON,
    name: input.name,
    meta: input.meta,
  });
  if (!registered.ok) return { kind: "failed" };
  const { redirectTo } = await ctx.prove(userActor(pending.userId, input.meta), async (tx) => {
    tx.audit({ eventType: "auth.2fa.enrolled", organizationId: ic.organization.id, targetType: "user", targetId: pending.userId, data: { method: "passkey" } });
    return { value: null, proof: { userId: pending.userId, passkey: passkeyKind(registered.passkey.deviceType) } };
  });
  await refundEach(ctx.limits, limits);
  return redirectTo ? { kind: "signed_in", redirectTo } : { kind: "failed" };
}
