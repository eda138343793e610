import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/server";
import { anonymousActor, userActor, type RequestMeta } from "../../auth/actors";
import { finishSignIn } from "../finish";
import { clearPending, primaryOf, type PendingSecondFactor } from "../pending";
import { secondFactorLimits } from "../../auth/two-factor/service";
import { inTransaction } from "../../context";
import type { InteractionContext } from "../interaction";
import { consumeEach, refundEach, type LimitName } from "../../rate-limit/limiters";
import type { Services } from "../../services";
import type { PublicKeyCredentialCreationOptionsJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import {
  AuthenticationResponseSchema,
  checkAssertion,
  countPasskeys,
  finishRegistration,
  parseCredential,
  passkeyKind,
  RegistrationResponseSchema,
  startAssertion,
  startRegistration,
  type AssertionClaim,
  type ChallengeBinding,
} from "../../passkeys/service";

/**
 * A passkey at the sign-in pages: as the primary method (a complete proof, like a magic link:
 * no second factor follows) and as the second factor after a password. Both end through
 * finishSignIn in the transaction that records the passkey's use. Every failure is the same
 * generic answer; the audit entry says why.
 */

const loginBinding = (ic: InteractionContext): ChallengeBinding => ({ purpose: "login", subject: ic.uid });
const secondFactorBinding = (ic: InteractionContext): ChallengeBinding => ({ purpose: "second-factor", subject: ic.uid });

/** Options for a discoverable-credential sign-in at this interaction (a new challenge replaces an earlier one). */
export function passkeyLoginOptions(services: Services, ic: InteractionContext): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return startAssertion(services, loginBinding(ic));
}

export type PasskeyStep = { kind: "signed_in"; redirectTo: string } | { kind: "failed" } | { kind: "rate_limited"; retryAfterSeconds: number };

/** The credential a browser posted (form field `credential`, JSON), checked; a right one signs in. */
export async function signInWithPasskey(services: Services, ic: InteractionContext, input: { credential: unknown; meta: RequestMeta }): Promise<PasskeyStep> {
  const limits: Array<[LimitName, string | null]> = [["passkeyLoginIp", input.meta.ip]];
  const limit = await consumeEach(services.limits, limits);
  if (!limit.allowed) return { kind: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  const response = parseCredential(AuthenticationResponseSchema, input.credential);
  const claim: AssertionClaim = response
    ? await checkAssertion(services, { organizationId: ic.organization.id, binding: loginBinding(ic), response: response as unknown as AuthenticationResponseJSON })
    : { ok: false, reason: "invalid_signature" };
  const kind = claim.ok ? claim.kind : "hwk";
  const { result, redirectTo } = await finishSignIn(services, { at: ic, method: "passkey", passkey: kind, meta: input.meta }, (complete) =>
    inTransaction(services, claim.ok ? userActor(claim.userId, input.meta) : anonymousActor(input.meta), async (ctx) => {
      const fail = (reason: string) => {
        ctx.audit({
          eventType: "auth.login.failure",
          organizationId: ic.organization.id,
          ...(claim.userId ? { targetType: "user", targetId: claim.userId } : {}),
          data: { method: "passkey", reason, clientId: ic.client.id },
        });
        return false;
      };
      if (!claim.ok) return fail(claim.reason);
      // A deactivated account signs in with nothing; the credential stays for when it comes back.
      const user = await ctx.db.user.findFirst({ where: { id: claim.userId, organizationId: ic.organization.id, status: "active" }, select: { id: true } });
      if (!user) return fail("inactive");
      if (!(await claim.take(ctx.db))) return fail("replayed");
      await complete(ctx, claim.userId);
      return true;
    }),
  );
  if (!redirectTo || !result) return { kind: "failed" };
  // The limit counts failures: a right passkey gives its point back.
  await refundEach(services.limits, limits);
  return { kind: "signed_in", redirectTo };
}

// ---------------------------------------------------------------------------------------------
// The second factor

/** Options for the user's own passkeys at the second-factor step, or null when the step does not offer a passkey. */
export async function passkeySecondFactorOptions(services: Services, ic: InteractionContext, pending: PendingSecondFactor): Promise<PublicKeyCredentialRequestOptionsJSON | null> {
  if (!pending.plan.methods.includes("passkey")) return null;
  return startAssertion(services, secondFactorBinding(ic), pending.userId);
}

/** A passkey as the second factor after a password: audited `auth.2fa.verified`/`failed` with method passkey. */
export async function verifyPasskeySecondFactor(
  services: Services,
  ic: InteractionContext,
  pending: PendingSecondFactor,
  input: { credential: unknown; meta: RequestMeta },
): Promise<PasskeyStep | { kind: "not_offered" }> {
  if (!pending.plan.methods.includes("passkey")) return { kind: "not_offered" };
  const limits = secondFactorLimits(input.meta.ip, pending.userId);
  const limit = await consumeEach(services.limits, limits);
  if (!limit.allowed) return { kind: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  const response = parseCredential(AuthenticationResponseSchema, input.credential);
  const claim: AssertionClaim = response
    ? await checkAssertion(services, {
        organizationId: ic.organization.id,
        binding: secondFactorBinding(ic),
        response: response as unknown as AuthenticationResponseJSON,
        userId: pending.userId,
      })
    : { ok: false, reason: "invalid_signature" };
  const kind = claim.ok ? claim.kind : "hwk";
  const { result, redirectTo } = await finishSignIn(services, { at: ic, ...primaryOf(pending), secondFactor: "passkey", passkey: kind, meta: input.meta }, (complete) =>
    inTransaction(services, userActor(pending.userId, input.meta), async (ctx) => {
      const reason = !claim.ok ? claim.reason : (await claim.take(ctx.db)) ? null : "replayed";
      ctx.audit({
        eventType: reason ? "auth.2fa.failed" : "auth.2fa.verified",
        organizationId: ic.organization.id,
        targetType: "user",
        targetId: pending.userId,
        data: reason ? { userId: pending.userId, method: "passkey", reason } : { userId: pending.userId, method: "passkey" },
      });
      if (reason) return false;
      await complete(ctx, pending.userId);
      return true;
    }),
  );
  if (!redirectTo || !result) return { kind: "failed" };
  await refundEach(services.limits, limits);
  await clearPending(services.store, ic.uid);
  return { kind: "signed_in", redirectTo };
}

// ---------------------------------------------------------------------------------------------
// Enrollment at the step that requires a passkey

/**
 * Under `required_passkey` a person without a passkey registers one at the step, right after a
 * right password, as TOTP is enrolled at the step under `required_totp`: the new passkey is the
 * second factor of this sign-in (audited `account.passkey.added` and `auth.2fa.enrolled`).
 */
const enrollBinding = (ic: InteractionContext): ChallengeBinding => ({ purpose: "register", subject: `sign-in:${ic.uid}` });

/** Whether the step asks this person to register a passkey first (the plan wants one and they have none). */
export async function passkeyEnrollmentDue(services: Services, pending: PendingSecondFactor): Promise<boolean> {
  return pending.plan.methods.includes("passkey") && (await countPasskeys(services.db.prisma, pending.userId)) === 0;
}

async function ownerAtStep(services: Services, ic: InteractionContext, pending: PendingSecondFactor) {
  const user = await services.db.prisma.user.findUniqueOrThrow({ where: { id: pending.userId }, select: { id: true, email: true, givenName: true, familyName: true } });
  return { organization: ic.organization, user };
}

export async function passkeyEnrollmentOptions(services: Services, ic: InteractionContext, pending: PendingSecondFactor): Promise<PublicKeyCredentialCreationOptionsJSON | null> {
  if (!(await passkeyEnrollmentDue(services, pending))) return null;
  const started = await startRegistration(services, await ownerAtStep(services, ic, pending), enrollBinding(ic));
  return started.ok ? started.options : null;
}

export async function enrollPasskeyAtSignIn(
  services: Services,
  ic: InteractionContext,
  pending: PendingSecondFactor,
  input: { credential: unknown; name: string; meta: RequestMeta },
): Promise<PasskeyStep | { kind: "not_offered" }> {
  if (!(await passkeyEnrollmentDue(services, pending))) return { kind: "not_offered" };
  const limits = secondFactorLimits(input.meta.ip, pending.userId);
  const limit = await consumeEach(services.limits, limits);
  if (!limit.allowed) return { kind: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  const response = parseCredential(RegistrationResponseSchema, input.credential);
  if (!response) return { kind: "failed" };
  const registered = await finishRegistration(services, await ownerAtStep(services, ic, pending), enrollBinding(ic), {
    response: response as unknown as RegistrationResponseJSON,
    name: input.name,
    meta: input.meta,
  });
  if (!registered.ok) return { kind: "failed" };
  const { redirectTo } = await finishSignIn(
    services,
    { at: ic, ...primaryOf(pending), secondFactor: "passkey", passkey: passkeyKind(registered.passkey.deviceType), meta: input.meta },
    (complete) =>
      inTransaction(services, userActor(pending.userId, input.meta), async (ctx) => {
        ctx.audit({ eventType: "auth.2fa.enrolled", organizationId: ic.organization.id, targetType: "user", targetId: pending.userId, data: { method: "passkey" } });
        await complete(ctx, pending.userId);
      }),
  );
  await refundEach(services.limits, limits);
  await clearPending(services.store, ic.uid);
  return redirectTo ? { kind: "signed_in", redirectTo } : { kind: "failed" };
}
